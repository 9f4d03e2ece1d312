"""Following logs as they are written: one worker, then every pod of a job interleaved.

What the simulated pods print (simcluster/node/training.py) is what real ones print: an MPI
Worker runs only sshd, whose log gains lines when the Launcher's mpirun connects to it at
the start of training ("Accepted publickey ...") and disconnects at the end ("Received
disconnect ..."); every rank's output travels back to the Launcher, which prints the epoch
lines. So "new lines arrive on worker-1" is seen at the end of a job's training, and a
steady stream of lines is seen on the Launcher.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import sign_in
from tests.training_jobs import Jobs, mpijob
from tests.waiting import wait_until

NS = "team-nlp"
SHORT = "logs-e2e-worker"  # training takes 300 s nominal: 15 s at the e2e cluster's speed 20
LONG = "logs-e2e-all"  # 3000 s nominal, an epoch line every ~0.25 s


@pytest.fixture(scope="module")
def running_jobs(e2e_cluster):
    jobs = Jobs(e2e_cluster.api_client("alice"), NS)
    jobs.create(mpijob(SHORT, workers=2, run_seconds=300,
                       annotations={"simcluster.io/epochs": "10"}))
    jobs.create(mpijob(LONG, workers=2, run_seconds=3000,
                       annotations={"simcluster.io/epochs": "300"}))
    for name in (SHORT, LONG):
        jobs.wait_condition(name, "Running", timeout=60)
    yield jobs
    jobs.cleanup()


def _open_logs(page, base: str, job: str) -> None:
    sign_in(page, base, "alice", f"/jobs/{NS}/mpijob/{job}/")
    page.get_by_role("link", name="Logs").click()
    expect(page.get_by_role("switch", name="Follow")).to_be_visible()


def test_alice_follows_worker_1_and_sees_new_lines_arrive(page, live_dashboard, running_jobs):
    _open_logs(page, live_dashboard, SHORT)
    page.get_by_label("Show logs of").select_option(f"{SHORT}-worker-1")
    log = page.get_by_role("log", name="Log of Worker 1")
    expect(log).to_contain_text("Server listening on 0.0.0.0 port 22.")
    expect(log).to_contain_text("Accepted publickey for root from ")  # mpirun connected
    follow = page.get_by_role("switch", name="Follow")
    expect(follow).to_be_checked()  # a running job's log is followed from the start
    expect(page.get_by_text("Following: new lines appear as they are written.")).to_be_visible()
    assert "Received disconnect" not in log.inner_text()  # training still runs

    # training ends: mpirun disconnects from the worker's sshd, which logs it, live
    expect(log).to_contain_text("Received disconnect from ", timeout=90_000)
    expect(log).to_contain_text("Disconnected from user root", timeout=30_000)
    lines = log.locator(".dash-log-line")
    texts = lines.all_inner_texts()
    assert sum("Accepted publickey" in t for t in texts) == 1  # nothing shown twice


def test_all_pods_interleaved_search_and_pause(page, live_dashboard, running_jobs, screenshot):
    _open_logs(page, live_dashboard, LONG)
    page.get_by_label("Show logs of").select_option(label="All (interleaved by time)")
    log = page.get_by_role("log", name="Log of all pods")
    expect(log).to_contain_text("[launcher] ")
    expect(log).to_contain_text("[worker-1] Server listening on 0.0.0.0 port 22.")

    # new epoch lines of the Launcher arrive while we look
    epoch = re.compile(r"\[launcher\] Epoch (\d+)/300")

    def newest_epoch() -> int:
        found = epoch.findall(log.inner_text())
        return max(map(int, found)) if found else 0
    first = newest_epoch()
    wait_until(lambda: newest_epoch() >= first + 2, 60, message=lambda: (
        f"two more epochs after {first}; socket "
        f"{page.locator('#live-socket').get_attribute('data-live-state')}; "
        f"log ends {log.inner_text()[-300:]!r}"))

    # search highlights what was typed (literal text, no regular expression)
    page.get_by_label("Search").fill("publickey for root")
    marks = log.locator("mark")
    expect(marks.first).to_have_text("publickey for root")
    expect(page.locator("#log-search-count")).to_have_text(re.compile(r"\d+ match"))
    page.get_by_label("Search").fill("(.*")  # would be a broken regex: just text here
    expect(page.locator("#log-search-count")).to_have_text("No matches")
    page.get_by_label("Search").fill("EPOCH")  # any case
    expect(marks.first).to_have_text(re.compile(r"^epoch$", re.I))

    # timestamps on
    page.get_by_text("Timestamps (UTC)", exact=True).click()  # the switch's label
    expect(page.get_by_role("switch", name="Timestamps (UTC)")).to_be_checked()
    expect(log.locator("time").first).to_be_visible()

    # reading further up pauses: new lines wait behind a button. A line that arrives just
    # as the person scrolls may take them back down (they were following): scroll up again
    resume = page.get_by_role("button", name=re.compile(r"Paused — \d+ new lines?"))

    def paused() -> bool:
        if not resume.is_visible():
            log.evaluate("el => { el.scrollTop = 0; el.dispatchEvent(new Event('scroll')); }")
        return resume.is_visible()
    wait_until(paused, 60, interval=1.0, message="the Paused button after scrolling up")
    wait_until(lambda: int(re.search(r"(\d+) new", resume.inner_text()).group(1)) > 0, 30,
               message="new lines held while paused")
    screenshot("job-logs-live")
    resume.click()
    expect(resume).to_be_hidden()
    at_bottom = log.evaluate("el => el.scrollHeight - el.scrollTop - el.clientHeight < 10")
    assert at_bottom

    # the level filter keeps only what matches its pattern
    page.get_by_label("Level").select_option(label="WARN and ERROR")
    expect(log).to_contain_text("Warning: Permanently added")
    shown = log.evaluate("el => Array.from(el.querySelectorAll('.dash-log-line'))"
                         ".filter(l => !l.hidden).map(l => l.className)")
    assert shown and all(re.search(r"--(warn|error)\b", c) for c in shown), shown
