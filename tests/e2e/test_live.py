"""Live updates in the browser: pages change the moment the cluster does, without reloading.

The session's `live_dashboard` runs daphne with the in-memory channel layer, so the watch
hub is embedded (started by the first socket). Faults that need the server to go away
(restart, token expiry) use a daphne of this module's own, `own_dashboard`.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import uuid
from contextlib import closing
from pathlib import Path

import pytest
import requests
from playwright.sync_api import expect

from tests import simcluster_process
from tests.dashboard_support import register_redirect_uri
from tests.e2e.conftest import ROOT, sign_in
from tests.training_jobs import Jobs, mpijob
from tests.waiting import wait_until

NS = "team-nlp"
SLOW = 90_000  # ms: a deadline for what the cluster does at speed 20, not an expected duration
SECRET_KEY = "e2e-live-" + uuid.uuid4().hex


@pytest.fixture
def jobs(e2e_cluster):
    helper = Jobs(e2e_cluster.api_client("alice"), NS)
    yield helper
    helper.cleanup()


def _new_job(jobs: Jobs, prefix: str, run_seconds: int = 200, suspend: bool = False) -> str:
    """A small MPIJob (2 workers, no GPU) created as alice; ~run_seconds/20 s of training.

    Its image is big and on no node yet: pulling it keeps the job Pending a few seconds,
    long enough for a page to show it."""
    name = f"{prefix}-{uuid.uuid4().hex[:5]}"
    body = mpijob(name, workers=2, run_seconds=run_seconds,
                  runPolicy={"suspend": True} if suspend else {})
    image = f"quay.io/opendatahub/horovod:e2e-{name}"
    for spec in body["spec"]["mpiReplicaSpecs"].values():
        for container in spec["template"]["spec"]["containers"]:
            container["image"] = image
    jobs.create(body)
    return name


def _resume(jobs: Jobs, name: str) -> None:
    """Resume the job from outside the page (as `oc patch` would)."""
    jobs.patch(name, {"spec": {"runPolicy": {"suspend": False}}})


def _stay_on_page(page) -> None:
    """Mark the document: if the page reloads, the mark is gone."""
    page.evaluate("window.__notReloaded = true")


def _not_reloaded(page) -> bool:
    return page.evaluate("window.__notReloaded === true")


RECORD_STATUSES = """() => {
  // every status the header shows, in order, from now on
  window.__statuses = [];
  const note = () => {
    const label = document.querySelector("#job-header-status [data-status]");
    const value = label && label.dataset.status;
    const seen = window.__statuses;
    if (value && seen[seen.length - 1] !== value) seen.push(value);
  };
  note();
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true});
}"""


def _wait_live(page) -> None:
    # a deadline, not an expected duration: on a busy machine the hub may pause the page
    # once more while it settles after the cluster came back
    expect(page.locator("#live-socket")).to_have_attribute("data-live-state", "live",
                                                           timeout=SLOW)


# -- a new job, watched ------------------------------------------------------------------------
def test_alice_watches_a_new_job_run_without_reloading(page, live_dashboard, jobs, screenshot):
    # created suspended, so that the page is open before anything happens
    name = _new_job(jobs, "live-watch", suspend=True)
    sign_in(page, live_dashboard, "alice", f"/jobs/{NS}/mpijob/{name}/")
    _stay_on_page(page)
    page.evaluate(RECORD_STATUSES)
    status = page.locator("#job-header-status")
    expect(status).to_have_text("Suspended")
    _wait_live(page)

    _resume(jobs, name)
    expect(status).to_have_text("Pending", timeout=SLOW)

    expect(status).to_have_text("Running", timeout=SLOW)
    replicas = page.get_by_role("table", name="Launcher and Workers")
    expect(replicas.get_by_role("row").filter(has_text=f"{name}-worker-1")).to_contain_text(
        "Running", timeout=SLOW)
    announcer = page.locator("#live-announcer")
    expect(announcer).to_contain_text(f"Job {name} is now Running", timeout=SLOW)
    # the header's action follows the job: Suspend now, no longer Resume
    expect(page.get_by_role("button", name="Suspend")).to_be_visible()
    expect(page.get_by_role("button", name="Resume")).to_have_count(0)
    screenshot("job-live")

    expect(status).to_have_text("Succeeded", timeout=SLOW)
    expect(announcer).to_contain_text(f"Job {name} is now Succeeded")
    expect(page.get_by_role("button", name="Suspend")).to_have_count(0)
    expect(page.locator("#job-overview-state")).to_contain_text("Succeeded")
    assert page.evaluate("window.__statuses") == ["Suspended", "Pending", "Running",
                                                  "Succeeded"]
    assert _not_reloaded(page)
    expect(page.locator("#live-status")).to_have_text("")


def test_a_job_that_finishes_no_longer_shows_time_left(page, live_dashboard, jobs):
    # ~15 s of training at speed 20, ten epochs logged: the Overview can tell the time left
    name = _new_job(jobs, "live-eta", run_seconds=300)
    jobs.wait_condition(name, "Running", timeout=90)
    sign_in(page, live_dashboard, "alice", f"/jobs/{NS}/mpijob/{name}/")
    overview = page.locator("#job-overview-state")
    time_left = overview.get_by_text(re.compile(r"^About .+ left$"))

    def shows_time_left() -> bool:  # drawn from the launcher's log, once two epochs are in
        if time_left.count():
            return True
        page.reload()
        return False
    wait_until(shows_time_left, 90, interval=1.0, message="the Overview's time left")
    expect(overview.get_by_role("progressbar")).to_have_count(1)
    _stay_on_page(page)
    _wait_live(page)

    expect(page.locator("#job-header-status")).to_have_text("Succeeded", timeout=SLOW)
    # the pushed status takes the bar and its "about Xs left" with it, without a reload
    expect(time_left).to_have_count(0)
    expect(overview.get_by_role("progressbar")).to_have_count(0)
    expect(overview).to_contain_text("Succeeded")
    assert _not_reloaded(page)


def test_the_list_row_changes_status_live(page, live_dashboard, jobs):
    name = _new_job(jobs, "live-row", suspend=True)
    sign_in(page, live_dashboard, "alice", f"/jobs/?project={NS}")
    _stay_on_page(page)
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name=name, exact=True))
    expect(row).to_contain_text("Suspended")
    _wait_live(page)
    link = row.get_by_role("link", name=name, exact=True)
    link.focus()  # a keyboard user on the row: the pushes that replace it keep the focus
    _resume(jobs, name)
    expect(row).to_contain_text("Running", timeout=SLOW)
    expect(page.locator("#live-announcer")).to_contain_text(f"Job {name} is now Running")
    expect(link).to_be_focused()
    # its menu, drawn when it was suspended, now fits a running job
    row.get_by_label(f"Actions for {name}").click()
    expect(row.get_by_role("button", name="Suspend")).to_be_visible()
    expect(row.get_by_role("button", name="Resume")).to_be_hidden()
    expect(row.get_by_role("link", name="Retry")).to_be_hidden()
    # a filter swaps the table in place: the new table opens its own socket
    page.get_by_label("Type").select_option(label="MPIJob")
    expect(page).to_have_url(re.compile(r"type=mpijob"))
    _wait_live(page)
    expect(row).to_contain_text("Succeeded", timeout=SLOW)
    row.get_by_label(f"Actions for {name}").click()
    expect(row.get_by_role("link", name="Retry")).to_be_visible()
    expect(row.get_by_role("button", name="Suspend")).to_be_hidden()
    assert _not_reloaded(page)


def test_the_list_is_sent_only_its_rows_and_counts_the_others(page, live_dashboard, jobs):
    """The socket carries the rows the page shows; a job it does not show that changes is
    counted, and the table fetched again (or filtered) gets its own rows pushed, on the
    same socket."""
    shown = _new_job(jobs, "live-shown", suspend=True)
    hidden = _new_job(jobs, "live-hidden", suspend=True)
    sign_in(page, live_dashboard, "alice", f"/jobs/?project={NS}&q={shown}")
    _stay_on_page(page)
    _wait_live(page)
    page.evaluate("window.__socket = document.getElementById('live-socket')")
    notice = page.locator("#job-list-off-page")
    expect(notice).to_be_empty()
    _resume(jobs, hidden)
    expect(notice).to_contain_text(re.compile(r"\d+ jobs? not shown on this page changed\."),
                                   timeout=SLOW)
    expect(page.get_by_role("link", name=hidden, exact=True)).to_have_count(0)
    # the table is listed again, with the page's filters (the count starts again)
    with page.expect_response(lambda r: f"/jobs/?project={NS}&q={shown}" in r.url) as listed:
        page.get_by_role("button", name="Refresh the list").click()
    assert listed.value.ok
    # another filter: the same socket, told the new table's rows, pushes the hidden job's
    page.get_by_label("Search by name").fill(hidden)
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name=hidden, exact=True))
    expect(row).to_be_visible()
    jobs.patch(hidden, {"spec": {"runPolicy": {"suspend": True}}})
    expect(row).to_contain_text("Suspended", timeout=SLOW)
    assert page.evaluate("window.__socket === document.getElementById('live-socket')")
    assert _not_reloaded(page)


def test_a_job_created_after_the_list_loaded_appears(page, live_dashboard, jobs, screenshot):
    prefix = f"live-new-{uuid.uuid4().hex[:4]}"
    sign_in(page, live_dashboard, "alice", f"/jobs/?project={NS}&q={prefix}")
    _stay_on_page(page)
    expect(page.get_by_role("heading", name="No jobs match these filters")).to_be_visible()
    _wait_live(page)  # no row, yet the project is followed
    page.evaluate("window.__socket = document.getElementById('live-socket')")

    other = _new_job(jobs, "live-other", suspend=True)  # the search leaves this one out
    name = _new_job(jobs, prefix, suspend=True)
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name=name, exact=True))
    expect(row).to_contain_text("Suspended", timeout=30_000)
    expect(page.locator("#live-announcer")).to_contain_text(f"Job {name} was created.")
    # fetched with the page's filters: the other job, made first, is not in the table
    expect(page.get_by_role("link", name=other, exact=True)).to_have_count(0)
    expect(page.locator("#job-table")).to_contain_text("1 job")
    screenshot("list-new-job")
    assert _not_reloaded(page)
    # the same socket goes on (the new table follows the same project), and the new row
    # follows its job
    assert page.evaluate("window.__socket === document.getElementById('live-socket')")
    expect(page.locator("#live-socket")).to_have_attribute("data-live-state", "live")
    _resume(jobs, name)
    expect(row).to_contain_text("Running", timeout=SLOW)
    assert page.url.endswith(f"/jobs/?project={NS}&q={prefix}")


def test_a_job_created_while_the_list_was_away_appears_when_it_reconnects(page, live_dashboard,
                                                                         jobs):
    """The snapshot on reconnecting tells when each job was created: one made after the page
    listed its jobs, and missing from it, makes the page fetch its table again."""
    sockets = []

    def through(ws) -> None:
        server = ws.connect_to_server()

        def to_page(message) -> None:
            # the hub's news of a new job is lost, as if the page had been away then
            if not (isinstance(message, str) and message.startswith('{"type": "refresh"')
                    and '"created": ""' in message):
                ws.send(message)

        server.on_message(to_page)
        sockets.append((ws, server))

    page.route_web_socket(re.compile(r"/ws/live/"), through)
    prefix = f"live-away-{uuid.uuid4().hex[:4]}"
    sign_in(page, live_dashboard, "alice", f"/jobs/?project={NS}&q={prefix}")
    _stay_on_page(page)
    _wait_live(page)
    name = _new_job(jobs, prefix, suspend=True)
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name=name, exact=True))
    jobs.wait_condition(name, "Suspended")
    expect(row).to_have_count(0)
    ws, server = sockets[-1]
    server.close()
    ws.close(code=1012)  # the server restarts: the page reconnects by itself
    expect(row).to_contain_text("Suspended", timeout=30_000)
    expect(page.locator("#live-announcer")).to_contain_text(f"Job {name} was created.")
    assert len(sockets) >= 2 and _not_reloaded(page)


# -- the Events tab and its filter -------------------------------------------------------------
def _event_types(page) -> list[str]:
    return page.eval_on_selector_all("#job-event-rows tr[data-event-type]",
                                     "rows => rows.map(r => r.dataset.eventType)")


def _line_types(page) -> list[str]:
    """The types of the timeline's lines (the Events tab's list in words)."""
    return page.eval_on_selector_all("#job-event-timeline li[data-event-type]",
                                     "lines => lines.map(l => l.dataset.eventType)")


def _show_the_clusters_rows(page) -> None:
    page.locator("#job-events-raw > summary").click()


def test_the_events_snapshot_keeps_to_the_tab_s_filter(page, live_dashboard):
    # gpt2-finetune's events are of both types; the page asks for the warnings
    sign_in(page, live_dashboard, "alice",
            f"/jobs/{NS}/mpijob/gpt2-finetune/?tab=events&type=Warning")
    shown, lines = _event_types(page), _line_types(page)
    assert shown and set(shown) == {"Warning"}
    assert lines and set(lines) == {"Warning"}
    _wait_live(page)  # the snapshot (every event, for every viewer) came before "ready"
    assert _event_types(page) == shown
    assert _line_types(page) == lines
    expect(page.locator("#job-events-count")).to_have_text(str(len(shown)))


def test_pushed_events_keep_to_the_tab_s_filter(page, live_dashboard, jobs):
    name = _new_job(jobs, "live-events", suspend=True)
    sign_in(page, live_dashboard, "alice", f"/jobs/{NS}/mpijob/{name}/?tab=events&type=Warning")
    _stay_on_page(page)
    _wait_live(page)
    status = page.locator("#job-header-status")
    _resume(jobs, name)
    expect(status).to_have_text("Running", timeout=SLOW)
    assert "Normal" not in _event_types(page)  # their rows were pushed, and left out
    assert "Normal" not in _line_types(page)  # and their lines
    empty = page.locator("#job-events-empty")
    if not _event_types(page):
        expect(empty).to_contain_text("No events")
    if not _line_types(page):
        expect(page.locator("#job-event-timeline")).to_contain_text("No events")

    page.get_by_label("Event type").select_option("Normal")
    expect(page).to_have_url(re.compile(r"type=Normal"))
    _show_the_clusters_rows(page)
    normal = page.locator("#job-event-rows tr[data-event-type=Normal]")
    expect(normal.first).to_be_visible()
    expect(status).to_have_text("Succeeded", timeout=SLOW)
    succeeded = page.locator("#job-event-rows tr").filter(has_text="MPIJobSucceeded")
    expect(succeeded).to_have_count(1, timeout=30_000)  # pushed on top, once
    assert set(_event_types(page)) == {"Normal"}
    assert set(_line_types(page)) == {"Normal"}
    expect(empty).to_have_count(0)
    ids = page.eval_on_selector_all("#job-event-rows tr", "rows => rows.map(r => r.id)")
    assert len(ids) == len(set(ids))  # no event twice
    assert _not_reloaded(page)


def test_events_are_pushed_once_the_events_tab_is_open(page, live_dashboard, jobs):
    """The socket of a page on the Overview is sent no Events rows; opening the Events tab
    tells it, and new events arrive there live."""
    name = _new_job(jobs, "live-tab", suspend=True)
    sign_in(page, live_dashboard, "alice", f"/jobs/{NS}/mpijob/{name}/")
    _stay_on_page(page)
    _wait_live(page)
    page.evaluate("window.__socket = document.getElementById('live-socket')")
    page.get_by_role("link", name="Events", exact=True).click()
    expect(page).to_have_url(re.compile(r"tab=events"))
    rows = page.locator("#job-event-rows tr[data-event-type]")
    expect(rows.first).to_be_attached()
    _resume(jobs, name)
    expect(page.locator("#job-header-status")).to_have_text("Running", timeout=SLOW)
    # pushed to the tab opened later: a Worker's start-up as one line in words...
    started = page.locator("#job-event-timeline li").filter(
        has_text=re.compile(r"Worker \d started \("))
    expect(started.first).to_be_visible(timeout=30_000)
    # ...and the cluster's rows behind it
    _show_the_clusters_rows(page)
    expect(page.locator("#job-event-rows tr").filter(has_text="Started").first).to_be_visible()
    assert page.evaluate("window.__socket === document.getElementById('live-socket')")
    assert _not_reloaded(page)


def test_a_pushed_event_takes_the_place_of_its_row(page, live_dashboard):
    """A push of an event the page shows already (its count changed, or a snapshot just
    before showed it) replaces its row: the event is never shown twice."""
    sockets = []

    def through(ws) -> None:  # the page's socket, to the real server, and ours to speak on
        ws.connect_to_server()
        sockets.append(ws)

    page.route_web_socket(re.compile(r"/ws/live/"), through)
    sign_in(page, live_dashboard, "alice", f"/jobs/{NS}/mpijob/gpt2-finetune/?tab=events")
    _wait_live(page)
    rows = page.locator("#job-event-rows tr[data-event-type]")
    count = rows.count()
    oldest = rows.last
    uid = oldest.get_attribute("id")
    again = re.sub(r'(data-label="Count"[^>]*>)\d+<', r"\g<1>99<",
                   oldest.evaluate("r => r.outerHTML"))
    sockets[-1].send(f'<tbody hx-swap-oob="afterbegin:#job-event-rows">{again}</tbody>')
    expect(rows.first).to_have_id(uid)
    expect(rows.first.locator("td[data-label=Count]")).to_have_text("99")
    expect(page.locator(f"#{uid}")).to_have_count(1)
    expect(rows).to_have_count(count)


# -- ages and durations count on between pushes ------------------------------------------------
COUNTING = "#job-header-facts time[data-elapsed]"


def test_ages_and_durations_count_on_between_pushes(page, live_dashboard):
    sign_in(page, live_dashboard, "alice", f"/jobs/{NS}/mpijob/bert-large-pretrain/")
    _wait_live(page)  # the snapshot, which replaces the header's facts, came before "ready"
    times = page.locator(COUNTING)
    expect(times).to_have_count(2)  # Age, and Duration while it runs
    page.evaluate(f"document.querySelectorAll({COUNTING!r}).forEach(t => t.__mark = true)")
    before = times.all_text_contents()
    wait_until(lambda: times.all_text_contents()[1] != before[1], timeout=10,
               message="the duration to count on")
    # the same elements (no push replaced them), counting on in the same words
    assert page.evaluate(f"[...document.querySelectorAll({COUNTING!r})].every(t => t.__mark)")
    for text in times.all_text_contents():
        assert re.fullmatch(r"(\d+d \d+h \d+m|(\d+h )?(\d+m )?\d+s)", text), text


def test_a_finished_job_s_duration_stays_fixed(page, live_dashboard):
    sign_in(page, live_dashboard, "alice", f"/jobs/{NS}/mpijob/gpt2-finetune/")
    _wait_live(page)
    duration = page.locator("#job-header-facts time:not([data-elapsed])")
    expect(duration).to_have_attribute("datetime", re.compile(r"^PT\d+S$"))
    age = page.locator(COUNTING)
    fixed, age_before = duration.text_content(), age.text_content()
    wait_until(lambda: age.text_content() != age_before, timeout=10, message="the age to count")
    assert duration.text_content() == fixed


@pytest.mark.parametrize("seconds", [0, 59, 3599, 7205, 86399, 90061, 200000])
def test_the_page_counts_in_the_server_s_words(page, live_dashboard, seconds):
    from odh.training.durations import format_duration
    sign_in(page, live_dashboard, "alice", "/jobs/")
    page.evaluate("""(seconds) => {
      const time = document.createElement("time");
      time.id = "counted";
      time.setAttribute("data-elapsed", String(seconds));
      document.querySelector("main").appendChild(time);
    }""", seconds)
    counted = page.locator("#counted")
    expect(counted).not_to_have_text("", timeout=5_000)
    text = counted.text_content()
    assert text in {format_duration(seconds + d) for d in range(5)}, text


# -- who may follow what ---------------------------------------------------------------------
OPEN_SOCKET = """(url) => new Promise((resolve) => {
  const frames = [];
  const socket = new WebSocket(url);
  socket.onmessage = (e) => frames.push(e.data);
  socket.onclose = (e) => resolve({code: e.code, frames});
})"""


def test_bob_cannot_subscribe_to_a_team_nlp_job(page, live_dashboard):
    sign_in(page, live_dashboard, "bob")
    url = live_dashboard.replace("http://", "ws://") + \
        "/ws/live/?job=team-nlp/mpijob/bert-large-pretrain"
    result = page.evaluate(OPEN_SOCKET, url)
    assert result["code"] == 4403
    closing = json.loads(result["frames"][-1])
    assert closing == {"type": "closing", "code": 4403,
                       "reason": "You do not have access to team-nlp."}
    assert not any(f.startswith("<") for f in result["frames"])  # nothing of the job


# -- topology --------------------------------------------------------------------------------
def test_topology_groups_the_workers_by_node(page, live_dashboard, screenshot):
    sign_in(page, live_dashboard, "alice", f"/jobs/{NS}/mpijob/bert-large-pretrain/")
    page.get_by_role("link", name="Topology").click()
    expect(page).to_have_url(re.compile(r"tab=topology"))
    topology = page.locator("#job-topology")
    workers = topology.get_by_role("link", name=re.compile(r"^Worker \d+ "))
    expect(workers).to_have_count(8)
    expect(topology.get_by_role("link", name=re.compile(r"^Launcher "))).to_have_count(1)
    nodes = topology.get_by_role("heading", name=re.compile(r"^Node "))
    assert nodes.count() >= 1
    for i in range(nodes.count()):  # every group names a node of the demo cluster
        expect(nodes.nth(i)).to_contain_text(re.compile(r"gpu-a100-\d|cpu-\d"))
    expect(topology.get_by_role("link", name=re.compile(r"^Worker 7 "))).to_contain_text(
        "Running")
    _wait_live(page)
    screenshot("job-topology")


def test_the_failed_worker_stands_out(page, live_dashboard, screenshot):
    sign_in(page, live_dashboard, "alice", f"/jobs/{NS}/mpijob/gpt2-finetune/?tab=topology")
    card = page.get_by_role("link", name=re.compile(r"^Worker 2 "))
    expect(card).to_contain_text("Failed")
    expect(card).to_contain_text("OOMKilled")
    expect(card).to_have_class(re.compile("dash-topo-card--problem"))
    # the danger red, not the neutral grey (retried: the snapshot swaps the cards in on
    # connecting, and a colour read in mid-transition is neither)
    expect(card).to_have_css("border-top-color", "rgb(201, 25, 11)")
    screenshot("job-topology-failed")


def test_keyboard_tab_to_a_worker_and_enter_opens_its_logs(page, live_dashboard):
    sign_in(page, live_dashboard, "alice",
            f"/jobs/{NS}/mpijob/bert-large-pretrain/?tab=topology")
    page.get_by_role("link", name="Topology").focus()

    def focused_worker() -> str:
        page.keyboard.press("Tab")
        focused = page.evaluate("document.activeElement.id")
        return focused if re.fullmatch(r"topology-pod-.*-worker-\d+", focused) else ""

    pod = wait_until(focused_worker, timeout=30, interval=0,
                     message="a worker card to get the keyboard focus").removeprefix(
        "topology-pod-")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"tab=logs&pod={pod}$"))
    index = pod.rsplit("-", 1)[1]
    expect(page.get_by_role("log")).to_have_accessible_name(f"Log of Worker {index}")
    # focus is on the new panel's heading, not back at the top of the page
    heading = page.locator("#tab-heading")
    expect(heading).to_be_focused()
    expect(heading).to_have_text("Logs")
    # and a tab chosen with the keyboard does the same
    page.get_by_role("link", name="Events", exact=True).focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"tab=events"))
    expect(heading).to_have_text("Events")
    expect(heading).to_be_focused()


# -- faults: the server goes away, the token expires -------------------------------------------
class OwnDashboard:
    """A daphne of this module's own, that tests may stop and start on the same port."""

    def __init__(self, cluster, workdir: Path) -> None:
        self.port = simcluster_process.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.db = workdir / "db.sqlite3"
        self.log = workdir / "daphne.log"
        self.env = dict(os.environ,
                        DJANGO_SETTINGS_MODULE="dashboard.settings",
                        DATABASE_URL=f"sqlite:///{self.db}",
                        SECRET_KEY=SECRET_KEY,
                        CLUSTER_KUBECONFIG=str(cluster.kubeconfig("dashboard")),
                        OAUTH_CLIENT_ID="mpijob-dashboard",
                        OAUTH_CLIENT_SECRET="mpijob-dashboard-demo-secret",
                        ALLOWED_HOSTS="127.0.0.1,localhost",
                        LIVE_RECHECK_SECONDS="1")
        register_redirect_uri(cluster, f"{self.url}/oauth/callback/")
        subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
                       cwd=ROOT, env=self.env, check=True)
        self.proc: subprocess.Popen | None = None

    def start(self, **env: str) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port),
                 "dashboard.asgi:application"], cwd=ROOT, env={**self.env, **env}, stdout=log,
                stderr=subprocess.STDOUT)

        def up() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(self.log.read_text())
            try:
                return requests.get(self.url + "/healthz", timeout=1).status_code == 200
            except requests.ConnectionError:
                return False

        wait_until(up, 30, message="daphne to answer /healthz")

    def stop(self) -> None:
        """The server goes away at once, as a crashed or evicted pod does: no closing
        handshake (1006). (Sent SIGTERM, daphne sometimes waits for its request threads
        for a long while, which only made this test slow and flaky.)"""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def end_token_lifetime(self, session_key: str) -> None:
        """What the passing of the OAuth token's `expires_in` does to the session."""
        from django.contrib.sessions.serializers import JSONSerializer
        from django.core import signing

        salt = "django.contrib.sessions.SessionStore"
        with closing(sqlite3.connect(self.db)) as db, db:
            (data,) = db.execute("select session_data from django_session where session_key=?",
                                 (session_key,)).fetchone()
            session = signing.loads(data, key=SECRET_KEY, salt=salt, serializer=JSONSerializer)
            session["openshift"]["expires_at"] = time.time() - 1
            data = signing.dumps(session, key=SECRET_KEY, salt=salt, serializer=JSONSerializer,
                                 compress=True)
            db.execute("update django_session set session_data=? where session_key=?",
                       (data, session_key))


def _unreachable_kubeconfig(cluster, directory: Path) -> Path:
    """The dashboard's kubeconfig, pointing at a port nothing listens on."""
    import yaml

    config = yaml.safe_load(cluster.kubeconfig("dashboard").read_text())
    for entry in config["clusters"]:
        entry["cluster"]["server"] = f"https://127.0.0.1:{simcluster_process.free_port()}"
    path = directory / "kubeconfig-unreachable"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(scope="module")
def own_dashboard(live_dashboard, e2e_cluster, tmp_path_factory):
    # after live_dashboard: it sets the OAuth client's redirect URIs, this adds its own
    dashboard = OwnDashboard(e2e_cluster, tmp_path_factory.mktemp("own-dashboard"))
    dashboard.start()
    yield dashboard
    dashboard.stop()


def test_the_page_reconnects_after_the_server_restarts_and_catches_up(page, own_dashboard,
                                                                      jobs, screenshot):
    name = _new_job(jobs, "live-restart", run_seconds=2000)
    sign_in(page, own_dashboard.url, "alice", f"/jobs/{NS}/mpijob/{name}/")
    _stay_on_page(page)
    status = page.locator("#job-header-status")
    expect(status).to_have_text("Running", timeout=SLOW)
    _wait_live(page)
    page.evaluate("""() => { window.__closes = [];
      document.addEventListener("htmx:wsClose", (e) => window.__closes.push(e.detail.event.code));
    }""")

    own_dashboard.stop()
    notice = page.get_by_role("status").filter(has_text="Reconnecting")
    expect(notice).to_be_visible()
    screenshot("live-reconnecting")
    # the job changes while the page cannot hear about it
    jobs.patch(name, {"spec": {"runPolicy": {"suspend": True}}})
    jobs.wait_condition(name, "Suspended")
    own_dashboard.start()

    # back: the state sent first on reconnecting shows what happened meanwhile
    expect(status).to_have_text("Suspended", timeout=SLOW)
    expect(notice).to_have_count(0)
    _wait_live(page)
    assert _not_reloaded(page)
    # the server went away without a closing handshake (1006): the htmx extension's own
    # reconnects brought the page back
    assert 1006 in page.evaluate("window.__closes")
    # the Resume button came with the push (its form given the page's CSRF token): it works
    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_text(f"“{name}” is resuming.")).to_be_visible()
    expect(status).to_have_text(re.compile("Pending|Running"), timeout=SLOW)
    # leave the page here: its socket and timers end now, not in the context's teardown
    # (which has been seen to wait out pytest's timeout after this test)
    page.goto("about:blank")


def test_an_expired_token_sends_the_page_through_sign_in_and_back(page, own_dashboard):
    path = f"/jobs/{NS}/mpijob/bert-large-pretrain/"
    sign_in(page, own_dashboard.url, "alice", path)
    _stay_on_page(page)
    _wait_live(page)
    cookie = next(c for c in page.context.cookies() if c["name"] == "mpijob_dashboard_session")

    own_dashboard.end_token_lifetime(cookie["value"])
    # the socket closes with 4401 within a re-check; the page reloads, which signs in again
    # (OpenShift remembers alice for a while) and comes back here
    wait_until(lambda: not _safe_not_reloaded(page), timeout=60,
               message="the page to reload after the token expired")
    heading = page.get_by_role("heading", name="bert-large-pretrain")
    username = page.get_by_label("Username")
    expect(heading.or_(username)).to_be_visible(timeout=30_000)
    if username.is_visible():  # OpenShift asks again (it usually remembers her a while)
        username.fill("alice")
        page.get_by_label("Password").fill("alice")
        page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(re.escape(own_dashboard.url + path) + "$"), timeout=30_000)
    expect(heading).to_be_visible()
    _wait_live(page)
    new_cookie = next(c for c in page.context.cookies()
                      if c["name"] == "mpijob_dashboard_session")
    assert new_cookie["value"] != cookie["value"]  # a new session, with a new token


def _safe_not_reloaded(page) -> bool:
    try:
        return _not_reloaded(page)
    except Exception:  # navigating: the old document is gone
        return False


def _dashboard_kubeconfig(cluster, path: Path, token: str) -> None:
    """The dashboard's kubeconfig with this token, written at once (as the kubelet swaps
    a rotated service-account token in)."""
    import yaml

    config = yaml.safe_load(cluster.kubeconfig("dashboard").read_text())
    config["users"][0]["user"]["token"] = token
    fresh = path.with_suffix(".new")
    fresh.write_text(yaml.safe_dump(config))
    fresh.replace(path)


def test_the_page_says_updates_are_paused_while_the_hub_cannot_see_the_cluster(
        page, own_dashboard, e2e_cluster, tmp_path):
    # the dashboard's own token (the watch hub's) is refused; people's tokens still work, so
    # pages open and show the job, but the hub hears of no change
    kubeconfig = tmp_path / "kubeconfig-dashboard"
    _dashboard_kubeconfig(e2e_cluster, kubeconfig, "sha256~a-token-the-api-server-refuses")
    own_dashboard.stop()
    own_dashboard.start(CLUSTER_KUBECONFIG=str(kubeconfig))
    try:
        sign_in(page, own_dashboard.url, "alice", f"/jobs/{NS}/mpijob/bert-large-pretrain/")
        _stay_on_page(page)
        expect(page.locator("#job-header-status")).to_have_text("Running")
        notice = page.get_by_role("status").filter(has_text="Reconnecting")
        expect(notice).to_be_visible(timeout=60_000)
        expect(page.locator("#live-socket")).to_have_attribute("data-live-state",
                                                               "reconnecting")
        # the token works again (rotated by the kubelet): the hub sees, the page is live
        _dashboard_kubeconfig(e2e_cluster, kubeconfig, e2e_cluster.token("dashboard"))
        expect(notice).to_have_count(0, timeout=SLOW)
        _wait_live(page)
        expect(page.locator("#job-header-status")).to_have_text("Running")
        assert _not_reloaded(page)
    finally:
        own_dashboard.stop()
        own_dashboard.start()


def test_the_page_waits_out_an_unreachable_cluster(page, own_dashboard, e2e_cluster, tmp_path):
    path = f"/jobs/{NS}/mpijob/bert-large-pretrain/"
    sign_in(page, own_dashboard.url, "alice", path)
    _stay_on_page(page)
    _wait_live(page)
    page.evaluate("""() => { window.__closes = [];
      document.addEventListener("htmx:wsClose", (e) => window.__closes.push(e.detail.event.code));
    }""")

    # the dashboard comes back unable to reach the cluster: sockets open, then close with
    # 4503 ("try again"), which the page answers with its own reconnects and back-off
    own_dashboard.stop()
    own_dashboard.start(CLUSTER_KUBECONFIG=str(_unreachable_kubeconfig(e2e_cluster, tmp_path)))
    try:
        wait_until(lambda: 4503 in page.evaluate("window.__closes"), timeout=90,
                   message="the server to say the cluster cannot be reached")
        notice = page.get_by_role("status").filter(has_text="Reconnecting")
        expect(notice).to_be_visible()
    finally:  # the cluster is reachable again (and stays so for the next tests)
        own_dashboard.stop()
        own_dashboard.start()
    _wait_live(page)
    expect(notice).to_have_count(0)
    expect(page.locator("#job-header-status")).to_have_text("Running")
    assert _not_reloaded(page)
