"""The deployment for many users, run here: two web processes (daphne), `runwatcher`, a real
Redis and a real PostgreSQL, as overlays/openshift runs them. Viewers spread over both web
processes all receive every push; killing one web process moves its viewers to the other
(they connect again and get the current state); killing runwatcher and starting it again
loses nothing (the change made meanwhile reaches every page, and a job that finished
meanwhile gets its one history record). The viewers are websockets of their own, signed in
over HTTP as a browser would: no Chromium, so the browser tests' group never waits on it."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import uuid

import psycopg
import pytest
import requests
from kubernetes import client as k8s

from tests.dashboard_support import sign_in_over_http
from tests.integration.hub.conftest import REDIS, RedisServer
from tests.simcluster_process import ROOT, free_port
from tests.training_jobs import mpijob
from tests.waiting import wait_until

POSTGRES = os.environ.get("POSTGRES_TEST_URL", "postgres://postgres@127.0.0.1:5432/test")
SESSION_COOKIE = "mpijob_dashboard_session"
NS = "team-nlp"
WAIT = 60


def _postgres_database():
    """A database of its own on the local PostgreSQL (dropped after)."""
    name = f"scaled_out_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    try:
        admin = psycopg.connect(POSTGRES, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as e:
        pytest.fail(f"PostgreSQL is not reachable at {POSTGRES} ({e}): this test runs the "
                    "deployment on it; start it or set POSTGRES_TEST_URL")
    admin.execute(f'CREATE DATABASE "{name}"')
    return admin, name, re.sub(r"/[^/]*$", f"/{name}", POSTGRES)


class Process:
    """A child process with its log, killed (not asked) when the test is done with it."""

    def __init__(self, args: list[str], env: dict, log_path, ready: str | None = None,
                 url: str | None = None) -> None:
        self.args, self.env, self.log_path, self.url = args, env, log_path, url
        self.ready = ready
        self.start()

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(self.args, cwd=ROOT, env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT)
        if self.ready:
            wait_until(lambda: self.log().count(self.ready) > self.started_before, WAIT,
                       message=lambda: f"{self.args[2]} to be ready:\n{self.log()}")
        if self.url:
            wait_until(self._answers, WAIT, message=lambda: self.log())
        self.started_before = self.log().count(self.ready) if self.ready else 0

    started_before = 0

    def _answers(self) -> bool:
        assert self.process.poll() is None, self.log()
        try:
            return requests.get(self.url + "/healthz", timeout=1).status_code == 200
        except requests.ConnectionError:
            return False

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@pytest.fixture(scope="module")
def deployment(demo_cluster, tmp_path_factory):
    if REDIS is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server): this "
                    "test runs the deployment on a real Redis")
    work = tmp_path_factory.mktemp("scaled-out")
    redis = RedisServer(work / "redis.log")
    admin, db_name, database_url = _postgres_database()
    ports = [free_port(), free_port()]
    # its sign-in comes back to these web processes too (the other tests' dashboard keeps
    # its own redirect URI: the cluster is shared)
    with demo_cluster.api_client("admin") as api:
        oauth = k8s.CustomObjectsApi(api)
        kept = oauth.get_cluster_custom_object("oauth.openshift.io", "v1", "oauthclients",
                                               "mpijob-dashboard").get("redirectURIs") or []
        oauth.patch_cluster_custom_object(
            "oauth.openshift.io", "v1", "oauthclients", "mpijob-dashboard",
            {"redirectURIs": kept + [f"http://127.0.0.1:{p}/oauth/callback/" for p in ports]},
            _content_type="application/merge-patch+json")
    env = dict(os.environ, PYTHONUNBUFFERED="1", DJANGO_SETTINGS_MODULE="dashboard.settings",
               DATABASE_URL=database_url, REDIS_URL=redis.url, WATCHER_EMBEDDED="false",
               SECRET_KEY="scaled-out-" + uuid.uuid4().hex,
               CLUSTER_KUBECONFIG=str(demo_cluster.kubeconfig("dashboard")),
               OAUTH_CLIENT_ID="mpijob-dashboard",
               OAUTH_CLIENT_SECRET="mpijob-dashboard-demo-secret",
               PROMETHEUS_URL=demo_cluster.prometheus_url, ALLOWED_HOSTS="127.0.0.1,localhost",
               EMAIL_BACKEND="django.core.mail.backends.filebased.EmailBackend",
               EMAIL_FILE_PATH=str(work / "mail"))
    subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
                   cwd=ROOT, env=env, check=True)
    started = []
    try:
        watcher = Process([sys.executable, "manage.py", "runwatcher"], env,
                          work / "runwatcher.log", ready="runwatcher: READY")
        started.append(watcher)
        webs = []
        for i, port in enumerate(ports):
            web = Process([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                           "dashboard.asgi:application"], env, work / f"web-{i}.log",
                          url=f"http://127.0.0.1:{port}")
            started.append(web)
            webs.append(web)
        yield {"webs": webs, "watcher": watcher, "database_url": database_url,
               "mail": work / "mail"}
    finally:
        for process in started:
            process.kill()
        redis.stop()
        admin.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        admin.close()


class Viewer:
    """A browser tab's live socket (aiohttp, on a loop of its own): every frame it got."""

    def __init__(self, url: str, cookie: str, query: str, time_zone: str = "") -> None:
        self.url, self.cookie, self.query = url, cookie, query
        self.time_zone = time_zone
        self.frames: list[str] = []
        self.closed = threading.Event()
        self.ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._follow()),
                                        daemon=True)
        self._thread.start()

    async def _follow(self) -> None:
        import aiohttp

        cookies = f"{SESSION_COOKIE}={self.cookie}"
        if self.time_zone:  # as the browser's dashboard.js sets it
            cookies += f"; dashboard_tz={self.time_zone}"
        headers = {"Origin": self.url, "Cookie": cookies}
        ws_url = self.url.replace("http://", "ws://") + f"/ws/live/?{self.query}"
        try:
            async with aiohttp.ClientSession() as session, \
                    session.ws_connect(ws_url, headers=headers) as ws:
                async for msg in ws:
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        break
                    self.frames.append(msg.data)
                    if msg.data.startswith("{") and json.loads(msg.data).get("type") == "ready":
                        self.ready.set()
        except aiohttp.ClientError:
            pass
        finally:
            self.closed.set()

    def shows(self, status: str) -> bool:
        """The last header status pushed or sent to it is `status`."""
        said = [m.group(1) for f in self.frames
                for m in re.finditer(r'id="job-header-status".*?data-status="(\w+)"', f, re.S)]
        return bool(said) and said[-1] == status

    def messages(self, kind: str) -> list[dict]:
        return [m for m in (json.loads(f) for f in self.frames if f.startswith("{"))
                if m.get("type") == kind]


def _suspend(custom, name: str, suspended: bool) -> None:
    custom.patch_namespaced_custom_object("kubeflow.org", "v2beta1", NS, "mpijobs", name,
                                          {"spec": {"runPolicy": {"suspend": suspended}}})


def _settled_suspended(custom, core, name: str) -> bool:
    job = custom.get_namespaced_custom_object("kubeflow.org", "v2beta1", NS, "mpijobs", name)
    suspended = any(c.get("type") == "Suspended" and c.get("status") == "True"
                    for c in (job.get("status") or {}).get("conditions") or [])
    pods = core.list_namespaced_pod(
        NS, label_selector=f"training.kubeflow.org/job-name={name}").items
    return suspended and not pods


def test_viewers_on_two_web_processes_keep_every_update_through_failures(
        deployment, demo_cluster):
    webs, watcher = deployment["webs"], deployment["watcher"]
    # one session, in PostgreSQL: good on both
    cookie = sign_in_over_http(demo_cluster, webs[0].url, "alice").cookies[SESSION_COOKIE]
    name = f"scaled-{uuid.uuid4().hex[:5]}"
    query = f"job={NS}/mpijob/{name}"
    with demo_cluster.api_client("alice") as api:
        custom = k8s.CustomObjectsApi(api)
        custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", NS, "mpijobs",
                                               mpijob(name, workers=1, run_seconds=3600))
        try:
            viewers = [Viewer(webs[i % 2].url, cookie, query) for i in range(4)]
            for v in viewers:
                assert v.ready.wait(WAIT), v.frames
            # every viewer, on either web process, hears of a change
            _suspend(custom, name, True)
            wait_until(lambda: all(v.shows("Suspended") for v in viewers), WAIT,
                       message=lambda: [v.frames[-3:] for v in viewers])

            # one web process dies: its viewers come back on the other one, up to date
            webs[0].kill()
            moved = [v for v in viewers if v.url == webs[0].url]
            for v in moved:
                assert v.closed.wait(WAIT)
            viewers = [v for v in viewers if v not in moved] + [
                Viewer(webs[1].url, cookie, query) for _ in moved]
            for v in viewers:
                assert v.ready.wait(WAIT)
            assert all(v.shows("Suspended") for v in viewers)
            _suspend(custom, name, False)
            wait_until(lambda: all(not v.shows("Suspended") and any(
                'data-status="' in f for f in v.frames) for v in viewers), WAIT,
                message=lambda: [v.frames[-3:] for v in viewers])

            # runwatcher dies; a change meanwhile, settled before it starts again (so that
            # it finds nothing changing): the pages still hear of it
            watcher.kill()
            _suspend(custom, name, True)
            core = k8s.CoreV1Api(api)
            wait_until(lambda: _settled_suspended(custom, core, name), WAIT,
                       message="the job suspended, its pods gone")
            watcher.start()
            wait_until(lambda: all(v.shows("Suspended") for v in viewers), WAIT,
                       message=lambda: [v.frames[-3:] for v in viewers] + [watcher.log()])
        finally:
            custom.delete_namespaced_custom_object("kubeflow.org", "v2beta1", NS, "mpijobs",
                                                   name)


def test_a_job_that_finishes_while_runwatcher_is_down_gets_one_history_record(
        deployment, demo_cluster):
    """... and one event: its transition (seen first finished) recorded once, after two
    starts, in the PostgreSQL database the two web processes share."""
    watcher = deployment["watcher"]
    name = f"scaled-done-{uuid.uuid4().hex[:5]}"
    watcher.kill()
    with demo_cluster.api_client("alice") as api:
        custom = k8s.CustomObjectsApi(api)
        custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", NS, "mpijobs",
                                               mpijob(name, workers=1, run_seconds=1))

        def succeeded() -> bool:
            job = custom.get_namespaced_custom_object("kubeflow.org", "v2beta1", NS,
                                                      "mpijobs", name)
            return any(c.get("type") == "Succeeded" and c.get("status") == "True"
                       for c in (job.get("status") or {}).get("conditions") or [])

        wait_until(succeeded, WAIT, message="the job to succeed")
    watcher.start()

    def records() -> int:
        with psycopg.connect(deployment["database_url"]) as db:
            return db.execute("SELECT count(*) FROM training_jobhistory WHERE name = %s",
                              (name,)).fetchone()[0]

    def transitions() -> list[tuple[str, str]]:
        with psycopg.connect(deployment["database_url"]) as db:
            return db.execute("SELECT from_status, to_status FROM training_jobtransition "
                              "WHERE name = %s ORDER BY id", (name,)).fetchall()

    wait_until(lambda: records() == 1, WAIT, message="the job's history record")
    assert transitions() == [("", "Succeeded")]
    watcher.kill()
    watcher.start()  # a second start reads the same finished job: still one record
    assert records() == 1
    assert transitions() == [("", "Succeeded")]


def _emails_about(mail_dir, job: str) -> int:
    """Messages the file email backend wrote whose subject names `job`."""
    files = list(mail_dir.glob("*.log")) if mail_dir.exists() else []
    return sum(1 for f in files for line in f.read_text(errors="replace").splitlines()
               if line.startswith("Subject:") and job in line)


def test_a_failure_is_told_once_by_email_and_live_to_every_tab_on_either_web_process(
        deployment, demo_cluster):
    """Alice's bell on one web process hears of her job's failure from runwatcher (through
    Redis), in her own time zone; her email arrives once; reading her notices in a tab on the
    other web process clears the count in this one."""
    webs = deployment["webs"]
    for web in webs:  # an earlier test killed one
        if web.process.poll() is not None:
            web.start()
    browser = sign_in_over_http(demo_cluster, webs[0].url, "alice")
    cookie = browser.cookies[SESSION_COOKIE]
    browser.get(webs[0].url + "/notifications/", timeout=10)  # her default subscription
    saved = browser.post(webs[0].url + "/notifications/", timeout=10, data={
        "scope": "mine", "statuses": ["Failed"], "email": "alice@example.com",
        "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
        headers={"Referer": webs[0].url + "/notifications/"})
    assert saved.status_code == 200 and "Subscription saved." in saved.text, saved.text
    tab = Viewer(webs[1].url, cookie, "notices=alice", time_zone="Asia/Tokyo")
    assert tab.ready.wait(WAIT), tab.frames
    name = f"scaled-fails-{uuid.uuid4().hex[:5]}"
    with demo_cluster.api_client("alice") as api:
        custom = k8s.CustomObjectsApi(api)
        custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", NS, "mpijobs",
                                               mpijob(name, workers=1, run_seconds=30,
                                                      annotations={
            "opendatahub.io/username": "alice", "simcluster.io/failure": "oom",
            "simcluster.io/failure-after-seconds": "2"}))
        try:
            wait_until(lambda: any(name in m["html"] for m in tab.messages("notice")), 120,
                       message=lambda: tab.frames[-3:] + [deployment["watcher"].log()[-3000:]])
            (notice,) = [m for m in tab.messages("notice") if name in m["html"]]
            assert notice["unread"] >= 1 and "Failed" in notice["html"]
            assert notice["body"] and notice["body"] in notice["html"]  # the headline
            assert "JST" in notice["html"]  # her zone, not the server's UTC
            wait_until(lambda: _emails_about(deployment["mail"], name) >= 1, WAIT,
                       message="her email")

            # read in a tab on the other web process: this tab's count goes to 0
            read = browser.post(webs[0].url + "/notifications/read/", timeout=10,
                                headers={"X-CSRFToken": browser.cookies["csrftoken"],
                                         "Referer": webs[0].url + "/jobs/"})
            assert read.status_code == 200 and name in read.text
            wait_until(lambda: any(m.get("unread") == 0 for m in tab.messages("notices")[1:]),
                       WAIT, message=lambda: tab.frames[-3:])
            assert len([m for m in tab.messages("notice") if name in m["html"]]) == 1
            assert _emails_about(deployment["mail"], name) == 1
        finally:
            custom.delete_namespaced_custom_object("kubeflow.org", "v2beta1", NS, "mpijobs",
                                                   name)
