"""Where a queued job stands (odh/training/queues/standing.py), read from simcluster's Kueue with
the person's own token: an administrator sees the whole ClusterQueue and what is free; a
data scientist their LocalQueue's order, and is told what they may not see."""

from __future__ import annotations

from kubernetes import client as k8s

from odh.training.cluster.client import ClusterClient
from odh.training.kinds import MPIJOB
from odh.training.queues.standing import ADMITTED, INADMISSIBLE, PREEMPTED, QUEUED
from odh.training.queues.start import progress_ends, read_standing
from tests import simcluster_process
from tests.integration.kueue.support import (
    GROUP,
    KUEUE,
    MPI_VERSION,
    NS,
    _job,
    _queued_job,
    _reserved,
    _waiting_with,
)
from tests.training_jobs import mpijob
from tests.waiting import wait_until


def _standing(cluster, user: str, api, name: str, ends_in=None):
    with ClusterClient(cluster.api_client(user)) as client:
        return read_standing(client, MPIJOB, _job(api, name), ends_in=ends_in)


def test_an_administrator_sees_the_position_in_the_cluster_queue_and_what_is_free(
        cluster, api, made):
    holder, _ = _queued_job(api, made, "holder", "gpu-queue", workers=1)
    wait_until(lambda: _reserved(api, holder), 30, message="the holder's admission")
    assert _standing(cluster, "admin", api, holder).state == ADMITTED
    first, _ = _queued_job(api, made, "first", "gpu-queue", workers=2)  # 16: waits
    second, _ = _queued_job(api, made, "second", "gpu-queue", workers=2)
    _waiting_with(api, second)
    standing = _standing(cluster, "admin", api, second)
    assert standing.state == QUEUED
    assert (standing.position, standing.of, standing.cluster_queue) == (2, 2, "gpu-a100")
    assert [a.name for a in standing.ahead] == [first] and standing.ahead_hidden == 0
    assert standing.sentence() == ("Queued in gpu-queue: position 2 of 2 (ClusterQueue "
                                   "gpu-a100), needs 16 GPUs, 8 free now")
    assert standing.ahead_text() == f"Ahead of it: {first}"
    assert "insufficient unused quota for nvidia.com/gpu" in standing.message
    assert standing.unknown == []


def test_a_data_scientist_sees_their_queues_order_and_is_told_what_they_may_not_see(
        cluster, api, made):
    holder, _ = _queued_job(api, made, "holder", "gpu-queue", workers=2)
    wait_until(lambda: _reserved(api, holder), 30, message="the holder's admission")
    waiting, _ = _queued_job(api, made, "waiting", "gpu-queue", workers=1)
    _waiting_with(api, waiting)
    standing = _standing(cluster, "alice", api, waiting)
    assert (standing.position, standing.of, standing.in_cluster_queue) == (1, 1, False)
    assert standing.free is None
    assert standing.sentence() == ("Queued in gpu-queue: position 1 of 1 in this queue "
                                   "(ClusterQueue gpu-a100), needs 8 GPUs")
    assert any("you may not see the ClusterQueue's whole queue" in u
               for u in standing.unknown)
    assert any("you may not read the ClusterQueue gpu-a100" in u for u in standing.unknown)


def test_a_queue_that_does_not_exist_is_named_with_those_that_do(cluster, api, made):
    lost, _ = _queued_job(api, made, "lost", "nlp-queue", workers=1)
    _waiting_with(api, lost)
    standing = _standing(cluster, "alice", api, lost)
    assert standing.state == INADMISSIBLE
    assert standing.sentence() == (
        "Waiting: the queue nlp-queue does not exist in this project. Queues there: "
        "a-queue, b-queue, default, gpu-queue, strict-queue, urgent-queue.")


def test_a_preempted_job_says_so(cluster, api, made):
    low, _ = _queued_job(api, made, "low", "urgent-queue", workers=1, priority="low")
    wait_until(lambda: _reserved(api, low), 30, message="the low job admitted")
    high, _ = _queued_job(api, made, "high", "urgent-queue", workers=1, priority="high")
    wait_until(lambda: _reserved(api, high), 30, message="the high job admitted")
    standing = _standing(cluster, "admin", api, low)
    assert standing.state == PREEMPTED
    # by which job and priority (the admin may read its Workload), and when it may be back
    assert standing.sentence().startswith(f"Preempted by {high}, of priority high (1000); "
                                          "Queued in urgent-queue: position 1 of 1")
    assert standing.message.startswith("Preempted to accommodate a workload")
    assert standing.since


def test_a_queued_job_is_given_an_expected_start_from_the_running_jobs_ends(
        cluster, api, made):
    holder, _ = _queued_job(api, made, "holder", "gpu-queue", workers=1)
    wait_until(lambda: _reserved(api, holder), 30, message="the holder's admission")
    first, _ = _queued_job(api, made, "first", "gpu-queue", workers=2)  # 16 of 16: waits
    second, _ = _queued_job(api, made, "second", "gpu-queue", workers=2)
    _waiting_with(api, second)

    def ends(namespace, kind, name):
        return 600.0 if (namespace, kind, name) == ("team-a", "MPIJob", holder) else None

    standing = _standing(cluster, "admin", api, first, ends_in=ends)
    assert standing.expected.seconds == 600.0  # the holder's 8 GPUs, freed then, make 16
    assert standing.expected_text() == "Expected start: in about 10m"
    # the second waits for the first, which will hold all 16 for as long as it runs
    later = _standing(cluster, "admin", api, second, ends_in=ends)
    assert later.expected.seconds is None
    assert later.expected_text() == ("Expected start: unknown: it must wait for jobs ahead "
                                     "of it to finish, which have not started yet")
    # alice may not read the ClusterQueue: no estimate, and the reason
    hers = _standing(cluster, "alice", api, first, ends_in=ends)
    assert hers.expected_text() == ("Expected start: unknown: what the ClusterQueue has "
                                    "free cannot be read")
    # the holder's end as its launcher's log tells it (the progress bar's estimate)
    with ClusterClient(cluster.api_client("admin")) as client:
        wait_until(lambda: progress_ends(client)("team-a", "MPIJob", holder) is not None, 30,
                   message="the holder's log to give an estimate")
        standing = read_standing(client, MPIJOB, _job(api, first),
                                 ends_in=progress_ends(client))
    assert standing.expected.seconds is not None and standing.expected.seconds > 0


def test_a_cluster_queue_deleted_under_a_waiting_job_is_said_in_plain_words(
        cluster, api, made):
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
          "metadata": {"name": "doomed"},
          "spec": {"namespaceSelector": {}, "resourceGroups": [{
              "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
              "flavors": [{"name": "a100", "resources": [
                  {"name": "cpu", "nominalQuota": "1"}, {"name": "memory", "nominalQuota": "1Gi"},
                  {"name": "nvidia.com/gpu", "nominalQuota": "0"}]}]}]}}
    lq = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
          "metadata": {"name": "doomed-queue", "namespace": NS},
          "spec": {"clusterQueue": "doomed"}}
    api["admin"].create_cluster_custom_object(*KUEUE, "clusterqueues", cq)
    api["admin"].create_namespaced_custom_object(*KUEUE, NS, "localqueues", lq)
    try:
        waiting, _ = _queued_job(api, made, "orphaned", "doomed-queue", workers=1)
        _waiting_with(api, waiting)
        api["admin"].delete_cluster_custom_object(*KUEUE, "clusterqueues", "doomed")
        wait_until(lambda: "doesn't exist" in _waiting_with(api, waiting)["message"], 30,
                   message="Kueue's word that the ClusterQueue is gone")
        standing = _standing(cluster, "alice", api, waiting)
        assert standing.state == INADMISSIBLE
        assert standing.sentence() == (
            "Waiting: the queue doomed-queue sends its jobs to the ClusterQueue doomed, which "
            "does not exist (any more). A cluster administrator must create it, or point the "
            "queue at another.")
    finally:
        api["admin"].delete_namespaced_custom_object(*KUEUE, NS, "localqueues", "doomed-queue")


def test_a_job_naming_a_queue_where_kueue_is_not_installed_says_so(tmp_path):
    """A cluster without Kueue: the job runs as any other (nothing suspends it), and where
    it stands in a queue is unknown, with the likely reason."""
    sim = simcluster_process.start(tmp_path / "state", scenario="empty", speed=50)
    try:
        body = mpijob("no-kueue", workers=1, run_seconds=3600)
        body["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-queue"}
        with sim.api_client("alice") as alice:
            k8s.CustomObjectsApi(alice).create_namespaced_custom_object(
                GROUP, MPI_VERSION, "team-nlp", "mpijobs", body)
        with ClusterClient(sim.api_client("alice")) as client:
            job = client.get_job(MPIJOB, "team-nlp", "no-kueue")
            assert not (job["spec"].get("runPolicy") or {}).get("suspend")
            standing = read_standing(client, MPIJOB, job)
        assert standing.sentence() == ("Queued in team-queue; where it stands is unknown: "
                                       "Kueue has not taken the job yet (is Kueue installed?)")
    finally:
        sim.stop()
