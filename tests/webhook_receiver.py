"""A local HTTP server receiving webhook deliveries (127.0.0.1, a free port), for tests."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Quiet(BaseHTTPRequestHandler):
    """A handler that logs nothing; `self.server.received` keeps what the test wants."""

    def log_message(self, *args):
        pass


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.received = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def signed_by(secret: str) -> type[BaseHTTPRequestHandler]:
    """A receiver that checks each delivery's X-ODH-Signature (HMAC-SHA256 of the body with
    `secret`), as the README tells receivers to: it keeps (path, signed, JSON body) and
    answers 204, or 401 to a delivery not signed with the secret."""

    class Signed(Quiet):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
            signed = hmac.compare_digest(self.headers.get("X-ODH-Signature", ""), expected)
            self.server.received.append((self.path, signed, json.loads(body)))
            self.send_response(204 if signed else 401)
            self.end_headers()

    return Signed
