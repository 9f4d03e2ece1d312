"""A person's request forwarded to their job's TensorBoard, and its answer streamed back.

What passes: GET and HEAD; POST only to TensorBoard's read-only queries that its own page
sends as forms (POST_PATHS), with TensorBoard's own anti-forgery header (`X-XSRF-Protected:
1`, which a form of another site cannot send) and a body of at most MAX_BODY_BYTES. Of the
request, only the headers TensorBoard needs (never the dashboard's cookies or an
Authorization header); of the answer, only content headers (never Set-Cookie, nor a
hop-by-hop header). The answer is streamed in chunks (an async stream under ASGI, so daphne
sends each as it comes) and cut at MAX_RESPONSE_BYTES; the upstream has CONNECT_SECONDS to
answer and READ_SECONDS between chunks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from urllib.parse import urlsplit

import requests
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

POST_PATHS = ("/data/plugin/timeseries/timeSeries", "/data/plugin/timeseries/imageData",
              "/data/plugin/scalars/scalars_multirun", "/data/plugin/hparams/experiment",
              "/data/plugin/hparams/session_groups", "/data/plugin/hparams/metric_evals")
MAX_BODY_BYTES = 1024 * 1024
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
CONNECT_SECONDS, READ_SECONDS = 5.0, 60.0
CHUNK = 64 * 1024
REQUEST_HEADERS = ("Accept", "Accept-Language", "Content-Type", "If-None-Match",
                   "If-Modified-Since", "X-XSRF-Protected")
RESPONSE_HEADERS = ("Content-Type", "Cache-Control", "ETag", "Last-Modified", "Expires",
                    "Content-Disposition", "Content-Security-Policy", "X-Content-Type-Options")


class NotForwarded(Exception):
    """A request the proxy does not pass on; `status` and the message say why."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def may_forward(request: HttpRequest, rest: str) -> None:
    """NotForwarded unless the request is one the proxy passes (see the module)."""
    if request.method in ("GET", "HEAD"):
        return
    if request.method != "POST" or not ("/" + rest).endswith(POST_PATHS):
        raise NotForwarded("method", 405)
    if request.headers.get("X-XSRF-Protected") != "1":
        raise NotForwarded("xsrf", 403)
    if int(request.headers.get("Content-Length") or 0) > MAX_BODY_BYTES:
        raise NotForwarded("too-big", 413)


def _chunks(upstream: requests.Response) -> Iterator[bytes]:
    sent = 0
    try:
        for chunk in upstream.iter_content(CHUNK):
            sent += len(chunk)
            if sent > MAX_RESPONSE_BYTES:
                return
            yield chunk
    finally:
        upstream.close()


async def _achunks(upstream: requests.Response) -> AsyncIterator[bytes]:
    """The same, for an ASGI server (which would read a plain iterator whole first): each
    chunk read in a worker thread."""
    chunks = _chunks(upstream)
    try:
        while True:
            chunk = await sync_to_async(next, thread_sensitive=False)(chunks, None)
            if chunk is None:
                return
            yield chunk
    finally:
        await sync_to_async(chunks.close, thread_sensitive=False)()


def forward(request: HttpRequest, upstream_base: str) -> HttpResponse:
    """`request` (its path and query as they are: TensorBoard runs with the same path
    prefix) sent to `upstream_base`, the answer streamed."""
    headers = {h: request.headers[h] for h in REQUEST_HEADERS if h in request.headers}
    headers["Accept-Encoding"] = "identity"
    body = request.body[:MAX_BODY_BYTES] if request.method == "POST" else None
    upstream = requests.request(request.method or "GET", upstream_base + request.get_full_path(),
                                headers=headers, data=body, stream=True, allow_redirects=False,
                                timeout=(CONNECT_SECONDS, READ_SECONDS))
    body = _achunks(upstream) if isinstance(request, ASGIRequest) else _chunks(upstream)
    response = StreamingHttpResponse(body, status=upstream.status_code)
    for name in RESPONSE_HEADERS:
        if name in upstream.headers:
            response[name] = upstream.headers[name]
    location = upstream.headers.get("Location")
    if location:  # TensorBoard's own redirects stay on the dashboard
        parts = urlsplit(location)
        response["Location"] = parts.path + (f"?{parts.query}" if parts.query else "")
    return response
