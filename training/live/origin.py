"""The websocket's Origin check: a socket is accepted only from the dashboard's own pages.

What Django's CSRF check asks of a form, asked of a socket: the Origin header must be the
very origin the request was made to (scheme, host and port: `https://dashboard.apps.example`
behind the TLS router, as SECURE_PROXY_SSL_HEADER tells; `http://127.0.0.1:8000` locally),
with a host of ALLOWED_HOSTS, or one of CSRF_TRUSTED_ORIGINS exactly. A page served from
another port or scheme of the same host is another origin: its socket is refused, though the
browser would send the person's cookie with it.
"""

from __future__ import annotations

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host


def _headers(scope: dict) -> dict[str, str]:
    return {bytes(k).decode("latin-1").lower(): bytes(v).decode("latin-1")
            for k, v in scope.get("headers") or []}


def _secure(scope: dict, headers: dict[str, str]) -> bool:
    if scope.get("scheme") in ("wss", "https"):
        return True
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy:
        name, value = proxy
        header = name.removeprefix("HTTP_").replace("_", "-").lower()
        return headers.get(header, "").split(",")[0].strip() == value
    return False


def allowed(scope: dict) -> bool:
    headers = _headers(scope)
    origin = headers.get("origin", "").strip().lower()
    host = headers.get("host", "").strip().lower()
    if not origin or not host:
        return False
    if origin in (o.lower() for o in settings.CSRF_TRUSTED_ORIGINS):
        return True
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    own = f"{'https' if _secure(scope, headers) else 'http'}://{host}"
    return origin == own


class SameOriginValidator:
    """ASGI middleware: websockets from another origin are refused before anything else."""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope.get("type") == "websocket" and not allowed(scope):
            return await WebsocketDenier.as_asgi()(scope, receive, send)
        return await self.application(scope, receive, send)
