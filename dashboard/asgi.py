"""ASGI entry point: HTTP through Django; websockets (live updates) through Channels.

Websockets must come from the dashboard's own origin (the Origin header's scheme, host and
port, as the CSRF check asks of forms: training/live/origin.py; another page, even on another
port of the same host, cannot open a socket with the person's cookie) and carry the session
cookie (the consumer acts with the signed-in person's token). training/live/consumers.py
describes the protocol.
"""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from training.live.origin import SameOriginValidator  # noqa: E402
from training.live.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter({
    "http": django_asgi_app,
    "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(
        websocket_urlpatterns))),
})
