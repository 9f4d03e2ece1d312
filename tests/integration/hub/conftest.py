"""Support for the watch hub's tests: real simcluster processes, an event loop to talk to
channel layers on, and a subscriber that collects group messages.

Tests here are synchronous on purpose (no pytest-asyncio: its loops clash with
Playwright's in one session). Channel-layer calls run on a `LoopThread`, the stand-in for
daphne's event loop: the embedded hub sends on the loop that started it, and the in-memory
channel layer must be read on that same loop.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests import simcluster_process
from tests.simcluster_process import free_port
from tests.waiting import wait_until

SCENARIO = str(Path(__file__).with_name("watch-scenario.yaml"))
NS = "team-nlp"

T = TypeVar("T")


def start_cluster(tmp_path_factory, name: str, scenario: str = SCENARIO, speed: float = 50,
                  extra: list[str] | None = None) -> simcluster_process.SimCluster:
    return simcluster_process.start(tmp_path_factory.mktemp(name) / "state", scenario=scenario,
                                    speed=speed, extra=extra)


def dashboard_client(cluster: simcluster_process.SimCluster):
    """A ClusterClient with the dashboard's service-account token, as the hub makes it."""
    from odh.training.cluster.api import make_api_client
    from odh.training.cluster.client import ClusterClient

    return ClusterClient(make_api_client(cluster.api_url, cluster.token("dashboard"),
                                         str(cluster.ca_file)))


class LoopThread:
    """An asyncio loop running in a thread, to run coroutines on from synchronous tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, daemon=True, name="test-loop")
        self.thread.start()

    def _run(self) -> None:
        self.loop.run_forever()
        # Closed in its own thread: channels_redis flushes its layers on close with
        # run_until_complete, which the main thread cannot do once Playwright's loop runs.
        self.loop.close()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call(self, fn: Callable[[], T], timeout: float = 30) -> T:
        """Call a plain function from inside the loop (as async code would)."""
        async def inside() -> T:
            return fn()
        return self.run(inside(), timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class Subscriber:
    """A channel in some groups, keeping every message it receives. Like a websocket
    consumer, it names the hub's groups it is in (in English) to the hub, on joining and
    every RENEW_SECONDS while polling: the hub renders only for groups someone watches."""

    def __init__(self, loop: LoopThread, layer: Any, *groups: str) -> None:
        self.loop = loop
        self.layer = layer
        self.groups = groups
        self.channel = loop.run(layer.new_channel())
        self.messages: list[dict] = []
        self.named_at = 0.0
        self.join()

    def join(self) -> None:
        for group in self.groups:
            self.loop.run(self.layer.group_add(group, self.channel))
        self.name_groups()

    def name_groups(self) -> None:
        from training.live.hub.groups import CONTROL_GROUP
        from training.live.hub.languages import renew_message
        fed = [g for g in self.groups if g.startswith(("ns.", "job."))]
        if fed:
            self.loop.run(self.layer.group_send(CONTROL_GROUP, renew_message("en", fed)))
        self.named_at = time.monotonic()

    def leave(self) -> None:
        for group in self.groups:
            self.loop.run(self.layer.group_discard(group, self.channel))

    def poll(self, timeout: float = 0.2) -> dict | None:
        from training.live.hub.languages import RENEW_SECONDS

        if time.monotonic() - self.named_at > RENEW_SECONDS:
            self.name_groups()
        try:
            message = self.loop.run(asyncio.wait_for(self.layer.receive(self.channel), timeout),
                                    timeout + 10)
        except TimeoutError:
            return None
        self.messages.append(message)
        return message

    def about(self, job: str) -> list[dict]:
        return [m for m in self.messages if m.get("job") == job]

    def wait_for(self, predicate: Callable[[dict], bool], timeout: float = 30,
                 what: str = "a message") -> dict:
        """Receive until a message (this one or one kept earlier) satisfies `predicate`."""
        def found() -> dict | None:
            for message in self.messages:
                if predicate(message):
                    return message
            self.poll()
            return next((m for m in self.messages if predicate(m)), None)
        def state() -> str:
            recent = [(m.get("job"), m.get("status"), m.get("change"))
                      for m in self.messages[-15:]]
            return f"{what}; received {recent}"
        return wait_until(found, timeout, message=state)


@pytest.fixture(scope="module")
def loop_thread():
    loop = LoopThread()
    yield loop
    loop.close()


# -- the demo cluster and the embedded hub, one of each per test module ---------------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo scenario at speed 50."""
    sim = start_cluster(tmp_path_factory, "demo", scenario="demo")
    yield sim
    sim.stop()


@contextmanager
def embedded_hub(sim: simcluster_process.SimCluster, loop: LoopThread) -> Iterator[Any]:
    """The hub as the websocket consumer starts it (`ensure_started()` on the event loop),
    watching `sim` with the dashboard's account, publishing to the in-memory channel layer;
    ready (it has listed everything) when this yields it, stopped after."""
    from django.test import override_settings

    import training.live.hub
    from training import cluster
    with override_settings(CLUSTER_KUBECONFIG=str(sim.kubeconfig("dashboard")),
                           WATCHER_EMBEDDED=True, CHANNEL_LAYERS={
                               "default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}):
        cluster.cluster_config.cache_clear()
        training.live.hub.stop()
        try:
            hub = loop.call(training.live.hub.ensure_started)
            assert hub is not None
            # a second call (the next browser tab) gets the same hub
            assert loop.call(training.live.hub.ensure_started) is hub
            assert hub.ready.wait(30), hub.stats()
            # its database writers (transitions and history, evidence, expired sessions)
            # would write from their threads beside tests that use the test database, which
            # SQLite's shared in-memory database refuses ('database table is locked'): the
            # tests about them start writers of their own
            for part in ("transitions", "evidence", "sessions", "notifications", "signs",
                         "usage", "curves", "retries"):
                writer = getattr(hub, part)
                if writer is not None:
                    writer.stop()
                    setattr(hub, part, None)
            yield hub
        finally:
            training.live.hub.stop()
            cluster.cluster_config.cache_clear()


@pytest.fixture(scope="module")
def hub(demo, loop_thread):
    """The embedded hub on the module's demo cluster."""
    with embedded_hub(demo, loop_thread) as hub:
        yield hub


@pytest.fixture
def layer(hub):
    from channels.layers import get_channel_layer

    return get_channel_layer()


@pytest.fixture
def jobs(demo):
    """Alice's jobs in team-nlp, deleted after the test."""
    from tests.training_jobs import Jobs

    helper = Jobs(demo.api_client("alice"), NS)
    yield helper
    helper.cleanup()


def job_ref(name: str) -> str:
    """An MPIJob of team-nlp as the live groups and subscriptions name it."""
    return f"{NS}/mpijob/{name}"


# -- a real Redis server (runwatcher in its own process publishes through it) ------------------
REDIS = shutil.which("redis-server")


class RedisServer:
    def __init__(self, log_path) -> None:
        self.port = free_port()
        self.log_path = log_path
        self.process: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        with open(self.log_path, "ab") as log:  # the child keeps its own descriptor
            self.process = subprocess.Popen(
                [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no"], stdout=log, stderr=subprocess.STDOUT)
        wait_until(self.answers, 15, message="redis-server to answer PING")

    def answers(self) -> bool:
        import redis

        with redis.Redis(port=self.port, socket_timeout=1) as r:
            return bool(r.ping())

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    if REDIS is None:
        print("redis-server is not installed (apt-get install redis-server): "
              "the runwatcher test needs a real Redis")
        pytest.skip("redis-server is not installed")
    server = RedisServer(tmp_path_factory.mktemp("redis") / "redis.log")
    yield server
    server.stop()
