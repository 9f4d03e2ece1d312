"""Findings of the outside attack run, checked end to end against daphne and simcluster."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
import websocket

from tests.e2e.conftest import sign_in

SOCKET = "/ws/live/?ns=team-nlp"


def _cookie_header(page) -> str:
    return "; ".join(f"{c['name']}={c['value']}" for c in page.context.cookies())


def _opens(url: str, origin: str, cookie: str) -> bool:
    try:
        sock = websocket.create_connection(url, origin=origin, cookie=cookie, timeout=10)
    except websocket.WebSocketBadStatusException:
        return False
    except websocket.WebSocketException:
        return False
    try:
        sock.settimeout(10)
        frame = sock.recv()  # an accepted socket sends the page's state
        return bool(frame)
    except websocket.WebSocketException:
        return False
    finally:
        sock.close()


@pytest.mark.parametrize("foreign", ["http://127.0.0.1:9999", "https://127.0.0.1",
                                     "http://localhost:1"])
def test_a_page_of_another_origin_cannot_open_alices_socket(page, live_dashboard, foreign):
    sign_in(page, live_dashboard, "alice")
    cookie = _cookie_header(page)
    url = "ws://" + urlsplit(live_dashboard).netloc + SOCKET
    assert _opens(url, live_dashboard, cookie)  # her own page may
    assert not _opens(url, foreign, cookie)
