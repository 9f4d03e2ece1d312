"""The Logs tab without JavaScript (one pod, or All interleaved), who may read logs, and the
training progress read from the launcher's log (Overview and list rows)."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from tests.dashboard_support import oauth_token, session_token
from tests.html_checks import assert_valid
from training import permissions

BERT = reverse("training-job-detail", args=["team-nlp", "mpijob", "bert-large-pretrain"])
GPT2 = reverse("training-job-detail", args=["team-nlp", "mpijob", "gpt2-finetune"])


def _log_lines(body: str) -> list[dict]:
    """Each rendered line: timestamp, [pod] prefix, text (unescaped)."""
    pre = re.search(r'<pre class="dash-log" id="job-log"[^>]*>(.*?)</pre>', body, re.S)
    assert pre, "no log on the page"
    lines = []
    for m in re.finditer(r'<span class="dash-log-line" data-ts="([^"]*)" data-pod="([^"]*)">'
                         r'(.*?)<span class="dash-log-text">(.*?)</span>\n</span>',
                         pre.group(1), re.S):
        src = re.search(r'<span class="dash-log-src">\[([^\]]+)\] </span>', m.group(3))
        lines.append({"ts": m.group(1), "pod": m.group(2), "tag": src.group(1) if src else "",
                      "raw": m.group(4), "text": html.unescape(m.group(4))})
    return lines


def test_the_plain_tab_still_shows_the_launchers_last_lines(alice):
    r = alice.get(BERT, {"tab": "logs"})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    lines = _log_lines(body)
    assert 0 < len(lines) <= 500
    assert any("Horovod rank 0/8" in line["text"] for line in lines)
    assert all(line["pod"].startswith("bert-large-pretrain-launcher-") for line in lines)
    assert all(line["tag"] == "" for line in lines)  # one pod: no prefixes
    # timestamps (nine fraction digits: they compare as strings) and in order
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z", line["ts"])
               for line in lines)
    assert [line["ts"] for line in lines] == sorted(line["ts"] for line in lines)
    assert 'role="log"' in body and 'aria-label="Log of Launcher"' in body
    # what needs JavaScript is there but hidden until logs.js shows it
    assert re.search(r'<div class="dash-toolbar dash-log-controls" data-logs-controls hidden>',
                     body)
    for label in ("Follow", "Search", "Level", "Timestamps (UTC)", "Wrap lines"):
        assert label in body
    assert "/static/js/logs.js" in body
    # the script's counted texts, translated here: singular and plural, "%(count)s" to fill
    assert ('data-skipped-one="… %(count)s line skipped …" '
            'data-skipped-many="… %(count)s lines skipped …"') in body
    assert 'data-matches-one="%(count)s match" data-matches-many="%(count)s matches"' in body
    assert 'data-held-one="Paused — %(count)s new line"' in body


def test_log_text_is_escaped(alice):
    body = alice.get(BERT, {"tab": "logs"}).content.decode()
    tagged = next(line for line in _log_lines(body) if "Horovod rank 0/8" in line["text"])
    assert tagged["raw"].startswith("[1,0]&lt;stdout&gt;:")
    assert tagged["text"].startswith("[1,0]<stdout>:")


def test_all_interleaves_every_pod_by_time_with_a_prefix(alice):
    r = alice.get(BERT, {"tab": "logs", "pod": "all"})
    body = r.content.decode()
    assert_valid(body)
    assert '<option value="all" selected>' in body
    lines = _log_lines(body)
    tags = {line["tag"] for line in lines}
    assert "launcher" in tags
    assert {f"worker-{i}" for i in range(8)} <= tags
    assert [line["ts"] for line in lines] == sorted(line["ts"] for line in lines)
    worker_lines = [line for line in lines if line["tag"] == "worker-2"]
    assert worker_lines[0]["pod"] == "bert-large-pretrain-worker-2"
    assert "Server listening on 0.0.0.0 port 22." in worker_lines[0]["text"]
    assert 'aria-label="Log of all pods"' in body
    # one download per pod, since "the whole log" of All is nine logs
    assert body.count("/logs/bert-large-pretrain-worker-") >= 8
    # the sources logs.js will follow: one per pod
    sources = re.search(r'<script id="log-sources" type="application/json">(.*?)</script>',
                        body, re.S)
    assert sources and sources.group(1).count('"pod"') == 9


def test_a_chosen_worker(alice):
    body = alice.get(BERT, {"tab": "logs", "pod": "bert-large-pretrain-worker-1"}
                     ).content.decode()
    assert '<option value="bert-large-pretrain-worker-1" selected>' in body
    texts = [line["text"] for line in _log_lines(body)]
    assert "Server listening on 0.0.0.0 port 22." in texts
    assert any(t.startswith("Accepted publickey for root from ") for t in texts)
    assert "logs/bert-large-pretrain-worker-1/download/" in body


def test_a_restarted_workers_crashed_run_can_be_read(alice):
    """t5-base-restart: Worker 1 crashed and restarted in place. The diagnosis' "Read the
    log of Worker 1's crashed run" opens that run, not the current one."""
    page = reverse("training-job-detail", args=["team-cv", "mpijob", "t5-base-restart"])
    card = alice.get(reverse("training-job-diagnosis",
                             args=["team-cv", "mpijob", "t5-base-restart"])).content.decode()
    link = re.search(r'<a href="([^"]*previous=1[^"]*)">Read the log of Worker 1&#x27;s '
                     r"crashed run</a>", card)
    assert link, card
    body = alice.get(html.unescape(link.group(1))).content.decode()
    assert_valid(body)
    assert '<option value="1" selected>Crashed run (before its restart)</option>' in body
    crashed = [line["text"] for line in _log_lines(body)]
    assert any("NCCL communicator was aborted" in t for t in crashed)
    assert 'data-follow="false"' in body  # a run that ended is not followed
    current = alice.get(page, {"tab": "logs", "pod": "t5-base-restart-worker-1"}
                        ).content.decode()
    assert '<option value="" selected>Current run</option>' in current
    assert not any("NCCL communicator was aborted" in line["text"]
                   for line in _log_lines(current))


def test_bob_may_not_read_team_nlp_logs(bob):
    assert bob.get(BERT, {"tab": "logs"}).status_code == 403
    r = bob.get(reverse("training-job-log-download", args=[
        "team-nlp", "mpijob", "bert-large-pretrain", "bert-large-pretrain-worker-1"]))
    assert r.status_code == 403


def test_following_asks_the_cluster_about_pods_log_with_the_persons_token(demo_cluster, db):
    """Before a socket joins a pod's log stream: SelfSubjectAccessReview `get pods/log`."""
    from training.live import subscriptions
    from training.live.subscriptions import AccessRefused

    sub = subscriptions.parse("logs", "team-nlp/bert-large-pretrain-worker-1")
    assert sub.group == "logs.team-nlp.bert-large-pretrain-worker-1"
    assert (sub.access.resource, sub.access.subresource, sub.access.verb) == ("pods", "log",
                                                                                "get")
    permissions.ANSWERS.clear()
    subscriptions.check_access(oauth_token(demo_cluster, "alice"), [sub])  # allowed
    with pytest.raises(AccessRefused):
        subscriptions.check_access(oauth_token(demo_cluster, "bob"), [sub])
    # bob may read the logs of his own project's jobs
    subscriptions.check_access(oauth_token(demo_cluster, "bob"), [
        subscriptions.parse("logs", "research/bert-classifier-ddp-master-0")])


@pytest.mark.parametrize("value", ["team-nlp", "team-nlp/../x", "Team/pod", "a/b/c/d",
                                   "team-nlp/pod/Bad_Container"])
def test_a_logs_subscription_must_name_a_pod(value):
    from training.live import subscriptions
    from training.live.subscriptions import BadSubscription

    with pytest.raises(BadSubscription):
        subscriptions.parse("logs", value)


def test_the_snapshot_is_the_last_500_lines_with_timestamps(demo_cluster, db):
    from datetime import UTC, datetime

    from training.live import subscriptions
    from training.live.subscriptions import ViewState

    token = oauth_token(demo_cluster, "alice")
    sub = subscriptions.parse("logs", "team-nlp/bert-large-pretrain-worker-1/worker")
    [frame] = subscriptions.snapshots(token, [sub], ViewState(), datetime.now(UTC))
    assert frame["type"] == "log" and frame["snapshot"] is True
    assert (frame["namespace"], frame["pod"], frame["container"]) == (
        "team-nlp", "bert-large-pretrain-worker-1", "worker")
    assert frame["lines"][0][1] == "Server listening on 0.0.0.0 port 22."
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z", frame["lines"][0][0])
    gone = subscriptions.parse("logs", "team-nlp/no-such-pod")
    [frame] = subscriptions.snapshots(token, [gone], ViewState(), datetime.now(UTC))
    assert frame == {"type": "log_end", "namespace": "team-nlp", "pod": "no-such-pod",
                     "container": "", "reason": "deleted"}


# -- training progress ---------------------------------------------------------------------------
def _progressbar(body: str, dom_id: str) -> str:
    m = re.search(rf'<div class="pf-v6-c-progress[^"]*" id="{dom_id}">(.*?)</div>\s*</div>'
                  r'(?:\s*<div class="pf-v6-c-progress__helper-text">.*?</div>)?', body, re.S)
    assert m, f"no progress bar #{dom_id}"
    return m.group(0)


def test_the_overview_shows_the_epoch_and_the_time_left(alice):
    body = alice.get(BERT).content.decode()
    assert_valid(body)
    bar = _progressbar(body, "job-progress")
    label = re.search(r'id="job-progress-label">Epoch (\d+) of 40<', bar)
    assert label, bar
    now = re.search(r'role="progressbar" aria-labelledby="job-progress-label" '
                    r'aria-valuemin="0" aria-valuemax="100" aria-valuenow="(\d+)" '
                    r'aria-valuetext="([^"]+)"', bar)
    assert now, bar
    assert 0 <= int(now.group(1)) < 100
    assert now.group(2).startswith(f"Epoch {label.group(1)} of 40, about ")
    left = re.search(r'<span class="dash-train-progress__eta">About ((?:\d+[dhms] ?)+) left'
                     r'</span>', bar)
    assert left, bar  # e.g. "About 5h 38m 12s left"


def test_no_progress_for_a_job_that_is_not_running(alice):
    body = alice.get(GPT2).content.decode()
    assert 'id="job-progress"' not in body


def test_the_list_row_of_a_running_job_shows_its_progress(alice):
    body = alice.get(reverse("training-job-list"), {"project": "team-nlp"}).content.decode()
    assert_valid(body)
    row = re.search(r'<tr id="job-row-team-nlp-mpijob-bert-large-pretrain".*?</tr>', body, re.S)
    assert row
    bar = _progressbar(row.group(0), "job-progress-team-nlp-mpijob-bert-large-pretrain")
    assert 'role="progressbar"' in bar and "Epoch " in bar
    failed = re.search(r'<tr id="job-row-team-nlp-mpijob-gpt2-finetune".*?</tr>', body, re.S)
    assert failed and 'role="progressbar"' not in failed.group(0)


def _summary(token: str, name: str):
    from odh.training.kinds import KINDS
    from odh.training.status import queries
    from training.cluster import client_for_token
    with client_for_token(token) as client:
        return queries.job_detail(client, KINDS["mpijob"], "team-nlp", name).summary


def test_pushed_rows_keep_the_bar_the_page_drew(alice):
    """The watch hub's row carries no progress (it would be read with nobody's token, or
    the wrong person's): a running job's progress cell is hx-preserve, so htmx keeps the
    bar the page drew; a job that stopped running gets an empty cell (its bar goes)."""
    from datetime import UTC, datetime

    from training.live import pushes as live
    cell = "row-progress-team-nlp-mpijob-bert-large-pretrain"
    page = alice.get(reverse("training-job-list"), {"project": "team-nlp"}).content.decode()
    drawn = re.search(rf'<div id="{cell}">(.*?)</div>\s*</td>', page, re.S)
    assert drawn and 'role="progressbar"' in drawn.group(1)  # the page's cell: no hx-preserve

    token = session_token(alice)
    row = live.render_list_row(_summary(token, "bert-large-pretrain"), datetime.now(UTC))
    assert 'hx-swap-oob="true"' in row
    assert f'<div id="{cell}" hx-preserve="true"></div>' in row
    assert 'role="progressbar"' not in row

    failed = live.render_list_row(_summary(token, "gpt2-finetune"), datetime.now(UTC))
    assert '<div id="row-progress-team-nlp-mpijob-gpt2-finetune"></div>' in failed
    assert 'id="row-progress-team-nlp-mpijob-gpt2-finetune" hx-preserve' not in failed


def test_progress_read_for_one_person_is_not_shown_to_another(alice, demo_cluster,
                                                              charlie_sees_jobs_not_logs):
    """charlie may list team-nlp's jobs but not read their logs: alice's cached progress
    of the same job is not his to see."""
    from django.core.cache import cache

    from training import job_progress
    cache.clear()
    alice_token = session_token(alice)
    bert = _summary(alice_token, "bert-large-pretrain")
    assert job_progress.for_rows(alice_token, [bert])  # read with alice's token, kept
    charlie_token = oauth_token(demo_cluster, "charlie")
    assert job_progress.for_rows(charlie_token, [bert]) == {}  # his own read is refused
    assert job_progress.for_rows(alice_token, [bert])  # alice's answer is still hers


# -- downloads, limits, access -------------------------------------------------------------------
BERT_LAUNCHER_DOWNLOAD = "training-job-log-download"


def _launcher(client) -> str:
    body = client.get(BERT, {"tab": "logs"}).content.decode()
    return re.search(r'<option value="(bert-large-pretrain-launcher-[a-z0-9]+)"', body).group(1)


@pytest.mark.django_db(transaction=True)  # the view reads the session from another thread
def test_the_download_streams_under_asgi_and_closes_the_client(alice, monkeypatch):
    """Under daphne the body is an async iterator (a sync generator would be read whole
    into memory first), and the person's client is closed once it is sent."""
    import asyncio

    from django.test import AsyncClient

    from training.views.job import logs
    closed = []
    real_user_client = logs.user_client

    def spying_user_client(request):
        client = real_user_client(request)
        close = client.close
        client.close = lambda: (closed.append(True), close())[1]
        return client

    monkeypatch.setattr(logs, "user_client", spying_user_client)
    pod = _launcher(alice)
    url = reverse(BERT_LAUNCHER_DOWNLOAD, args=["team-nlp", "mpijob", "bert-large-pretrain", pod])
    async_client = AsyncClient()
    async_client.cookies = alice.cookies

    async def fetch():
        response = await async_client.get(url)
        assert response.status_code == 200
        assert response.is_async
        assert response["Content-Disposition"] == f'attachment; filename="{pod}.log"'
        body = b"".join([chunk async for chunk in response.streaming_content])
        return response, body

    response, body = asyncio.run(fetch())
    assert "Horovod rank 0/8" in body.decode()
    assert closed == [True]  # Django closed the response (as it does after sending it)
    response.close()
    assert closed == [True]  # once only


def test_the_download_under_a_synchronous_server_is_a_plain_stream(alice):
    pod = _launcher(alice)
    response = alice.get(reverse(BERT_LAUNCHER_DOWNLOAD, args=[
        "team-nlp", "mpijob", "bert-large-pretrain", pod]))
    assert response.status_code == 200 and not response.is_async
    assert "Horovod rank 0/8" in b"".join(response.streaming_content).decode()


def test_a_log_cut_at_the_byte_limit_says_so(alice, monkeypatch):
    """The tail is read with limitBytes; a log that reaches it is shown with a note."""
    from odh.training.cluster import logstreams
    monkeypatch.setattr(logstreams, "READ_LOG_LIMIT_BYTES", 2000)
    body = alice.get(BERT, {"tab": "logs"}).content.decode()
    lines = _log_lines(body)
    assert 0 < len(lines) < 30  # 2000 bytes of it
    assert "Only the first 2.0\xa0KB of these lines are shown" in body
    assert "download the log to read it whole" in body
    # a log under the limit has no such note
    monkeypatch.undo()
    assert "Only the first" not in alice.get(BERT, {"tab": "logs"}).content.decode()


@pytest.fixture
def charlie_sees_jobs_not_logs(demo_cluster):
    """charlie gets a Role in team-nlp to read jobs, pods and events, but not pods/log."""
    from kubernetes import client as k8s

    with demo_cluster.api_client("admin") as api:
        rbac = k8s.RbacAuthorizationV1Api(api)
        rbac.create_namespaced_role("team-nlp", {
            "metadata": {"name": "test-jobs-no-logs"},
            "rules": [{"apiGroups": ["kubeflow.org"], "resources": ["mpijobs"],
                       "verbs": ["get", "list", "watch"]},
                      {"apiGroups": [""], "resources": ["pods", "events"],
                       "verbs": ["get", "list", "watch"]}]})
        rbac.create_namespaced_role_binding("team-nlp", {
            "metadata": {"name": "test-jobs-no-logs"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                        "name": "test-jobs-no-logs"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                          "name": "charlie"}]})
        try:
            yield
        finally:
            rbac.delete_namespaced_role_binding("test-jobs-no-logs", "team-nlp")
            rbac.delete_namespaced_role("test-jobs-no-logs", "team-nlp")


@pytest.mark.parametrize("pod", ["", "all"])
def test_who_may_see_a_job_but_not_its_logs_keeps_the_page(charlie, charlie_sees_jobs_not_logs,
                                                             pod):
    r = charlie.get(BERT, {"tab": "logs", "pod": pod})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    assert "You may not read logs in the project “team-nlp”" in body
    assert "view role" in body
    assert 'id="job-header-status"' in body  # the job's page, not an error page
    assert 'id="job-log"' not in body and 'id="log-sources"' not in body
    # the rest of the page is still there
    assert charlie.get(BERT).status_code == 200


def test_all_reads_the_pods_logs_in_parallel(alice, monkeypatch):
    """Each read waits until three are under way at once: read one after the other, they
    would each give up (a broken barrier) and no line would show."""
    import threading

    from odh.training.cluster.client import ClusterClient

    together = threading.Barrier(3, timeout=20)
    real_read_log = ClusterClient.read_log

    def read_log(self, *args, **kwargs):
        together.wait()
        return real_read_log(self, *args, **kwargs)

    monkeypatch.setattr(ClusterClient, "read_log", read_log)
    body = alice.get(BERT, {"tab": "logs", "pod": "all"}).content.decode()
    tags = {line["tag"] for line in _log_lines(body)}
    assert {"launcher"} | {f"worker-{i}" for i in range(8)} <= tags
    assert "could not be read in time" not in body


def test_all_leaves_out_a_log_that_is_not_read_in_time(alice, monkeypatch):
    import threading

    from odh.training.cluster.client import ClusterClient
    from training.views.job import logs
    stuck = threading.Event()
    real_read_log = ClusterClient.read_log

    def read_log(self, namespace, pod, *args, **kwargs):
        if pod == "bert-large-pretrain-worker-3":
            stuck.wait(30)  # released when the test ends
        return real_read_log(self, namespace, pod, *args, **kwargs)

    monkeypatch.setattr(ClusterClient, "read_log", read_log)
    monkeypatch.setattr(logs, "ALL_DEADLINE", 1.0)
    try:
        body = alice.get(BERT, {"tab": "logs", "pod": "all"}).content.decode()
    finally:
        stuck.set()
    tags = {line["tag"] for line in _log_lines(body)}
    assert "worker-3" not in tags
    assert {"launcher", "worker-0", "worker-7"} <= tags
    assert "[worker-3] its log could not be read in time" in body


@pytest.mark.django_db(transaction=True)
def test_a_download_the_browser_leaves_closes_the_stream_and_the_client(alice, monkeypatch):
    """Under ASGI, a browser that goes away mid-download: Django closes the body, which
    ends the upstream read (blocked in a worker thread here) and closes the client."""
    import asyncio
    import threading

    from django.conf import settings
    from django.core.asgi import get_asgi_application

    from training.views.job import logs
    closed, stuck = [], threading.Event()
    real_user_client = logs.user_client

    class Endless:
        """The upstream log: two chunks, then a read that blocks until closed."""

        def __init__(self, chunks):
            self.chunks, self.sent = chunks, 0

        def __iter__(self):
            return self

        def __next__(self):
            self.sent += 1
            if self.sent <= 2:
                return next(self.chunks)
            stuck.wait(30)
            raise StopIteration

        def close(self):
            stuck.set()
            self.chunks.close()
            closed.append("stream")

    def spying_user_client(request):
        client = real_user_client(request)
        close, stream_log = client.close, client.stream_log
        client.close = lambda: (closed.append("client"), close())[1]
        client.stream_log = lambda *a, **kw: Endless(stream_log(*a, chunk_size=64, **kw))
        return client

    monkeypatch.setattr(logs, "user_client", spying_user_client)
    pod = _launcher(alice)
    url = reverse(BERT_LAUNCHER_DOWNLOAD, args=["team-nlp", "mpijob", "bert-large-pretrain", pod])
    cookie = f"{settings.SESSION_COOKIE_NAME}={alice.cookies[settings.SESSION_COOKIE_NAME].value}"
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
             "scheme": "http", "path": url, "raw_path": url.encode(), "query_string": b"",
             "headers": [(b"host", b"testserver"), (b"cookie", cookie.encode())],
             "client": ("127.0.0.1", 40000), "server": ("testserver", 80)}

    async def browser():
        bodies: list[bytes] = []
        got_some = asyncio.Event()
        asked = 0

        async def receive():
            nonlocal asked
            asked += 1
            if asked == 1:
                return {"type": "http.request", "body": b"", "more_body": False}
            await got_some.wait()  # leaves once the download has begun
            return {"type": "http.disconnect"}

        async def send(message):
            if message["type"] == "http.response.body" and message.get("body"):
                bodies.append(message["body"])
                got_some.set()

        await get_asgi_application()(scope, receive, send)
        return bodies

    bodies = asyncio.run(browser())
    assert bodies and len(b"".join(bodies)) <= 2 * 64
    assert closed == ["stream", "client"]  # the read ended, then the client closed
