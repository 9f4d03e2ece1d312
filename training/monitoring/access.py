"""Who may read /metrics, and runwatcher's own endpoint for it (with /healthz, /readyz).

Open when neither METRICS_BEARER_TOKEN nor METRICS_ALLOWED_NETWORKS is set; see
training/monitoring/exposition.py for the rules.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from django.conf import settings
from django.http import HttpResponse

from training.monitoring.collectors import CONTENT_TYPE, current_elector, current_hub, exposition

log = logging.getLogger("training.monitoring.exposition")


# -- who may read /metrics ------------------------------------------------------------------------
def _networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(n, strict=False) for n in settings.METRICS_ALLOWED_NETWORKS]


def refusal(address: str | None, authorization: str) -> tuple[int, str] | None:
    """(status, reason) when this request may not read the metrics; None when it may."""
    token = settings.METRICS_BEARER_TOKEN
    if token:
        scheme, _, presented = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
                presented.strip().encode(), token.encode()):
            return 401, "a valid bearer token is required"
    networks = _networks()
    if networks:
        try:
            ip = ipaddress.ip_address(address or "")
        except ValueError:
            return 403, "the client address is unknown"
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if not any(ip.version == n.version and ip in n for n in networks):
            return 403, "this address may not read the metrics"
    return None


def refused_response(status: int, reason: str) -> HttpResponse:
    response = HttpResponse(f"{reason}\n", status=status,
                            content_type="text/plain; charset=utf-8")
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
    return response


# -- runwatcher's own endpoint ------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    server_version = "mpijob-dashboard-runwatcher"

    def do_GET(self) -> None:  # http.server's name for it
        path = self.path.split("?", 1)[0]
        if path == "/healthz":
            self._reply(200, b"ok\n")
        elif path == "/readyz":
            hub = current_hub()
            elector = current_elector()
            if hub is not None and hub.running and hub.ready.is_set():
                self._reply(200, b"ready\n")
            elif elector is not None and not elector.leading.is_set() \
                    and not elector.lost.is_set():
                self._reply(200, b"standing by\n")  # a replica in waiting is healthy
            else:
                self._reply(503, b"not ready\n")
        elif path == "/metrics":
            refused = refusal(self.client_address[0], self.headers.get("Authorization", ""))
            if refused is not None:
                status, reason = refused
                extra = {"WWW-Authenticate": 'Bearer realm="metrics"'} \
                    if status == 401 else {}
                self._reply(status, f"{reason}\n".encode(), extra=extra)
                return
            from django.db import connections

            try:
                body = exposition()
            finally:
                # each request has its own thread, and so its own connection: close it
                connections.close_all()
            self._reply(200, body, CONTENT_TYPE)
        else:
            self._reply(404, b"not found\n")

    def _reply(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8",
               extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("metrics endpoint: " + format, *args)


class MetricsServer:
    """/metrics, /healthz and /readyz for runwatcher, on a port of its own. Each request
    gets a thread, so a slow scrape never holds up the probes."""

    def __init__(self, port: int, address: str = "0.0.0.0") -> None:
        # threads: a scrape waiting on the database must not hold up /healthz
        self.httpd = ThreadingHTTPServer((address, port), _Handler)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self._serve, daemon=True,
                                        name="metrics-http")

    def _serve(self) -> None:
        from django.db import connection

        try:
            self.httpd.serve_forever(poll_interval=0.5)
        finally:
            connection.close()

    def start(self) -> MetricsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)
