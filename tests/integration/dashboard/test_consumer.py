"""The live-updates websocket (training/live/consumers.py) against the demo cluster.

Sockets are opened with channels' WebsocketCommunicator on the real ASGI application (origin
check, session cookie, URL router), as a browser tab would: an Origin header and the
session cookie of a person signed in like the OAuth callback does.

No pytest-asyncio (its loops clash with Playwright's in one session): each test's
coroutine runs on a `LoopThread`, the stand-in for daphne's event loop. The watch hub is
not started here (WATCHER_EMBEDDED=false); tests send the hub's group messages themselves.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from kubernetes import client as k8s

from tests.dashboard_support import sign_in
from tests.integration.hub.conftest import LoopThread
from training import permissions

HOST = "127.0.0.1:8000"
ORIGIN = f"http://{HOST}"
BERT = "team-nlp/mpijob/bert-large-pretrain"
WAIT = 30  # seconds any one frame may take (reads from simcluster): a deadline, not a duration


@pytest.fixture(scope="module")
def loop():
    thread = LoopThread()
    yield thread
    thread.close()


@pytest.fixture(autouse=True)
def _live_settings(settings):

    settings.WATCHER_EMBEDDED = False
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    permissions.ANSWERS.clear()
    yield
    permissions.ANSWERS.clear()


@pytest.fixture
def cookie_of(transactional_db, demo_cluster, settings):
    """cookie_of("alice") -> a Cookie header value of a fresh signed-in session."""
    from django.test import Client

    def make(username: str, token: str | None = None, expires_in: float = 3600) -> str:
        browser = Client()
        sign_in(browser, demo_cluster, username, token=token)
        if expires_in != 3600:
            session = browser.session
            session["openshift"] = {**session["openshift"],
                                    "expires_at": time.time() + expires_in}
            session.save()
        name = settings.SESSION_COOKIE_NAME
        return f"{name}={browser.cookies[name].value}"

    return make


class Tab:
    """One browser tab's socket: frames received so far, the close code if closed.

    Open through the `open_tab` fixture, which ends every socket after the test."""

    def __init__(self, loop: LoopThread, query: str, cookie: str | None,
                 origin: str | None = ORIGIN) -> None:
        from dashboard.asgi import application

        headers = [(b"host", HOST.encode())]  # what a browser sends with every request
        if origin:
            headers.append((b"origin", origin.encode()))
        if cookie:
            headers.append((b"cookie", cookie.encode()))
        self.loop = loop
        self.comm = WebsocketCommunicator(application, f"/ws/live/?{query}", headers=headers)
        self.frames: list[str] = []
        self.close_code: int | None = None
        self.accepted, _ = loop.run(self.comm.connect(timeout=WAIT))

    def next(self, timeout: float = WAIT) -> str | None:
        """The next text frame; None once the socket is closed."""
        if self.close_code is not None:
            return None
        out = self.loop.run(self.comm.receive_output(timeout), timeout + 10)
        if out["type"] == "websocket.close":
            self.close_code = out.get("code", 1000)
            return None
        self.frames.append(out["text"])
        return out["text"]

    def json_frames(self) -> list[dict[str, Any]]:
        return [json.loads(f) for f in self.frames if f.startswith("{")]

    def until(self, predicate, timeout: float = WAIT) -> str:
        """Read frames until one satisfies `predicate` (fails if the socket closes first)."""
        while True:
            frame = self.next(timeout)
            assert frame is not None, f"closed with {self.close_code}; got {self.frames}"
            if predicate(frame):
                return frame

    def until_ready(self) -> dict:
        return json.loads(self.until(lambda f: f.startswith('{"type": "ready"')))

    def until_closed(self, timeout: float = WAIT) -> int:
        while self.next(timeout) is not None:
            pass
        assert self.close_code is not None
        return self.close_code

    def send(self, data: Any) -> None:
        text = data if isinstance(data, str) else json.dumps(data)
        self.loop.run(self.comm.send_to(text_data=text))

    def closing(self) -> dict:
        return next(m for m in self.json_frames() if m["type"] == "closing")

    def done(self) -> None:
        """The tab goes away (the server's side of the socket ends too)."""
        self.loop.run(self.comm.disconnect(timeout=WAIT), WAIT + 10)


@pytest.fixture
def open_tab(loop, transactional_db):
    tabs: list[Tab] = []

    def make(query: str, cookie: str | None, origin: str | None = ORIGIN) -> Tab:
        tab = Tab(loop, query, cookie, origin)
        tabs.append(tab)
        return tab

    yield make
    for tab in tabs:
        tab.done()

def group_send(loop: LoopThread, group: str, message: dict) -> None:
    from channels.layers import get_channel_layer

    loop.run(get_channel_layer().group_send(group, message))


# -- authorized: the current state first -----------------------------------------------------
def test_a_job_page_gets_the_current_state_first_then_ready(open_tab, loop, cookie_of):
    tab = open_tab(f"job={BERT}", cookie_of("alice"))
    assert tab.accepted
    statuses = json.loads(tab.next())
    assert statuses["type"] == "statuses"
    [job] = statuses["jobs"]
    assert job["only_if"] == "job-header-status" and job["status"] == "Running"
    assert job["text"].startswith("Job bert-large-pretrain is now Running: 8/8 workers")
    first = tab.next()
    for part in ('id="job-header-status"', 'id="job-overview-state"', 'id="job-replicas"',
                 'id="job-topology"'):
        assert part in first
    assert 'hx-swap-oob="true"' in first and "Running" in first
    assert "bert-large-pretrain-worker-7" in first  # the topology's cards
    # the Events tab's rows, every type (the page keeps those of its filter), in a frame
    # that starts with their <tbody>, or the browser's HTML parser would drop it
    events = tab.next()
    assert events.startswith('<tbody id="job-event-rows" hx-swap-oob="true"')
    assert 'data-event-type="Normal"' in events
    # then the timeline in words, whole (each Worker's start-up one line)
    timeline = tab.next()
    assert timeline.startswith('<div id="job-event-timeline" hx-swap-oob="true"')
    assert "Worker 7 started (" in timeline
    ready = tab.until_ready()
    assert ready["subscriptions"] == [f"job={BERT}"]
    assert tab.frames.index(first) == 1


def test_a_job_page_on_another_tab_than_events_gets_no_events_rows(open_tab, loop, cookie_of):
    """Events rows go to the Events tab only: a page on the Overview is sent none (what a
    connect costs does not grow with the job's events), until it shows the Events tab."""
    tab = open_tab(f"job={BERT}&tab=overview", cookie_of("alice"))
    tab.until_ready()
    assert any('id="job-header-status"' in f for f in tab.frames)
    assert not any("job-event-rows" in f or "job-event-timeline" in f for f in tab.frames)
    rows = ('<tbody hx-swap-oob="afterbegin:#job-event-rows"><tr id="event-x" '
            'data-event-type="Normal"><td>x</td></tr></tbody>')
    timeline = '<div id="job-event-timeline" hx-swap-oob="true"><ol><li>x</li></ol></div>'
    group_send(loop, "job.team-nlp.bert-large-pretrain", {
        "type": "hub.update", "html": "<div id='job-header-status'></div>",
        "event_rows": rows, "event_timeline": timeline, "announce": "", "job": BERT,
        "status": "Running", "change": "modified"})
    assert tab.next() == "<div id='job-header-status'></div>"
    # the person opens the Events tab: its rows come, and from now on the new ones
    tab.send({"action": "show", "page": "tab=events"})
    assert json.loads(tab.next())["type"] == "statuses"
    assert 'id="job-header-status"' in tab.next()
    assert tab.next().startswith('<tbody id="job-event-rows" hx-swap-oob="true"')
    assert tab.next().startswith('<div id="job-event-timeline" hx-swap-oob="true"')
    group_send(loop, "job.team-nlp.bert-large-pretrain", {
        "type": "hub.update", "html": "", "event_rows": rows, "event_timeline": timeline,
        "announce": "", "job": BERT, "status": "Running", "change": "modified"})
    assert tab.next() == rows
    assert tab.next() == timeline


def test_the_job_list_gets_its_projects_rows(open_tab, loop, cookie_of):
    tab = open_tab("ns=team-nlp&ns=team-cv", cookie_of("alice"))
    statuses = json.loads(tab.next())
    assert {"only_if": "job-row-team-nlp-mpijob-gpt2-finetune", "status": "Failed",
            "text": "Job gpt2-finetune is now Failed."} in statuses["jobs"]
    rows = tab.next()
    assert 'id="job-row-team-nlp-mpijob-bert-large-pretrain"' in rows
    assert 'id="job-row-team-nlp-mpijob-gpt2-finetune"' in rows
    # then when each was created: the page fetches its table again if it lacks one made
    # after it listed its jobs (made while it was connecting, or away)
    refresh = json.loads(tab.next())
    assert refresh["type"] == "refresh" and refresh["target"] == "job-table"
    created = {job["only_if"]: job for job in refresh["jobs"]}
    gpt2 = created["job-row-team-nlp-mpijob-gpt2-finetune"]
    assert gpt2["text"] == "Job gpt2-finetune was created."
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", gpt2["created"])
    assert json.loads(tab.next())["type"] == "statuses"
    rows_cv = tab.next()
    assert 'id="job-row-team-cv-mpijob-vit-huge-pretrain"' in rows_cv
    assert json.loads(tab.next())["type"] == "refresh"
    assert tab.until_ready()["subscriptions"] == ["ns=team-nlp", "ns=team-cv"]


def test_ages_and_durations_are_sent_as_times_the_page_counts_on(open_tab, loop, cookie_of):
    tab = open_tab("ns=team-nlp", cookie_of("alice"))
    tab.next()
    rows = tab.next()
    row = {m.group(1): m.group(0) for m in re.finditer(r'<tr id="job-row-team-nlp-mpijob-'
                                                         r'([a-z0-9-]+)".*?</tr>', rows, re.S)}
    times = r'<time datetime="\d{4}-[0-9T:-]+Z" data-elapsed="\d+">(\d+[dhms] ?)+</time>'
    # running: its age and its duration count on
    assert len(re.findall(times, row["bert-large-pretrain"])) == 2
    # failed: its age counts on, its duration is fixed
    assert len(re.findall(times, row["gpt2-finetune"])) == 1
    assert re.search(r'<time datetime="PT\d+S">(\d+[dhms] ?)+</time>', row["gpt2-finetune"])


# -- refused -------------------------------------------------------------------------------
def test_bob_may_not_follow_a_team_nlp_job(open_tab, loop, cookie_of):
    tab = open_tab(f"job={BERT}", cookie_of("bob"))
    assert tab.until_closed() == 4403
    assert tab.closing() == {"type": "closing", "code": 4403,
                             "reason": "You do not have access to team-nlp."}
    assert not any(f.startswith("<") for f in tab.frames)  # nothing of the job was sent


def test_bob_may_not_follow_team_nlp_s_list_either(open_tab, loop, cookie_of):
    tab = open_tab("ns=research&ns=team-nlp", cookie_of("bob"))
    assert tab.until_closed() == 4403
    assert tab.closing()["reason"] == "You do not have access to team-nlp."


def test_without_a_session_the_page_is_sent_to_sign_in(open_tab, loop, transactional_db):
    tab = open_tab(f"job={BERT}", cookie=None)
    assert tab.accepted  # accepted, then closed with a code the page understands
    assert tab.until_closed() == 4401


def test_an_expired_token_closes_with_the_sign_in_code(open_tab, loop, cookie_of):
    tab = open_tab(f"job={BERT}", cookie_of("alice", expires_in=-10))
    assert tab.until_closed() == 4401
    assert "sign in" in tab.closing()["reason"].lower()


def test_a_token_the_cluster_rejects_closes_with_the_sign_in_code(open_tab, loop, cookie_of):
    tab = open_tab(f"job={BERT}", cookie_of("alice", token="sha256~revoked-or-made-up"))
    assert tab.until_closed() == 4401
    assert tab.closing()["reason"] == "Your session has ended: sign in again."


@pytest.mark.parametrize("origin", [
    None, "https://evil.example",
    # the same host, another port or scheme: another origin (found by the attack run)
    "http://127.0.0.1:9999", "https://127.0.0.1:8000", "https://127.0.0.1", "http://localhost:1",
    "http://127.0.0.1", "null"])
def test_a_socket_from_another_origin_is_refused(open_tab, loop, cookie_of, origin):
    tab = open_tab(f"job={BERT}", cookie_of("alice"), origin=origin)
    assert not tab.accepted


@pytest.mark.parametrize("query", [
    "job=not-a-job",
    "job=team-nlp/notakind/bert",
    "job=team-nlp/mpijob/Bad_Name",
    "ns=Not_A_Project",
    "ns=",
    "logz=team-nlp/pod",
    "&".join(["ns=team-nlp"] * 60),
])
def test_a_bad_subscription_closes_clearly(open_tab, loop, cookie_of, query):
    tab = open_tab(query, cookie_of("alice"))
    assert tab.until_closed() == 4400
    assert tab.closing()["reason"]


@pytest.mark.parametrize("message", [
    "not json",
    "[]",
    {"action": "subscribe"},
    {"action": "subscribe", "kind": "mystery", "value": "x"},
    {"action": "dance", "kind": "ns", "value": "team-nlp"},
])
def test_a_bad_message_closes_clearly(open_tab, loop, cookie_of, message):
    tab = open_tab("", cookie_of("alice"))
    assert tab.until_ready()["subscriptions"] == []
    tab.send(message)
    assert tab.until_closed() == 4400


# -- subscribing by message ------------------------------------------------------------------
def test_subscribe_and_unsubscribe_by_message(open_tab, loop, cookie_of):
    tab = open_tab("", cookie_of("alice"))
    tab.until_ready()
    tab.send({"action": "subscribe", "kind": "job", "value": BERT})
    assert json.loads(tab.next())["type"] == "statuses"
    snapshot = tab.next()
    assert 'id="job-header-status"' in snapshot
    assert tab.next().startswith('<tbody id="job-event-rows"')
    assert tab.next().startswith('<div id="job-event-timeline"')
    assert json.loads(tab.next()) == {"type": "subscribed", "subscription": f"job={BERT}"}
    tab.send({"action": "unsubscribe", "kind": "job", "value": BERT})
    assert json.loads(tab.next()) == {"type": "unsubscribed", "subscription": f"job={BERT}"}
    # no longer in the group: a push is not forwarded
    group_send(loop, "job.team-nlp.bert-large-pretrain", {
        "type": "hub.update", "html": '<span id="job-header-status">x</span>', "announce": "",
        "job": BERT, "status": "Running", "change": "modified"})
    tab.send({"action": "subscribe", "kind": "ns", "value": "team-cv"})
    tab.until(lambda f: f == '{"type": "subscribed", "subscription": "ns=team-cv"}')
    assert not any("job-header-status\">x" in f for f in tab.frames)


def test_bob_subscribing_by_message_is_refused(open_tab, loop, cookie_of):
    tab = open_tab("ns=research", cookie_of("bob"))
    tab.until_ready()
    tab.send({"action": "subscribe", "kind": "job", "value": BERT})
    assert tab.until_closed() == 4403


# -- pushes from the watch hub ---------------------------------------------------------------
def test_a_hub_update_reaches_the_job_page_announcement_first(open_tab, loop, cookie_of):
    tab = open_tab(f"job={BERT}", cookie_of("alice"))
    tab.until_ready()
    html = '<span id="job-header-status" hx-swap-oob="true">Succeeded</span>'
    # a PyTorchJob of the same name shares the group: not this page's news
    group_send(loop, "job.team-nlp.bert-large-pretrain", {
        "type": "hub.update", "html": "<p id='other'>no</p>", "announce": "Other news",
        "job": "team-nlp/pytorchjob/bert-large-pretrain", "status": "Failed",
        "change": "modified"})
    group_send(loop, "job.team-nlp.bert-large-pretrain", {
        "type": "hub.update", "html": html,
        "announce": "Job bert-large-pretrain is now Succeeded: Training finished",
        "job": BERT, "status": "Succeeded", "change": "modified"})
    announce = json.loads(tab.next())
    assert announce == {"type": "announce",
                        "text": "Job bert-large-pretrain is now Succeeded: Training finished",
                        "only_if": "job-header-status"}
    assert tab.next() == html
    # new events: their rows in a frame of their own, after the rest
    rows = '<tbody hx-swap-oob="afterbegin:#job-event-rows"><tr id="event-1"></tr></tbody>'
    group_send(loop, "job.team-nlp.bert-large-pretrain", {
        "type": "hub.update", "html": html, "event_rows": rows, "announce": "", "job": BERT,
        "status": "Succeeded", "change": "modified"})
    assert tab.next() == html
    assert tab.next() == rows


def test_a_row_update_on_the_list_is_announced_when_the_status_changes(open_tab, loop, cookie_of):
    tab = open_tab("ns=team-nlp", cookie_of("alice"))
    tab.until_ready()
    row = ('<tr id="job-row-team-nlp-mpijob-bert-large-pretrain" hx-swap-oob="true">'
           '<td>Failed</td></tr>')
    group_send(loop, "ns.team-nlp", {"type": "hub.update", "html": row, "announce": "",
                                     "job": BERT, "status": "Failed", "change": "modified"})
    assert json.loads(tab.next()) == {
        "type": "announce", "text": "Job bert-large-pretrain is now Failed.",
        "only_if": "job-row-team-nlp-mpijob-bert-large-pretrain"}
    assert tab.next() == row
    # the same status again (a worker became ready): the row, no announcement
    group_send(loop, "ns.team-nlp", {"type": "hub.update", "html": row, "announce": "",
                                     "job": BERT, "status": "Failed", "change": "modified"})
    assert tab.next() == row
    # another project's news never reaches this socket
    group_send(loop, "ns.team-cv", {"type": "hub.update", "html": "<tr id='x'></tr>",
                                    "announce": "", "job": "team-cv/mpijob/x",
                                    "status": "Running", "change": "added"})
    group_send(loop, "ns.team-nlp", {"type": "hub.update", "html": "", "announce": "",
                                     "job": BERT, "status": "Deleted", "change": "deleted"})
    assert json.loads(tab.next())["text"] == "Job bert-large-pretrain was deleted."


def test_a_new_job_asks_the_list_to_fetch_its_table_again(open_tab, loop, cookie_of):
    tab = open_tab("ns=team-nlp", cookie_of("alice"))
    tab.until_ready()
    row = '<tr id="job-row-team-nlp-mpijob-brand-new" hx-swap-oob="true"><td>x</td></tr>'
    group_send(loop, "ns.team-nlp", {"type": "hub.update", "html": row, "announce": "",
                                     "job": "team-nlp/mpijob/brand-new", "status": "Pending",
                                     "change": "added"})
    assert tab.next() == row  # swapped in if the page shows it already
    # whether its filters show it, the page asks with its own token: it fetches its table
    assert json.loads(tab.next()) == {
        "type": "refresh", "target": "job-table",
        "jobs": [{"only_if": "job-row-team-nlp-mpijob-brand-new", "created": "",
                  "text": "Job brand-new was created."}]}
    # a change of a job already there is no reason to
    group_send(loop, "ns.team-nlp", {"type": "hub.update", "html": row, "announce": "",
                                     "job": "team-nlp/mpijob/brand-new", "status": "Running",
                                     "change": "modified"})
    assert json.loads(tab.next())["text"] == "Job brand-new is now Running."
    assert tab.next() == row
    group_send(loop, "ns.team-nlp", {"type": "hub.update", "html": "", "announce": "",
                                     "job": BERT, "status": "Deleted", "change": "deleted"})
    assert json.loads(tab.next())["type"] == "announce"


def test_a_list_page_gets_only_its_rows_and_a_count_of_the_others(open_tab, loop, cookie_of):
    """A page of the list names its rows: the snapshot and the pushes carry those only;
    changes to jobs it does not show are counted, once per job."""
    gpt2 = "team-nlp/mpijob/gpt2-finetune"
    tab = open_tab(f"ns=team-nlp&rows={BERT}&listed=2000-01-01T00:00:00Z",
                   cookie_of("alice"))
    statuses = json.loads(tab.next())
    assert [j["only_if"] for j in statuses["jobs"]] == [
        "job-row-team-nlp-mpijob-bert-large-pretrain"]
    rows = tab.next()
    assert 'id="job-row-team-nlp-mpijob-bert-large-pretrain"' in rows
    assert "gpt2-finetune" not in rows
    # the jobs not shown made after the page listed (all of them, listed in 2000) are named,
    # so that the page fetches its table if its filters show one
    created = json.loads(tab.next())
    assert created["type"] == "refresh"
    assert "job-row-team-nlp-mpijob-gpt2-finetune" in {j["only_if"] for j in created["jobs"]}
    tab.until_ready()
    other = ('<tr id="job-row-team-nlp-mpijob-gpt2-finetune" hx-swap-oob="true">'
             '<td>Running</td></tr>')
    for status in ("Running", "Succeeded"):  # counted once
        group_send(loop, "ns.team-nlp", {"type": "hub.update", "html": other, "announce": "",
                                         "job": gpt2, "status": status,
                                         "change": "modified"})
    notice = tab.next()
    assert notice.startswith('<div id="job-list-off-page" class="dash-off-page" '
                             'role="status" hx-swap-oob="true">')
    assert "1 job not shown on this page changed." in notice
    assert 'data-live-refresh="job-table"' in notice
    row = ('<tr id="job-row-team-nlp-mpijob-bert-large-pretrain" hx-swap-oob="true">'
           '<td>Failed</td></tr>')
    group_send(loop, "ns.team-nlp", {"type": "hub.update", "html": row, "announce": "",
                                     "job": BERT, "status": "Failed", "change": "modified"})
    assert json.loads(tab.next())["text"] == "Job bert-large-pretrain is now Failed."
    assert tab.next() == row  # the gpt2 row was never sent
    # a new job may belong on the page: the page asks for its table (its filters decide)
    group_send(loop, "ns.team-nlp", {"type": "hub.update", "html": "<tr></tr>",
                                     "announce": "", "job": "team-nlp/mpijob/new-one",
                                     "status": "Pending", "change": "added"})
    assert json.loads(tab.next())["type"] == "refresh"
    group_send(loop, "ns.team-nlp", {"type": "hub.update", "html": "", "announce": "",
                                     "job": "team-nlp/mpijob/llama", "status": "Deleted",
                                     "change": "deleted"})
    assert "2 jobs not shown on this page changed." in tab.next()


def test_a_list_page_listed_just_now_is_told_of_no_older_job(open_tab, loop, cookie_of):
    tab = open_tab("ns=team-nlp&rows=&listed=2999-01-01T00:00:00Z", cookie_of("alice"))
    assert tab.until_ready()["subscriptions"] == ["ns=team-nlp"]
    assert not any("job-row-" in f for f in tab.frames)


# -- a project's rows: only of the job kinds the person may get there ------------------------
@pytest.fixture
def charlie_gets_pytorchjobs_in_research(demo_cluster):
    """charlie (in no project) may get and list PyTorchJobs in research, nothing else."""
    name = "live-test-charlie-pytorchjobs"
    with demo_cluster.api_client("admin") as api:
        rbac = k8s.RbacAuthorizationV1Api(api)
        rbac.create_namespaced_role("research", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name},
            "rules": [{"apiGroups": ["kubeflow.org"], "resources": ["pytorchjobs"],
                       "verbs": ["get", "list", "watch"]},
                      {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]})
        rbac.create_namespaced_role_binding("research", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                          "name": "charlie"}]})
        yield
        rbac.delete_namespaced_role_binding(name, "research")
        rbac.delete_namespaced_role(name, "research")


def test_a_project_s_rows_are_only_of_the_kinds_the_person_may_get(
        open_tab, loop, cookie_of, charlie_gets_pytorchjobs_in_research):
    # no MPIJobs for charlie there, yet the list follows the project: its PyTorchJobs
    tab = open_tab("ns=research", cookie_of("charlie"))
    statuses = json.loads(tab.next())
    assert [job["only_if"] for job in statuses["jobs"]] == [
        "job-row-research-pytorchjob-bert-classifier-ddp"]
    rows = tab.next()
    assert 'id="job-row-research-pytorchjob-bert-classifier-ddp"' in rows
    assert "mnist-tf-dist" not in rows  # a TFJob: charlie may not get those
    assert json.loads(tab.next())["type"] == "refresh"
    tab.until_ready()
    seen = len(tab.frames)
    # pushes of the other kinds never reach the socket, not even a job's name
    tfjob = {"type": "hub.update", "announce": "", "job": "research/tfjob/mnist-tf-dist",
             "html": '<tr id="job-row-research-tfjob-mnist-tf-dist" hx-swap-oob="true"></tr>'}
    group_send(loop, "ns.research", {**tfjob, "status": "Running", "change": "modified"})
    group_send(loop, "ns.research", {**tfjob, "job": "research/tfjob/tf-new",
                                     "status": "Pending", "change": "added"})
    group_send(loop, "ns.research", {**tfjob, "job": "research/mpijob/mnist-tf-dist",
                                     "status": "Failed", "change": "modified"})
    row = ('<tr id="job-row-research-pytorchjob-bert-classifier-ddp" hx-swap-oob="true">'
           '</tr>')
    group_send(loop, "ns.research", {"type": "hub.update", "html": row, "announce": "",
                                     "job": "research/pytorchjob/bert-classifier-ddp",
                                     "status": "Running", "change": "modified"})
    tab.until(lambda f: f == row)
    assert tab.frames[seen:] == [row]  # the TFJob's and the "mpijob" were left out


def test_a_project_where_no_kind_may_be_read_is_refused(open_tab, loop, cookie_of):
    tab = open_tab("ns=research", cookie_of("charlie"))
    assert tab.until_closed() == 4403
    assert tab.closing()["reason"] == "You do not have access to research."


# -- while connected: access and session re-checked ------------------------------------------
@pytest.fixture
def bob_in_team_nlp(demo_cluster):
    """Lets bob view team-nlp until the test takes it back (returns the take-back)."""
    name = "live-test-bob-view"
    with demo_cluster.api_client("admin") as api:
        rbac = k8s.RbacAuthorizationV1Api(api)
        rbac.create_namespaced_role_binding("team-nlp", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "view"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                          "name": "bob"}]})

        def revoke() -> None:
            try:
                rbac.delete_namespaced_role_binding(name, "team-nlp")
            except k8s.ApiException as e:
                if e.status != 404:
                    raise

        yield revoke
        revoke()


def test_access_revoked_while_watching_closes_the_socket(open_tab, loop, cookie_of, settings,
                                                         bob_in_team_nlp, monkeypatch):

    settings.LIVE_RECHECK_SECONDS = 0.2
    # as if every re-check came after the minute an answer is kept
    monkeypatch.setattr(permissions.ANSWERS, "ttl", 0.0)
    tab = open_tab(f"job={BERT}", cookie_of("bob"))
    tab.until_ready()
    bob_in_team_nlp()
    assert tab.until_closed() == 4403
    assert tab.closing()["reason"] == "You no longer have access to team-nlp."


def test_a_session_that_ends_while_watching_closes_with_the_sign_in_code(open_tab, loop, cookie_of,
                                                                         settings):
    from django.contrib.sessions.models import Session

    settings.LIVE_RECHECK_SECONDS = 0.2
    cookie = cookie_of("alice")
    tab = open_tab(f"job={BERT}", cookie)
    tab.until_ready()
    Session.objects.filter(session_key=cookie.split("=", 1)[1]).delete()  # signed out
    assert tab.until_closed() == 4401


def test_a_token_that_expires_while_watching_closes_with_the_sign_in_code(open_tab, loop, cookie_of,
                                                                          settings):
    from django.contrib.sessions.backends.db import SessionStore

    settings.LIVE_RECHECK_SECONDS = 0.2
    cookie = cookie_of("alice")
    tab = open_tab(f"job={BERT}", cookie)
    tab.until_ready()
    session = SessionStore(session_key=cookie.split("=", 1)[1])  # the token's lifetime ends
    session["openshift"] = {**session["openshift"], "expires_at": time.time() - 1}
    session.save()
    assert tab.until_closed() == 4401


def test_an_unreachable_cluster_asks_the_page_to_try_again(open_tab, loop, cookie_of,
                                                           unreachable_cluster):
    tab = open_tab(f"job={BERT}", cookie_of("alice", token="sha256~any"))
    assert tab.until_closed() == 4503
    assert tab.closing()["reason"] == "The cluster could not be reached."


# -- while open: groups joined again, updates paused and caught up -----------------------------
def test_a_socket_whose_group_memberships_were_forgotten_still_gets_pushes(open_tab, loop,
                                                                            cookie_of, settings):
    from channels.layers import get_channel_layer

    from tests.waiting import wait_until

    settings.LIVE_RECHECK_SECONDS = 0.2
    tab = open_tab(f"job={BERT}", cookie_of("alice"))
    tab.until_ready()
    layer = get_channel_layer()
    group = "job.team-nlp.bert-large-pretrain"
    # what a Redis restart does to every membership (and channels_redis to a day-old one)
    loop.call(lambda: layer.groups.pop(group))
    # the page does nothing: its open socket joins again by itself
    wait_until(lambda: loop.call(lambda: group in layer.groups), WAIT,
               message="the open socket back in its job's group")
    html = '<span id="job-header-status" hx-swap-oob="true">Succeeded</span>'
    group_send(loop, group, {"type": "hub.update", "html": html, "announce": "", "job": BERT,
                             "status": "Succeeded", "change": "modified"})
    assert tab.until(lambda f: f == html)
    assert tab.close_code is None


def test_the_page_is_told_updates_are_paused_while_the_hub_cannot_see_the_cluster(
        open_tab, loop, cookie_of):
    tab = open_tab(f"job={BERT}", cookie_of("alice"))
    tab.until_ready()
    seen = len(tab.frames)
    group_send(loop, "hub.status", {"type": "hub.status", "state": "down"})
    assert json.loads(tab.next()) == {"type": "paused"}  # the page shows "Reconnecting…"
    group_send(loop, "hub.status", {"type": "hub.status", "state": "down"})  # said again
    group_send(loop, "hub.status", {"type": "hub.status", "state": "up"})
    # what it could not hear of meanwhile: the current state, then "ready" (the notice goes)
    statuses = json.loads(tab.next())
    assert statuses["type"] == "statuses" and statuses["jobs"][0]["status"] == "Running"
    assert 'id="job-header-status"' in tab.next()
    assert tab.next().startswith('<tbody id="job-event-rows"')
    assert tab.until_ready()["subscriptions"] == [f"job={BERT}"]
    assert [f for f in tab.frames[seen:] if '"paused"' in f] == ['{"type": "paused"}']
    # "up" again changes nothing: the page is live already
    group_send(loop, "hub.status", {"type": "hub.status", "state": "up"})
    html = '<span id="job-header-status" hx-swap-oob="true">x</span>'
    group_send(loop, "job.team-nlp.bert-large-pretrain", {
        "type": "hub.update", "html": html, "announce": "", "job": BERT, "status": "Running",
        "change": "modified"})
    assert tab.next() == html


def test_a_new_watch_hub_sends_the_page_a_fresh_snapshot(open_tab, loop, cookie_of):
    """runwatcher killed and started again (or another replica elected): nothing it said
    "down", but changes made in between were pushed by no hub. Its first "up" carries a
    new epoch: the page gets the current state; the same hub saying "up" again does not
    resend it."""
    tab = open_tab(f"job={BERT}", cookie_of("alice"))
    tab.until_ready()
    before = len(tab.frames)
    group_send(loop, "hub.status", {"type": "hub.status", "state": "up", "hub": "first"})
    group_send(loop, "hub.status", {"type": "hub.status", "state": "up", "hub": "first"})
    marker = '<span id="job-header-status" hx-swap-oob="true">m</span>'
    group_send(loop, "job.team-nlp.bert-large-pretrain", {
        "type": "hub.update", "html": marker, "announce": "", "job": BERT,
        "status": "Running", "change": "modified"})
    tab.until(lambda f: f == marker)
    assert not any('"statuses"' in f for f in tab.frames[before:])  # the first hub: known
    group_send(loop, "hub.status", {"type": "hub.status", "state": "up", "hub": "second"})
    statuses = json.loads(tab.until(lambda f: '"statuses"' in f))
    assert statuses["jobs"][0]["status"] == "Running"
    assert 'id="job-header-status"' in tab.next()
    tab.until_ready()
    group_send(loop, "hub.status", {"type": "hub.status", "state": "up", "hub": "second"})
    html = '<span id="job-header-status" hx-swap-oob="true">y</span>'
    group_send(loop, "job.team-nlp.bert-large-pretrain", {
        "type": "hub.update", "html": html, "announce": "", "job": BERT, "status": "Running",
        "change": "modified"})
    assert tab.next() == html  # no second snapshot before it


def test_the_page_is_paused_while_the_cluster_does_not_answer_and_caught_up_after(
        open_tab, loop, cookie_of, settings, demo_cluster, unreachable_cluster, monkeypatch):
    from training import cluster
    settings.LIVE_RECHECK_SECONDS = 0.2
    monkeypatch.setattr(permissions.ANSWERS, "ttl", 0.0)  # every re-check asks
    settings.CLUSTER_KUBECONFIG = str(demo_cluster.kubeconfig("dashboard"))
    cluster.cluster_config.cache_clear()
    tab = open_tab(f"job={BERT}", cookie_of("alice"))
    tab.until_ready()

    settings.CLUSTER_KUBECONFIG = str(unreachable_cluster)  # the API server goes away
    cluster.cluster_config.cache_clear()
    tab.until(lambda f: f == '{"type": "paused"}')
    settings.CLUSTER_KUBECONFIG = str(demo_cluster.kubeconfig("dashboard"))  # and is back
    cluster.cluster_config.cache_clear()
    tab.until(lambda f: f.startswith('{"type": "statuses"'))
    assert 'id="job-header-status"' in tab.next()
    tab.until_ready()
    assert tab.close_code is None  # the socket stayed open throughout


# -- each part as its HTTP twin: the job's status only, without pods and events -------------
@pytest.fixture
def charlie_gets_jobs_only(demo_cluster):
    """charlie may get and list MPIJobs in team-nlp, not their pods or events."""
    with demo_cluster.api_client("admin") as api:
        rbac = k8s.RbacAuthorizationV1Api(api)
        rbac.create_namespaced_role("team-nlp", {
            "metadata": {"name": "test-jobs-only"},
            "rules": [{"apiGroups": ["kubeflow.org"], "resources": ["mpijobs"],
                       "verbs": ["get", "list", "watch"]}]})
        rbac.create_namespaced_role_binding("team-nlp", {
            "metadata": {"name": "test-jobs-only"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                        "name": "test-jobs-only"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                          "name": "charlie"}]})
        try:
            yield
        finally:
            rbac.delete_namespaced_role_binding("test-jobs-only", "team-nlp")
            rbac.delete_namespaced_role("test-jobs-only", "team-nlp")


def test_a_socket_that_may_see_the_job_but_not_its_pods_gets_its_status_only(
        open_tab, loop, cookie_of, charlie_gets_jobs_only):
    tab = open_tab(f"job={BERT}", cookie_of("charlie"))
    assert tab.accepted
    statuses = json.loads(tab.next())
    assert statuses["jobs"][0]["status"] == "Running"
    first = tab.next()
    assert 'id="job-header-status"' in first
    for part in ("job-replicas", "job-topology", "job-overview-state", "worker-7"):
        assert part not in first, part
    tab.until_ready()
    # a push carries both: this socket passes on the status-only part, and no Events rows
    group_send(loop, "job.team-nlp.bert-large-pretrain", {
        "type": "hub.update", "job": BERT, "status": "Running", "change": "modified",
        "html": '<table id="job-replicas" hx-swap-oob="true">bert-large-pretrain-worker-7',
        "html_status": '<span id="job-header-status" hx-swap-oob="true">Running</span>',
        "event_rows": '<tbody id="job-event-rows">FailedScheduling</tbody>',
        "event_timeline": '<div id="job-event-timeline">FailedScheduling</div>',
        "announce": "Job bert-large-pretrain is now Running: Worker 2 was OOMKilled",
        "announce_status": "Job bert-large-pretrain is now Running."})
    pushed = tab.until(lambda f: "job-header-status" in f or "job-replicas" in f)
    assert "job-replicas" not in pushed
    assert not any("FailedScheduling" in f or "OOMKilled" in f for f in tab.frames)


def test_a_project_list_without_pods_gets_rows_the_jobs_alone_make(open_tab, loop, cookie_of,
                                                                    charlie_gets_jobs_only):
    tab = open_tab("ns=team-nlp", cookie_of("charlie"))
    json.loads(tab.next())
    rows = tab.next()
    assert 'id="job-row-team-nlp-mpijob-bert-large-pretrain"' in rows
    assert "0/8" in rows and "8/8" not in rows  # no pod was read for it
    tab.until_ready()
    group_send(loop, "ns.team-nlp", {
        "type": "hub.update", "job": BERT, "status": "Running", "change": "modified",
        "html": '<tr id="job-row-team-nlp-mpijob-bert-large-pretrain">8/8 gpu-a100-1</tr>',
        "html_status": '<tr id="job-row-team-nlp-mpijob-bert-large-pretrain">0/8</tr>'})
    pushed = tab.until(lambda f: "job-row-team-nlp-mpijob-bert-large-pretrain" in f)
    assert "gpu-a100-1" not in pushed and "0/8" in pushed
