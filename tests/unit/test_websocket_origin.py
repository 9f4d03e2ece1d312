"""The websocket's Origin check (training/live/origin.py): scheme, host and port, as the CSRF
check asks of forms."""

from __future__ import annotations

import pytest

from training.live.origin import allowed


def _scope(origin: str | None, host: str | None = "dash.apps.example", scheme: str = "ws",
           **headers: str) -> dict:
    pairs = [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
    if origin is not None:
        pairs.append((b"origin", origin.encode()))
    if host is not None:
        pairs.append((b"host", host.encode()))
    return {"type": "websocket", "scheme": scheme, "headers": pairs}


@pytest.fixture(autouse=True)
def _hosts(settings):
    settings.ALLOWED_HOSTS = ["dash.apps.example", "127.0.0.1"]
    settings.CSRF_TRUSTED_ORIGINS = []


def test_the_dashboards_own_origin_is_accepted():
    assert allowed(_scope("http://dash.apps.example"))
    assert allowed(_scope("https://dash.apps.example", scheme="wss"))
    assert allowed(_scope("http://127.0.0.1:8000", host="127.0.0.1:8000"))


@pytest.mark.parametrize(("origin", "host", "scheme"), [
    ("http://127.0.0.1:9999", "127.0.0.1:8000", "ws"),   # another port
    ("https://127.0.0.1:8000", "127.0.0.1:8000", "ws"),  # another scheme
    ("http://dash.apps.example", "dash.apps.example", "wss"),
    ("http://evil.example", "evil.example", "ws"),       # a host not allowed
    ("null", "dash.apps.example", "ws"),
    (None, "dash.apps.example", "ws"),
    ("http://dash.apps.example", None, "ws"),
])
def test_any_other_origin_is_refused(origin, host, scheme):
    assert not allowed(_scope(origin, host, scheme))


def test_behind_the_tls_router_the_origin_is_https(settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert allowed(_scope("https://dash.apps.example", x_forwarded_proto="https"))
    assert not allowed(_scope("http://dash.apps.example", x_forwarded_proto="https"))


def test_a_trusted_origin_is_accepted_exactly(settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://console.example:8443"]
    assert allowed(_scope("https://console.example:8443"))
    assert not allowed(_scope("https://console.example"))
