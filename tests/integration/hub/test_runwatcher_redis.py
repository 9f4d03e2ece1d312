"""Production mode: `manage.py runwatcher` in its own process publishes through a real
Redis server to whoever subscribed, keeps doing so across a Redis restart (a browser tab's
open socket, the web replica's consumer, hears of changes after it without reconnecting),
tells open pages when it cannot see the cluster, and stops cleanly on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.integration.hub.conftest import NS, Subscriber, job_ref
from tests.simcluster_process import ROOT
from tests.training_jobs import mpijob
from tests.waiting import wait_until
from training import permissions


class Runwatcher:
    def __init__(self, demo, redis_server, log_path) -> None:
        self.log_path = log_path
        env = dict(os.environ, PYTHONUNBUFFERED="1", REDIS_URL=redis_server.url,
                   CLUSTER_KUBECONFIG=str(demo.kubeconfig("dashboard")),
                   DJANGO_SETTINGS_MODULE="dashboard.settings", WATCHER_EMBEDDED="false")
        with open(log_path, "ab") as log:  # the child keeps its own descriptor
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "runwatcher"], cwd=ROOT, env=env, stdout=log,
                stderr=subprocess.STDOUT)
        wait_until(lambda: "runwatcher: READY" in self.log() or self.process.poll() is not None,
                   60, message=lambda: "runwatcher to be ready:\n" + self.log())
        assert self.process.poll() is None, self.log()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture(scope="module")
def runwatcher(demo, redis_server, tmp_path_factory):
    watcher = Runwatcher(demo, redis_server, tmp_path_factory.mktemp("runwatcher") / "log")
    yield watcher
    if watcher.process.poll() is None:
        watcher.process.kill()
        watcher.process.wait()


@pytest.fixture(scope="module")
def redis_layer(redis_server):
    from channels_redis.core import RedisChannelLayer

    return RedisChannelLayer(hosts=[redis_server.url])


def test_updates_reach_a_subscriber_through_redis(runwatcher, redis_layer, loop_thread, jobs):
    name = "redis-new"
    page = Subscriber(loop_thread, redis_layer, f"job.{NS}.{name}", f"ns.{NS}")
    jobs.create(mpijob(name, workers=2, run_seconds=3600))
    first = page.wait_for(lambda m: m["job"] == job_ref(name), what="the job through Redis")
    if first["status"] != "Running":  # the hub knew of the page before the job ran
        running = page.wait_for(lambda m: m["job"] == job_ref(name)
                                and m["status"] == "Running" and m["announce"],
                                what="Running through Redis")
        assert running["announce"] == f"Job {name} is now Running: 2/2 workers"
    # (a page the hub learns of only after the change gets the job as it is, unannounced:
    # its own snapshot shows it) a change while the page is known is announced
    page.wait_for(lambda m: m["job"] == job_ref(name) and m["status"] == "Running"
                  and 'id="job-header-status"' in m["html"], what="Running through Redis")
    jobs.patch(name, {"spec": {"runPolicy": {"suspend": True}}})
    suspended = page.wait_for(lambda m: m["job"] == job_ref(name)
                              and m["status"] == "Suspended" and m["announce"],
                              what="Suspended through Redis")
    assert suspended["announce"].startswith(f"Job {name} is now Suspended")
    page.wait_for(lambda m: m["job"] == job_ref(name) and "job-row-" in m["html"],
                  what="the list row through Redis")


class Tab:
    """A browser tab's live socket, opened on this process's consumer (a web replica with
    WATCHER_EMBEDDED=false, on the test's Redis): the frames it was sent."""

    def __init__(self, loop, demo, username: str, query: str) -> None:
        from channels.testing import WebsocketCommunicator
        from django.conf import settings
        from django.test import Client

        from dashboard.asgi import application
        from tests.dashboard_support import sign_in

        browser = Client()
        sign_in(browser, demo, username)
        name = settings.SESSION_COOKIE_NAME
        cookie = f"{name}={browser.cookies[name].value}"
        self.loop = loop
        self.comm = WebsocketCommunicator(application, f"/ws/live/?{query}", headers=[
            (b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000"),
        (b"cookie", cookie.encode())])
        connected, _ = loop.run(self.comm.connect(timeout=30))
        assert connected
        self.frames: list[str] = []

    def until(self, predicate, timeout: float = 60) -> str:
        def more() -> str | None:
            out = self.loop.run(self.comm.receive_output(timeout), timeout + 10)
            assert out["type"] == "websocket.send", (out, self.frames[-3:])
            self.frames.append(out["text"])
            return out["text"] if predicate(out["text"]) else None
        return wait_until(more, timeout, interval=0,
                          message=lambda: f"a frame; got {self.frames[-5:]}")

    def close(self) -> None:
        self.loop.run(self.comm.disconnect(timeout=30), 40)


@pytest.fixture
def web_replica(demo, redis_server, settings, transactional_db):
    """This process as a web replica: consumers on the test's Redis, no hub of their own,
    access and session re-checked (and groups joined again) every half second."""
    from training import cluster
    settings.CLUSTER_KUBECONFIG = str(demo.kubeconfig("dashboard"))
    settings.WATCHER_EMBEDDED = False
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                           "CONFIG": {"hosts": [redis_server.url]}}}
    settings.LIVE_RECHECK_SECONDS = 0.5
    cluster.cluster_config.cache_clear()
    permissions.ANSWERS.clear()
    yield
    cluster.cluster_config.cache_clear()
    permissions.ANSWERS.clear()


def in_group(redis_server, group: str) -> bool:
    """Whether some channel is a member of `group` (channels_redis keeps a sorted set)."""
    import redis

    with redis.Redis(port=redis_server.port, socket_timeout=1) as r:
        return r.zcard(f"asgi:group:{group}") > 0


def test_an_open_page_hears_of_changes_after_redis_restarts(runwatcher, redis_server,
                                                            web_replica, demo, loop_thread,
                                                            jobs):
    name = "redis-restart"
    jobs.create(mpijob(name, workers=1, run_seconds=3600))
    jobs.wait_condition(name, "Running")
    tab = Tab(loop_thread, demo, "alice", f"job={NS}/mpijob/{name}")
    try:
        tab.until(lambda f: f.startswith('{"type": "ready"'))
        assert in_group(redis_server, f"job.{NS}.{name}")

        redis_server.restart()  # nothing persisted: every group membership is gone
        # while Redis was away the hub may have failed to send; it keeps running regardless
        assert runwatcher.process.poll() is None, runwatcher.log()
        # the tab does nothing (no reconnect, no subscribing again): its open socket joins
        # its groups again by itself
        wait_until(lambda: in_group(redis_server, f"job.{NS}.{name}"), 30,
                   message="the open socket back in its job's group")
        jobs.patch(name, {"spec": {"runPolicy": {"suspend": True}}})
        # the header follows (pushed by the hub, or in the state sent after a pause)
        tab.until(lambda f: 'id="job-header-status"' in f and 'data-status="Suspended"' in f)
        types = [json.loads(f)["type"] for f in tab.frames if f.startswith("{")]
        assert "closing" not in types
        if "paused" in types and "ready" not in types[len(types) - types[::-1].index("paused"):]:
            # its channel failed under it (the page says "Reconnecting…"): live again
            tab.until(lambda f: f.startswith('{"type": "ready"'))
    finally:
        tab.close()


def test_sigterm_stops_runwatcher_cleanly(runwatcher):
    runwatcher.process.send_signal(signal.SIGTERM)
    assert runwatcher.process.wait(30) == 0, runwatcher.log()
    assert "runwatcher: stopped" in runwatcher.log()
