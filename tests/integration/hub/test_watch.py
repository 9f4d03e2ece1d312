"""ResilientWatch against real simcluster processes, with the dashboard's service account:
it sees changes, resumes after the API server restarts, and relists on 410 Gone."""

from __future__ import annotations

import threading

import pytest
from kubernetes import client

from odh.training.cluster.watch import ResilientWatch, WatchedResource
from tests.integration.hub.conftest import dashboard_client, start_cluster
from tests.training_jobs import Jobs, mpijob
from tests.waiting import wait_until

MPIJOBS = WatchedResource("mpijobs", "kubeflow.org", "v2beta1")


class Recorder:
    """Collects what a watch reports: (type, name, uid)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, etype: str, obj: dict) -> None:
        meta = obj.get("metadata") or {}
        with self._lock:
            self.seen.append((etype, meta.get("name", ""), meta.get("uid", "")))

    def has(self, etype: str, name: str) -> bool:
        with self._lock:
            return any(t == etype and n == name for t, n, _ in self.seen)


def cache_of(watch: ResilientWatch) -> dict[str, str]:
    return {o["metadata"]["uid"]: o["metadata"]["resourceVersion"] for o in watch.items()}


def listed(cluster) -> dict[str, str]:
    """A fresh list of every MPIJob, as {uid: resourceVersion}."""
    with cluster.api_client("admin") as api:
        items = client.CustomObjectsApi(api).list_cluster_custom_object(
            "kubeflow.org", "v2beta1", "mpijobs")["items"]
    return {o["metadata"]["uid"]: o["metadata"]["resourceVersion"] for o in items}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = start_cluster(tmp_path_factory, "hub-watch")
    yield sim
    sim.stop()


@pytest.fixture
def started():
    """Start watches and stop them after the test, whatever happens."""
    watches: list[ResilientWatch] = []

    def start(watch: ResilientWatch) -> ResilientWatch:
        watches.append(watch.start())
        assert watch.wait_synced(30), watch.stats()
        return watch
    yield start
    for watch in watches:
        watch.stop()
        assert not watch.running


def test_sees_added_modified_deleted_with_the_dashboard_account(cluster, started):
    seen = Recorder()
    watch = started(ResilientWatch(dashboard_client(cluster), MPIJOBS, seen))
    # the first list is reported as ADDED, the scenario's job included
    assert seen.has("ADDED", "seeded-pi")
    jobs = Jobs(cluster.api_client("alice"))
    jobs.create(mpijob("watch-crud", workers=2, run_seconds=2))
    wait_until(lambda: seen.has("ADDED", "watch-crud"), message="ADDED watch-crud")
    wait_until(lambda: seen.has("MODIFIED", "watch-crud"), message="MODIFIED watch-crud")
    jobs.wait_condition("watch-crud", "Succeeded")
    jobs.delete("watch-crud")
    wait_until(lambda: seen.has("DELETED", "watch-crud"), message="DELETED watch-crud")
    wait_until(lambda: cache_of(watch) == listed(cluster),
               message=lambda: f"cache {cache_of(watch)} == list {listed(cluster)}")
    assert watch.errors == 0 and watch.relists == 0
    assert watch.events >= 3


def test_resumes_after_the_api_server_restarts(tmp_path_factory, started):
    sim = start_cluster(tmp_path_factory, "hub-restart")
    try:
        seen = Recorder()
        watch = started(ResilientWatch(dashboard_client(sim), MPIJOBS, seen,
                                       backoff_initial=0.1, backoff_max=1.0))
        jobs = Jobs(sim.api_client("alice"))
        jobs.create(mpijob("before-restart", workers=1, run_seconds=3600))
        wait_until(lambda: seen.has("ADDED", "before-restart"))
        old_seeded = {u for t, n, u in seen.seen if n == "seeded-pi"}

        # simcluster keeps its state in memory: after a restart the scenario is loaded
        # again (seeded-pi recreated with a new uid) and before-restart is gone
        sim.restart()
        wait_until(lambda: seen.has("DELETED", "before-restart"),
                   message=lambda: f"DELETED before-restart; {watch.stats()}")
        wait_until(lambda: cache_of(watch) == listed(sim),
                   message=lambda: f"cache {cache_of(watch)} == list {listed(sim)}")
        new_seeded = {o["metadata"]["uid"] for o in watch.items()
                      if o["metadata"]["name"] == "seeded-pi"}
        assert new_seeded and not new_seeded & old_seeded
        assert watch.errors >= 1 and watch.reconnects >= 1 and watch.relists >= 1

        # and it keeps watching the new server
        Jobs(sim.api_client("alice")).create(mpijob("after-restart", workers=1,
                                                    run_seconds=2))
        wait_until(lambda: seen.has("ADDED", "after-restart"),
                   message=lambda: f"ADDED after-restart; {watch.stats()}")
    finally:
        sim.stop()


def test_relists_when_the_resource_version_is_too_old(tmp_path_factory, started):
    """410 Gone: the server keeps 20 changes of history; a watch whose resourceVersion
    falls behind by more must list again. Without bookmarks, a watch of pods nobody
    creates keeps its resourceVersion while the cluster changes around it, and opening it
    again (every second here) is refused with 410."""
    sim = start_cluster(tmp_path_factory, "hub-410", extra=["--watch-history", "20"])
    try:
        quiet = WatchedResource("pods", label_selector="training.kubeflow.org/job-name=nobody")
        seen = Recorder()
        watch = started(ResilientWatch(dashboard_client(sim), quiet, seen, bookmarks=False,
                                       timeout_seconds=1))
        with sim.api_client("alice") as api:
            core = client.CoreV1Api(api)
            for i in range(25):
                core.create_namespaced_config_map("team-nlp", {
                    "metadata": {"name": f"noise-{i}"}, "data": {"i": str(i)}})
        wait_until(lambda: watch.expired >= 1 and watch.relists >= 1,
                   message=lambda: f"a 410 and a relist; {watch.stats()}")
        assert watch.errors == 0, watch.stats()  # 410 is expected, not an error

        # after relisting it watches from a fresh resourceVersion and sees new pods again
        with sim.api_client("alice") as api:
            client.CoreV1Api(api).create_namespaced_pod("team-nlp", {
                "metadata": {"name": "nobody-worker-0",
                             "labels": {"training.kubeflow.org/job-name": "nobody"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
        wait_until(lambda: seen.has("ADDED", "nobody-worker-0"),
                   message=lambda: f"ADDED nobody-worker-0; {watch.stats()}")
    finally:
        sim.stop()
