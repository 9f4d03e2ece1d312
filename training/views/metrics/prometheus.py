"""`/metrics`: the dashboard's own metrics for Prometheus (see training/monitoring/exposition.py).

Not behind sign-in (Prometheus has no session): open in the demo, restricted in production
by METRICS_BEARER_TOKEN and/or METRICS_ALLOWED_NETWORKS.

An async view so that, in a web process that runs the watch hub itself
(WATCHER_EMBEDDED), a scrape can start the hub on the server's event loop the way the
first websocket does: the job and quota numbers (and the job history) then do not wait
for someone to open a page.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed

from training.audit import client_ip
from training.monitoring import exposition as monitoring


@login_not_required
async def metrics(request: HttpRequest) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    refused = monitoring.refusal(client_ip(request), request.headers.get("Authorization", ""))
    if refused is not None:
        return monitoring.refused_response(*refused)
    if settings.WATCHER_EMBEDDED and isinstance(request, ASGIRequest):
        # under daphne this coroutine runs on the server's loop, as a consumer's would
        from training.live.hub import ensure_started
        ensure_started()
    body = await sync_to_async(monitoring.exposition)()
    response = HttpResponse(body, content_type=monitoring.CONTENT_TYPE)
    response["Cache-Control"] = "no-store"
    return response
