"""Several jobs at once from the list: alice ticks two, suspends them with one
confirmation and reads a result for each (issue 26 item 2)."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import sign_in
from tests.training_jobs import Jobs, mpijob


@pytest.fixture
def two_jobs(e2e_cluster):
    run = uuid.uuid4().hex[:6]
    with e2e_cluster.api_client("alice") as api:
        jobs = Jobs(api, "team-nlp")
        names = [f"tick-{i}-{run}" for i in (1, 2)]
        for name in names:
            jobs.create(mpijob(name, workers=1, run_seconds=3600,
                               annotations={"opendatahub.io/username": "alice"}))
        yield run, names, jobs
        jobs.cleanup()


def test_alice_suspends_two_ticked_jobs_with_one_confirmation(page, live_dashboard, two_jobs):
    run, names, _jobs = two_jobs
    sign_in(page, live_dashboard, "alice", f"/jobs/?project=team-nlp&q={run}")
    for name in names:
        page.get_by_role("checkbox", name=f"Select {name}").check()
    page.get_by_role("group", name="Ticked jobs").get_by_role("button", name="Suspend").click()
    expect(page.get_by_role("heading", name="Suspend 2 jobs?")).to_be_visible()
    for name in names:
        expect(page.get_by_role("list", name="The ticked jobs").get_by_text(name)).to_be_visible()
    confirm = page.get_by_role("button", name="Suspend jobs")
    confirm.focus()
    page.keyboard.press("Enter")  # from the keyboard
    expect(page.get_by_role("status").filter(has_text="2 jobs done")).to_have_count(1)
    results = page.get_by_role("table", name="Results: Suspend")
    for name in names:
        row = results.get_by_role("row").filter(has_text=name)
        expect(row).to_contain_text("Done")
        expect(row).to_contain_text("Suspended: its Workers are stopped until you resume it.")
    page.get_by_role("link", name="Back to the jobs").click()
    expect(page.get_by_role("row").filter(has_text=names[0])).to_contain_text("Suspended")


def test_a_tick_stays_when_a_new_job_makes_the_list_fetch_its_table_again(page, live_dashboard,
                                                                        two_jobs):
    run, names, jobs = two_jobs
    sign_in(page, live_dashboard, "alice", f"/jobs/?project=team-nlp&q={run}")
    first = page.get_by_role("checkbox", name=f"Select {names[0]}")
    first.check()
    # a third job of the same run: the page lacks it and fetches its table again
    jobs.create(mpijob(f"tick-3-{run}", workers=1, run_seconds=3600,
                       annotations={"opendatahub.io/username": "alice"}))
    expect(page.get_by_role("checkbox", name=f"Select tick-3-{run}")).to_be_visible()
    expect(first).to_be_checked()
    expect(page.get_by_role("checkbox", name=f"Select {names[1]}")).not_to_be_checked()
