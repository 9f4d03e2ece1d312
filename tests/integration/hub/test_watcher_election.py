"""Two `runwatcher` replicas, one active: they elect it through a coordination.k8s.io Lease
(simcluster serves Leases); the other stands by (ready, not watching) and takes over
within the Lease's duration when the active one dies, and pages keep hearing of changes
through Redis."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import requests
from kubernetes import client as k8s

from tests.integration.hub.conftest import NS, Subscriber, job_ref
from tests.simcluster_process import ROOT, free_port
from tests.training_jobs import mpijob
from tests.waiting import wait_until

LEASE = ("mpijob-dashboard", "mpijob-dashboard-watcher")
LEASE_SECONDS = 3


class Replica:
    """One runwatcher process with leader election on, its log and its metrics port."""

    def __init__(self, name: str, demo, redis_server, tmp_path) -> None:
        self.name = name
        self.port = free_port()
        self.log_path = tmp_path / f"{name}.log"
        env = dict(os.environ, PYTHONUNBUFFERED="1", REDIS_URL=redis_server.url,
                   CLUSTER_KUBECONFIG=str(demo.kubeconfig("dashboard")),
                   DJANGO_SETTINGS_MODULE="dashboard.settings", WATCHER_EMBEDDED="false",
                   WATCHER_LEADER_ELECTION="true", WATCHER_LEASE_SECONDS=str(LEASE_SECONDS),
                   WATCHER_LEASE_NAMESPACE=LEASE[0])
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "runwatcher", "--metrics-port", str(self.port),
                 "--metrics-address", "127.0.0.1"], cwd=ROOT, env=env, stdout=log,
                stderr=subprocess.STDOUT)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def holder(self) -> str:
        found = re.search(r"standing by for the lease \S+ as (\S+)", self.log())
        return found.group(1) if found else ""

    def readyz(self) -> tuple[int, str]:
        r = requests.get(f"http://127.0.0.1:{self.port}/readyz", timeout=5)
        return r.status_code, r.text.strip()

    def leader_gauge(self) -> float | None:
        text = requests.get(f"http://127.0.0.1:{self.port}/metrics", timeout=5).text
        found = re.search(r"^mpijob_dashboard_watcher_leader (\S+)$", text, re.M)
        return float(found.group(1)) if found else None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@pytest.fixture
def replicas(demo, redis_server, tmp_path):
    started = [Replica(name, demo, redis_server, tmp_path) for name in ("a", "b")]
    yield started
    for replica in started:
        replica.stop()


@pytest.fixture(scope="module")
def redis_layer(redis_server):
    from channels_redis.core import RedisChannelLayer

    return RedisChannelLayer(hosts=[redis_server.url])


def lease_holder(demo) -> str:
    with demo.api_client("admin") as api:
        lease = k8s.CoordinationV1Api(api).read_namespaced_lease(LEASE[1], LEASE[0])
    return lease.spec.holder_identity or ""


def test_one_replica_watches_and_the_other_takes_over_when_it_dies(
        replicas, demo, redis_layer, loop_thread, jobs):
    def settled():
        leaders = [r for r in replicas if "runwatcher: READY" in r.log()]
        waiting = [r for r in replicas if r.holder() and "runwatcher: leading" not in r.log()]
        return (leaders[0], waiting[0]) if len(leaders) == 1 and len(waiting) == 1 else None

    leader, standby = wait_until(settled, 60, message=lambda: "\n\n".join(
        f"--- {r.name}\n{r.log()}" for r in replicas))
    assert lease_holder(demo) == leader.holder()
    assert standby.readyz() == (200, "standing by")
    assert (leader.leader_gauge(), standby.leader_gauge()) == (1.0, 0.0)

    page = Subscriber(loop_thread, redis_layer, f"job.{NS}.elect-one", f"job.{NS}.elect-two")
    jobs.create(mpijob("elect-one", workers=1, run_seconds=3600))
    page.wait_for(lambda m: m["job"] == job_ref("elect-one") and m["status"] == "Running",
                  what="the active replica's push")

    leader.stop()  # killed: no chance to give the Lease up
    wait_until(lambda: "runwatcher: READY" in standby.log(), 10 * LEASE_SECONDS,
               message=lambda: "the standby to take over:\n" + standby.log())
    assert lease_holder(demo) == standby.holder()
    assert standby.readyz() == (200, "ready")
    jobs.create(mpijob("elect-two", workers=1, run_seconds=3600))
    page.wait_for(lambda m: m["job"] == job_ref("elect-two") and m["status"] == "Running",
                  what="the new active replica's push")


def test_a_replica_stopped_on_purpose_gives_the_lease_up(replicas, demo):
    wait_until(lambda: any("runwatcher: READY" in r.log() for r in replicas), 60,
               message=lambda: "\n".join(r.log() for r in replicas))
    leader = next(r for r in replicas if "runwatcher: READY" in r.log())
    standby = next(r for r in replicas if r is not leader)
    leader.process.terminate()  # SIGTERM, as a rollout sends it
    assert leader.process.wait(30) == 0
    assert "runwatcher: stopped" in leader.log()
    wait_until(lambda: "runwatcher: leading" in standby.log(), 10 * LEASE_SECONDS,
               message=lambda: standby.log())
    assert lease_holder(demo) == standby.holder()
