"""A job's TensorBoard: alice opens it from a finished demo job's Artifacts tab, and
TensorBoard's own page, served through the dashboard in a new tab, draws the run's curves,
every request it makes under the job's path answered."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.e2e.conftest import SCREENSHOTS, sign_in

RESNET = "/jobs/team-cv/mpijob/resnet50-imagenet/"


def test_alice_opens_tensorboard_for_a_finished_run(page, live_dashboard, screenshot):
    sign_in(page, live_dashboard, "alice", RESNET + "?tab=artifacts")
    page.get_by_role("button", name="Open TensorBoard").click()
    link = page.get_by_role("link", name=re.compile(r"^TensorBoard for resnet50-imagenet"))
    expect(link).to_be_visible(timeout=60000)
    screenshot("tensorboard-link")
    with page.context.expect_page() as opening:
        link.click()
    board = opening.value
    refused = []
    prefix = live_dashboard + RESNET + "tensorboard/p/"
    board.on("response", lambda r: r.url.startswith(prefix) and r.status >= 400
             and refused.append(f"{r.request.method} {r.url} {r.status}"))
    expect(board).to_have_url(re.compile(re.escape(prefix)))
    for tag in ("train/loss", "train/accuracy", "train/learning_rate"):
        expect(board.get_by_text(tag, exact=True).first).to_be_visible(timeout=60000)
    board.wait_for_load_state("networkidle")
    assert refused == []
    SCREENSHOTS.mkdir(exist_ok=True)
    board.screenshot(path=str(SCREENSHOTS / "tensorboard-page.png"), full_page=True)
