"""Live logs through the watch hub: one upstream follow stream per pod, whoever watches.

Driven as the websocket consumers drive it: lease messages to the hub's control group on
the channel layer, lines back on `logs.<ns>.<pod>`. Embedded (in-memory layer, the hub on
this process's loop) against the demo cluster, then production (`manage.py runwatcher`
publishing through a real Redis), then a browser tab's socket (the consumer) end to end.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.integration.hub.conftest import NS, LoopThread, Subscriber
from tests.training_jobs import Jobs, mpijob
from tests.waiting import wait_until
from training import permissions

EPOCH_LINE = re.compile(r"Epoch (\d+)/(\d+)(?: step (\d+)/\d+)?:")


def chatty_job(name: str, run_seconds: float = 3000, epochs: int = 100) -> dict:
    """An MPIJob whose launcher prints an epoch line every ~0.3 s at speed 50."""
    return mpijob(name, workers=2, run_seconds=run_seconds,
                  annotations={"simcluster.io/epochs": str(epochs)})


def launcher_pod(jobs: Jobs, name: str) -> str:
    pods = wait_until(lambda: jobs.job_pods(name, "launcher"), 60,
                      message=f"the launcher pod of {name}")
    return pods[0].metadata.name


def lease(loop: LoopThread, layer, action: str, subscriber: str, pod: str,
          container: str = "launcher") -> None:
    from training.live.hub.groups import CONTROL_GROUP
    from training.live.hub.logs import lease_message
    loop.run(layer.group_send(CONTROL_GROUP, lease_message(action, subscriber, NS, pod,
                                                           container)))


def lines_of(sub: Subscriber) -> list[tuple[str, str]]:
    return [tuple(x) for m in sub.messages if m.get("type") == "hub.log" for x in m["lines"]]


def receive_until(sub: Subscriber, predicate, timeout: float = 60, what: str = "lines"):
    def check():
        sub.poll()
        return predicate()
    return wait_until(check, timeout, message=lambda: f"{what}; have {lines_of(sub)[-5:]}")


def test_two_viewers_share_one_upstream_stream(hub, loop_thread, layer, jobs):
    from training.live.hub.groups import logs_group
    from training.live.hub.logs import SUBSCRIBE, UNSUBSCRIBE

    streams = hub.logs.streams
    name = "logs-shared"
    jobs.create(chatty_job(name))
    pod = launcher_pod(jobs, name)
    opened_before = streams.opened
    a = Subscriber(loop_thread, layer, logs_group(NS, pod))
    b = Subscriber(loop_thread, layer, logs_group(NS, pod))
    lease(loop_thread, layer, SUBSCRIBE, a.channel, pod)
    lease(loop_thread, layer, SUBSCRIBE, b.channel, pod)
    wait_until(lambda: streams.subscribers((NS, pod, "launcher")) == 2, 30,
               message=lambda: f"two leases; {hub.logs.stats()}")
    assert hub.logs.active_streams() == 1
    receive_until(a, lambda: sum(1 for _, t in lines_of(a) if EPOCH_LINE.search(t)) >= 6,
                  what="six epoch lines for viewer A")
    receive_until(b, lambda: len(lines_of(b)) >= len(lines_of(a)), what="B has what A has")
    # one follow request for both (it may have been opened again only if it broke)
    assert streams.opened - opened_before == 1, hub.logs.stats()
    assert streams.open_connections() == 1
    # the same lines, in the order written: times never go back, epochs only forward
    assert lines_of(b)[:len(lines_of(a))] == lines_of(a)
    stamps = [ts for ts, _ in lines_of(a)]
    assert stamps == sorted(stamps)
    progress = [(int(m.group(1)), int(m.group(3) or 10**6))
                for _, text in lines_of(a) if (m := EPOCH_LINE.search(text))]
    assert progress == sorted(progress)
    assert all(m["type"] == "hub.log" and m["pod"] == pod and m["namespace"] == NS
               for m in a.messages)

    lease(loop_thread, layer, UNSUBSCRIBE, a.channel, pod)
    wait_until(lambda: streams.subscribers((NS, pod, "launcher")) == 1, 30)
    assert hub.logs.active_streams() == 1  # B still watches
    lease(loop_thread, layer, UNSUBSCRIBE, b.channel, pod)
    wait_until(lambda: hub.logs.active_streams() == 0, 30, message=lambda: hub.logs.stats())
    wait_until(lambda: streams.open_connections() == 0, 30, message=lambda: hub.logs.stats())
    a.leave()
    b.leave()


def test_a_lease_not_renewed_runs_out(hub, loop_thread, layer, jobs):
    from training.live.hub.logs import RENEW, SUBSCRIBE

    streams = hub.logs.streams
    name = "logs-lease"
    jobs.create(chatty_job(name))
    pod = launcher_pod(jobs, name)
    saved = streams.lease_seconds
    streams.lease_seconds = 1.5  # as if a web process died 60 s ago
    try:
        lease(loop_thread, layer, SUBSCRIBE, "specific.crashed!web", pod)
        lease(loop_thread, layer, SUBSCRIBE, "specific.alive!web", pod)
        wait_until(lambda: streams.subscribers((NS, pod, "launcher")) == 2, 30)

        def renew_alive():
            lease(loop_thread, layer, RENEW, "specific.alive!web", pod)
            return streams.subscribers((NS, pod, "launcher")) == 1
        wait_until(renew_alive, 30, interval=0.3, message=lambda: hub.logs.stats())
        assert hub.logs.active_streams() == 1  # renewed: still followed
        wait_until(lambda: hub.logs.active_streams() == 0, 30,
                   message=lambda: hub.logs.stats())  # and now nobody renews
        wait_until(lambda: streams.open_connections() == 0, 30)
    finally:
        streams.lease_seconds = saved


def test_a_pod_that_ends_closes_its_stream(hub, loop_thread, layer, jobs):
    from training.live.hub.groups import logs_group
    from training.live.hub.logs import SUBSCRIBE

    name = "logs-ends"
    jobs.create(chatty_job(name, run_seconds=150, epochs=5))
    pod = launcher_pod(jobs, name)
    viewer = Subscriber(loop_thread, layer, logs_group(NS, pod))
    lease(loop_thread, layer, SUBSCRIBE, viewer.channel, pod)
    end = viewer.wait_for(lambda m: m.get("type") == "hub.log_end", 60, what="the end")
    assert end == {"type": "hub.log_end", "namespace": NS, "pod": pod,
                   "container": "launcher", "reason": "finished"}
    texts = [t for _, t in lines_of(viewer)]
    assert any(t.startswith("Training complete: 5 epochs") for t in texts), texts[-5:]
    assert viewer.messages[-1] is end  # nothing after the end
    wait_until(lambda: hub.logs.active_streams() == 0, 30, message=lambda: hub.logs.stats())
    viewer.leave()


def test_malformed_leases_are_ignored(hub, loop_thread, layer):
    from training.live.hub.groups import CONTROL_GROUP

    before = hub.logs.control_messages
    for message in ({"type": "logs.subscribe", "namespace": "../etc", "pod": "x",
                     "subscriber": "s"},
                    {"type": "logs.subscribe", "namespace": NS, "pod": "Bad Pod",
                     "subscriber": "s"},
                    {"type": "logs.subscribe", "namespace": NS, "pod": "p"},
                    {"type": "logs.what", "namespace": NS, "pod": "p", "subscriber": "s"}):
        loop_thread.run(layer.group_send(CONTROL_GROUP, message))
    wait_until(lambda: hub.logs.control_messages - before == 4, 30)
    assert hub.logs.active_streams() == 0


# -- production: runwatcher publishes through Redis -----------------------------------------------
def test_runwatcher_streams_logs_through_redis(demo, tmp_path_factory, loop_thread):
    from tests.integration.hub.conftest import REDIS, RedisServer
    from tests.integration.hub.test_runwatcher_redis import Runwatcher

    if REDIS is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    from channels_redis.core import RedisChannelLayer

    from training.live.hub.groups import logs_group
    from training.live.hub.logs import SUBSCRIBE, UNSUBSCRIBE_ALL, lease_message

    redis = RedisServer(tmp_path_factory.mktemp("logs-redis") / "redis.log")
    watcher = Runwatcher(demo, redis, tmp_path_factory.mktemp("logs-runwatcher") / "log")
    jobs = Jobs(demo.api_client("alice"), NS)
    try:
        layer = RedisChannelLayer(hosts=[redis.url])
        name = "logs-redis"
        jobs.create(chatty_job(name))
        pod = launcher_pod(jobs, name)
        viewer = Subscriber(loop_thread, layer, logs_group(NS, pod))
        message = lease_message(SUBSCRIBE, viewer.channel, NS, pod, "launcher")

        # the web replica's consumer leases the stream; runwatcher follows and publishes
        def lines_arrive() -> bool:
            loop_thread.run(layer.group_send("hub.control", message))  # renewals, as pages do
            viewer.poll(0.5)
            return sum(1 for _, t in lines_of(viewer) if EPOCH_LINE.search(t)) >= 3
        wait_until(lines_arrive, 60, interval=0.5,
                   message=lambda: f"epoch lines through Redis: {watcher.log()[-2000:]}")
        loop_thread.run(layer.group_send("hub.control",
                                         lease_message(UNSUBSCRIBE_ALL, viewer.channel)))
        viewer.leave()
    finally:
        jobs.cleanup()
        watcher.process.terminate()
        watcher.process.wait(30)
        redis.stop()


# -- a browser tab's socket: the consumer's `logs` subscription ------------------------------
@pytest.fixture
def live_settings(hub, demo, settings):
    from training.accounts import oauth
    settings.CLUSTER_KUBECONFIG = str(demo.kubeconfig("dashboard"))
    settings.OAUTH_CLIENT_SECRET = "mpijob-dashboard-demo-secret"
    # CHANNEL_LAYERS stays as the hub fixture set it: changing it makes a new in-memory layer
    oauth.reset()
    permissions.ANSWERS.clear()
    yield
    permissions.ANSWERS.clear()


def _socket(loop: LoopThread, demo, username: str, query: str):
    from channels.testing import WebsocketCommunicator
    from django.conf import settings
    from django.test import Client

    from dashboard.asgi import application
    from tests.dashboard_support import sign_in

    browser = Client()
    sign_in(browser, demo, username)
    cookie = f"{settings.SESSION_COOKIE_NAME}={browser.cookies[settings.SESSION_COOKIE_NAME].value}"
    comm = WebsocketCommunicator(application, f"/ws/live/?{query}", headers=[
        (b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000"),
        (b"cookie", cookie.encode())])
    connected, _ = loop.run(comm.connect(timeout=30))
    assert connected
    return comm


def _frames_until(loop: LoopThread, comm, predicate, timeout: float = 60) -> list:
    frames = []

    def more():
        out = loop.run(comm.receive_output(timeout), timeout + 10)
        assert out["type"] == "websocket.send", (out, frames[-3:])
        frame = json.loads(out["text"]) if out["text"].startswith("{") else out["text"]
        frames.append(frame)
        return predicate(frame)
    wait_until(more, timeout, interval=0, message=lambda: f"a frame; have {frames[-3:]}")
    return frames


def test_a_tab_follows_a_pod_and_gives_its_lease_up_when_it_closes(
        live_settings, hub, demo, jobs, loop_thread, transactional_db):
    name = "logs-socket"
    jobs.create(chatty_job(name))
    pod = launcher_pod(jobs, name)
    jobs.wait_condition(name, "Running")
    comm = _socket(loop_thread, demo, "alice", f"job={NS}/mpijob/{name}")
    _frames_until(loop_thread, comm, lambda f: isinstance(f, dict) and f["type"] == "ready")
    value = f"{NS}/{pod}/launcher"
    loop_thread.run(comm.send_to(text_data=json.dumps(
        {"action": "subscribe", "kind": "logs", "value": value})))
    frames = _frames_until(loop_thread, comm, lambda f: isinstance(f, dict)
                           and f["type"] == "subscribed")
    snapshot = next(f for f in frames if isinstance(f, dict) and f.get("snapshot"))
    assert (snapshot["type"], snapshot["pod"], snapshot["container"]) == ("log", pod,
                                                                           "launcher")
    assert any("Horovod rank 0/2" in text for _, text in snapshot["lines"])
    assert hub.logs.streams.subscribers((NS, pod, "launcher")) == 1
    # then the lines written after, pushed by the hub's one stream
    last = snapshot["lines"][-1][0]
    live = _frames_until(loop_thread, comm, lambda f: isinstance(f, dict)
                         and f["type"] == "log" and not f.get("snapshot")
                         and any(ts > last and EPOCH_LINE.search(t) for ts, t in f["lines"]))
    assert live[-1]["pod"] == pod

    loop_thread.run(comm.disconnect(timeout=30), 40)
    wait_until(lambda: hub.logs.streams.subscribers((NS, pod, "launcher")) == 0, 30,
               message=lambda: hub.logs.stats())
    wait_until(lambda: hub.logs.active_streams() == 0, 30)


def test_bob_may_not_follow_a_team_nlp_pod(live_settings, hub, demo, loop_thread,
                                           transactional_db):
    comm = _socket(loop_thread, demo, "bob", "ns=research")
    _frames_until(loop_thread, comm, lambda f: isinstance(f, dict) and f["type"] == "ready")
    loop_thread.run(comm.send_to(text_data=json.dumps(
        {"action": "subscribe", "kind": "logs", "value": f"{NS}/bert-large-pretrain-worker-1"})))
    frames = _frames_until(loop_thread, comm, lambda f: isinstance(f, dict)
                           and f["type"] == "closing")
    assert frames[-1]["code"] == 4403
    assert "team-nlp" in frames[-1]["reason"]
    out = loop_thread.run(comm.receive_output(30), 40)
    assert (out["type"], out["code"]) == ("websocket.close", 4403)
    assert hub.logs.streams.subscribers((NS, "bert-large-pretrain-worker-1", "")) == 0


def test_one_persons_tabs_share_one_limit_of_followed_pods(live_settings, hub, demo, jobs,
                                                           loop_thread, transactional_db):
    """Each socket names its person (a digest of the token) in its leases; over the
    hub's limit per person, a pod is not followed and the page is told why."""
    from odh.training.cluster.access import identity
    name = "logs-owner-cap"
    jobs.create(chatty_job(name))
    pod = launcher_pod(jobs, name)
    jobs.wait_condition(name, "Running")
    worker = f"{name}-worker-0"
    streams = hub.logs.streams
    streams.max_streams_per_owner = 1
    try:
        comm = _socket(loop_thread, demo, "alice", f"job={NS}/mpijob/{name}")
        _frames_until(loop_thread, comm, lambda f: isinstance(f, dict) and f["type"] == "ready")
        loop_thread.run(comm.send_to(text_data=json.dumps(
            {"action": "subscribe", "kind": "logs", "value": f"{NS}/{pod}/launcher"})))
        wait_until(lambda: streams.subscribers((NS, pod, "launcher")) == 1, 30,
                   message=lambda: hub.logs.stats())
        [owner] = streams.owners((NS, pod, "launcher"))
        assert len(owner) == len(identity("any token")) and "sha256~" not in owner
        # a second pod for the same person: refused, and the page hears "capacity"
        loop_thread.run(comm.send_to(text_data=json.dumps(
            {"action": "subscribe", "kind": "logs", "value": f"{NS}/{worker}"})))
        frames = _frames_until(loop_thread, comm, lambda f: isinstance(f, dict)
                               and f["type"] == "log_end" and f["pod"] == worker)
        assert frames[-1]["reason"] == "capacity"
        assert streams.subscribers((NS, worker, "")) == 0
        assert streams.stats()["refused"] >= 1
        loop_thread.run(comm.disconnect(timeout=30), 40)
    finally:
        streams.max_streams_per_owner = 64
