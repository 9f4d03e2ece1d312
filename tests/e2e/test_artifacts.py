"""Artifacts: a finished demo job's page names what its run left on its volume, and its
Artifacts tab lists the files (read by a short-lived pod of the person's) and downloads one."""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect

from tests.e2e.conftest import sign_in

RESNET = "/jobs/team-cv/mpijob/resnet50-imagenet/"


def test_a_finished_jobs_page_shows_its_artifacts(page, live_dashboard, screenshot):
    sign_in(page, live_dashboard, "alice", RESNET)
    # the Overview's Status card, once the listing came back
    expect(page.get_by_text(re.compile(r"Artifacts: \d+ files"))).to_be_visible(timeout=30000)
    expect(page.get_by_text(re.compile(r"Newest checkpoint: checkpoint-\d+"))).to_be_visible()

    page.get_by_role("link", name="See the artifacts").click()
    expect(page).to_have_url(re.compile(r"tab=artifacts"))
    expect(page.get_by_role("heading", name="Newest checkpoint")).to_be_visible()
    table = page.get_by_role("table", name="/mnt/checkpoints/resnet50-imagenet")
    events = re.compile(r"^File: events\.out\.tfevents\.")
    expect(table.get_by_role("cell", name=events)).to_be_visible()
    expect(table.get_by_role("cell", name=re.compile(r"^File: checkpoint-\d+\/optimizer\.pt"))
           .first).to_be_visible()
    screenshot("artifacts-resnet50")

    with page.expect_download() as waiting:
        table.get_by_role("link", name="Download train_results.json").click()
    download = waiting.value
    assert download.suggested_filename == "train_results.json"
    assert json.loads(open(download.path()).read())["global_step"] > 0
