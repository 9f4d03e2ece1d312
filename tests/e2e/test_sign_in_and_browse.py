"""What a data scientist does first: sign in, find a job, understand why it failed."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.e2e.conftest import sign_in


def test_alice_finds_the_oom_killed_worker(page, live_dashboard, screenshot):
    sign_in(page, live_dashboard, "alice")
    table = page.get_by_role("table", name="Training jobs")
    for name in ("bert-large-pretrain", "gpt2-finetune"):
        expect(table.get_by_role("link", name=name)).to_be_visible()
    screenshot("job-list")

    # the demo's TrainJobs fill the first page too: the MPIJobs alone fit on it
    page.get_by_label("Type").select_option(label="MPIJob")
    expect(page).to_have_url(re.compile(r"type=mpijob"))
    for name in ("gpt2-finetune", "resnet50-imagenet"):
        expect(table.get_by_role("link", name=name)).to_be_visible()

    table.get_by_role("link", name="gpt2-finetune").click()
    expect(page.get_by_role("heading", name="gpt2-finetune")).to_be_visible()
    workers = page.get_by_role("table", name="Launcher and Workers")
    oom_row = workers.get_by_role("row").filter(has_text="gpt2-finetune-worker-2")
    expect(oom_row).to_contain_text("OOMKilled")
    expect(oom_row).to_contain_text("Failed")
    screenshot("job-detail-failed")

    page.get_by_role("link", name="Events").click()
    # what happened, in words: each pod's start-up one line, the job's failure its own
    timeline = page.get_by_role("list", name="Timeline of events, oldest first")
    expect(timeline).to_contain_text("BackoffLimitExceeded")
    expect(timeline.get_by_role("listitem").filter(has_text="Worker 2 started")).to_have_count(1)
    # every row from the cluster, one disclosure away (opened with the keyboard)
    page.get_by_text("All events from the cluster").focus()
    page.keyboard.press("Enter")
    events = page.get_by_role("table", name="Events, newest first")
    expect(events).to_contain_text("BackoffLimitExceeded")
    # the OOM-killed worker's own events are there too, not only the job's
    worker_events = events.get_by_role("row").filter(has_text="Pod/gpt2-finetune-worker-2")
    expect(worker_events.first).to_be_visible()
    expect(worker_events.filter(has_text="Started")).to_have_count(1)
    screenshot("job-detail-events")


def test_bob_sees_no_team_nlp_job(page, live_dashboard):
    sign_in(page, live_dashboard, "bob")
    table = page.get_by_role("table", name="Training jobs")
    expect(table.get_by_role("link", name="bert-classifier-ddp")).to_be_visible()
    expect(page.get_by_text("gpt2-finetune")).to_have_count(0)
    expect(page.get_by_text("bert-large-pretrain")).to_have_count(0)

    page.goto(live_dashboard + "/jobs/team-nlp/mpijob/gpt2-finetune/")
    expect(page.get_by_role("heading", name="You don't have access to the project “team-nlp”")
           ).to_be_visible()


def test_alice_reads_the_log_of_one_worker(page, live_dashboard):
    sign_in(page, live_dashboard, "alice", "/jobs/team-nlp/mpijob/bert-large-pretrain/")
    page.get_by_role("link", name="Logs").click()
    log = page.get_by_role("log")
    expect(log).to_contain_text("Horovod rank 0/8")  # the Launcher's, shown first

    page.get_by_label("Show logs of").select_option("bert-large-pretrain-worker-3")
    expect(page).to_have_url(re.compile(r"tab=logs&pod=bert-large-pretrain-worker-3$"))
    expect(log).to_have_accessible_name("Log of Worker 3")
    expect(log).to_contain_text("Server listening on 0.0.0.0 port 22.")
    expect(log).not_to_contain_text("Horovod rank")
    expect(page.get_by_role("link", name="Download the whole log")).to_have_attribute(
        "href", re.compile(r"/logs/bert-large-pretrain-worker-3/download/$"))


def test_the_window_title_follows_the_tab_and_the_wizards_step(page, live_dashboard):
    sign_in(page, live_dashboard, "alice", "/jobs/team-nlp/mpijob/gpt2-finetune/")
    expect(page).to_have_title(re.compile(r"^Overview · gpt2-finetune · "))
    page.get_by_role("link", name="Events", exact=True).click()
    expect(page).to_have_title(re.compile(r"^Events · gpt2-finetune · "))
    page.goto(live_dashboard + "/jobs/new/")
    page.get_by_role("button", name="Create an MPIJob").click()
    expect(page.get_by_role("heading", name="Configuration")).to_be_visible()
    expect(page).to_have_title(re.compile(r"^Configuration · Create a training job · "))
    page.get_by_label("Job name").fill("title-check")
    page.get_by_label("Training image").fill("quay.io/opendatahub/horovod:0.28.1-pytorch2.1")
    page.get_by_label("Command").fill("horovodrun -np 1 python /workspace/train.py")
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    expect(page).to_have_title(re.compile(r"^Resources · Create a training job · "))
