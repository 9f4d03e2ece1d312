"""Findings of the outside attack run, checked end to end against daphne and simcluster."""

from __future__ import annotations

import re
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


def test_a_deleted_jobs_open_page_says_so_and_offers_no_actions(page, live_dashboard,
                                                                e2e_cluster):
    import uuid

    from playwright.sync_api import expect

    from tests.training_jobs import Jobs, mpijob

    jobs = Jobs(e2e_cluster.api_client("alice"), "team-nlp")
    name = f"e2e-gone-{uuid.uuid4().hex[:5]}"
    jobs.create(mpijob(name, workers=1, run_seconds=2000))
    try:
        sign_in(page, live_dashboard, "alice", f"/jobs/team-nlp/mpijob/{name}/")
        actions = page.get_by_role("group", name="Job actions")
        actions.get_by_text("Actions", exact=True).click()  # the menu of the other actions
        expect(actions.get_by_role("link", name="Delete")).to_be_visible()
        expect(page.locator("#live-socket")).to_have_attribute("data-live-state",
                                                               re.compile("open|live"))
        jobs.delete(name)
        expect(page.get_by_role("alert")).to_contain_text(f"The job {name} was deleted",
                                                          timeout=30_000)
        expect(page.locator("#job-header-status")).to_contain_text("Deleted")
        for action in ("Delete", "Clone", "Retry", "Export YAML"):
            expect(page.get_by_role("link", name=action)).to_have_count(0)
        expect(page.get_by_role("button", name="Suspend")).to_have_count(0)
    finally:
        jobs.cleanup()
