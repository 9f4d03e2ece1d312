"""Getting unstuck in the browser: the diagnosis card, its one-click fix, comparing runs,
and the hang warning, as alice meets them in the demo (through labels and roles)."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.e2e.conftest import sign_in

GPT2 = "/jobs/team-nlp/mpijob/gpt2-finetune/"
VIT = "/jobs/team-cv/mpijob/vit-huge-pretrain/"
HANG = "/jobs/team-nlp/mpijob/gpt-neox-hang/"


def _card(page):
    return page.locator("#job-diagnosis")


def test_the_oom_card_names_worker_2_and_its_fix_opens_the_wizard(page, live_dashboard,
                                                                   screenshot):
    sign_in(page, live_dashboard, "alice", GPT2)
    headline = page.get_by_role("heading", name=re.compile(
        "Worker 2 ran out of memory and was killed"))
    expect(headline).to_be_visible()
    card = _card(page)
    expect(card.get_by_text("Your configuration")).to_be_visible()
    expect(card.get_by_text("Affected: Worker 2")).to_be_visible()
    card.get_by_text("Evidence and details").click()
    expect(card.get_by_text("Memory request 48Gi, limit 48Gi.")).to_be_visible()
    expect(card.get_by_text(re.compile(r"Peak memory use [\d.]+Gi"))).to_be_visible()
    screenshot("diagnosis-oom-card")

    card.get_by_role("link", name="Clone with this fix").first.click()
    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    memory = page.get_by_label("Memory per worker")
    expect(memory).to_have_value("64Gi")
    expect(page.get_by_text(re.compile("Changed by the suggested fix"))).to_be_visible()
    screenshot("diagnosis-oom-fix-in-wizard")


def test_the_job_that_can_never_start_says_so_and_its_fix_fits(page, live_dashboard):
    sign_in(page, live_dashboard, "alice", VIT)
    expect(page.get_by_role("heading", name=re.compile(
        "This job can never start: each Worker asks for 12 GPUs and no node has that "
        "many"))).to_be_visible()
    _card(page).get_by_role("link", name="Clone with this fix").first.click()
    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    expect(page.get_by_label("GPUs per worker")).to_have_value("8")
    expect(page.get_by_label("Number of workers")).to_have_value("3")
    # the wizard's own resource check agrees: no node problem is left
    expect(page.get_by_text(re.compile("No node can run a Worker"))).to_have_count(0)


def test_compare_two_jobs_marks_the_memory_difference(page, live_dashboard, screenshot):
    sign_in(page, live_dashboard, "alice", "/jobs/?project=team-nlp")
    page.get_by_role("checkbox", name="Select gpt2-finetune").check()
    page.get_by_role("checkbox", name="Select bert-large-pretrain").check()
    page.get_by_role("button", name="Compare selected").click()
    expect(page.get_by_role("heading", name="Compare jobs", exact=True)).to_be_visible()
    memory = page.get_by_role("row", name=re.compile("Memory per worker"))
    expect(memory).to_contain_text("(differs)")
    expect(memory).to_contain_text("48Gi")
    expect(memory).to_contain_text("64Gi")
    slots = page.get_by_role("row", name=re.compile("^Slots per worker"))
    expect(slots).not_to_contain_text("(differs)")
    screenshot("diagnosis-compare")


def test_a_hung_job_warns_of_a_possible_hang(page, live_dashboard, screenshot):
    sign_in(page, live_dashboard, "alice", HANG)
    expect(page.get_by_role("heading", name=re.compile("Possible hang: no new log line"))
           ).to_be_visible()
    card = _card(page)
    expect(card.get_by_text("Your code")).to_be_visible()
    screenshot("diagnosis-hang")
    card.get_by_role("button", name="Dismiss this hint for this job").click()
    expect(page.get_by_role("heading", name=re.compile("Possible hang"))).to_have_count(0)
