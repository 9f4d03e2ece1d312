"""simcluster's Kueue admission against upstream Kueue's documented behaviour (the facts are
in simcluster/README.md, "Kueue"): a queued job is suspended and gets a Workload, is
admitted when its whole gang fits the ClusterQueue's nominal quota (node selectors of the
flavor, unsuspended), waits with Kueue's own message when it does not, in priority then
FIFO order (StrictFIFO blocking, BestEffortFIFO not), and releases its quota when done."""

from __future__ import annotations

import re

from tests.integration.kueue.support import (
    GPU,
    GROUP,
    MPI_VERSION,
    NS,
    _cluster_queue,
    _condition,
    _job,
    _queued_job,
    _reserved,
    _suspended,
    _waiting_with,
    _workload_of,
)
from tests.waiting import wait_until


def test_a_queued_job_is_created_suspended_and_admitted_with_its_flavor(api, made):
    name, created = _queued_job(api, made, "admit", "gpu-queue", workers=1)
    assert _suspended(created)  # upstream's webhook: created suspended
    wait_until(lambda: _reserved(api, name), 30, message="admission")
    workload = _workload_of(api, name)
    assert re.fullmatch(rf"mpijob-{name}-[0-9a-f]{{5}}", workload["metadata"]["name"])
    assert workload["metadata"]["labels"]["kueue.x-k8s.io/job-uid"] == \
        created["metadata"]["uid"]
    [owner] = workload["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("MPIJob", name, True)
    spec = workload["spec"]
    assert spec["queueName"] == "gpu-queue" and spec["priority"] == 0
    assert [(p["name"], p["count"]) for p in spec["podSets"]] == [("launcher", 1),
                                                                  ("worker", 1)]
    admission = workload["status"]["admission"]
    assert admission["clusterQueue"] == "gpu-a100"
    worker = next(p for p in admission["podSetAssignments"] if p["name"] == "worker")
    assert worker["flavors"][GPU] == "a100" and worker["resourceUsage"][GPU] == "8"
    assert _condition(workload, "QuotaReserved")["message"] == \
        "Quota reserved in ClusterQueue gpu-a100"
    assert _condition(workload, "Admitted")["reason"] == "Admitted"
    # the job runs, its pods on the flavor's nodes
    wait_until(lambda: not _suspended(_job(api, name)), 30, message="unsuspended")
    workers = wait_until(lambda: [p for p in api["core"].list_namespaced_pod(
        NS, label_selector=f"training.kubeflow.org/job-name={name}").items
        if "-worker-" in p.metadata.name], 30, message="the Worker's pod")
    # the Worker's pod set took the flavor (the Launcher asks for nothing Kueue counts)
    assert [p.spec.node_selector for p in workers] == [
        {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}]
    events = api["core"].list_namespaced_event(
        NS, field_selector=f"involvedObject.name={name}").items
    assert {"CreatedWorkload", "Started"} <= {e.reason for e in events}


def test_a_gang_that_does_not_fit_waits_with_kueues_message_then_runs(api, made):
    big, _ = _queued_job(api, made, "big", "gpu-queue", workers=2, run_seconds=20)
    wait_until(lambda: _reserved(api, big), 30, message="the first job's admission")
    late, _ = _queued_job(api, made, "late", "gpu-queue", workers=1)
    waiting = _waiting_with(api, late)
    assert waiting["reason"] == "Pending"
    assert waiting["message"] == ("couldn't assign flavors to pod set worker: insufficient "
                                  "unused quota for nvidia.com/gpu in flavor a100, 8 more "
                                  "needed")
    assert _suspended(_job(api, late))
    assert not api["core"].list_namespaced_pod(
        NS, label_selector=f"training.kubeflow.org/job-name={late}").items
    queue = _cluster_queue(api, "gpu-a100")["status"]
    assert (queue["pendingWorkloads"], queue["admittedWorkloads"]) == (1, 1)
    [a100] = queue["flavorsReservation"]
    assert {r["name"]: r["total"] for r in a100["resources"]}[GPU] == "16"
    # the first job finishes: its quota goes to the one waiting
    wait_until(lambda: _condition(_workload_of(api, big), "Finished").get("status") == "True",
               60, message="the first job to finish")
    assert _condition(_workload_of(api, big), "Finished")["reason"] == "Succeeded"
    wait_until(lambda: _reserved(api, late), 30, message="the waiting job's admission")
    wait_until(lambda: not _suspended(_job(api, late)), 30, message="unsuspended")


def test_the_higher_priority_goes_first_and_best_effort_lets_a_smaller_one_pass(api, made):
    holder, _ = _queued_job(api, made, "holder", "gpu-queue", workers=2)
    wait_until(lambda: _reserved(api, holder), 30, message="the holder's admission")
    low, _ = _queued_job(api, made, "low", "gpu-queue", workers=1, priority="low")
    high, _ = _queued_job(api, made, "high", "gpu-queue", workers=2, priority="high")
    assert _waiting_with(api, high)["reason"] == "Pending"
    assert _workload_of(api, high)["spec"]["priority"] == 1000
    assert _workload_of(api, high)["spec"]["priorityClassName"] == "high"
    # the holder goes: 16 GPUs free; high (16, created later) is admitted before low (8)
    api["jobs"].delete_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs", holder)
    wait_until(lambda: _reserved(api, high), 30, message="the high-priority job's admission")
    assert not _reserved(api, low)
    # a job that can never fit (24 GPUs of 16) does not block a smaller one (BestEffortFIFO)
    api["jobs"].delete_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs", high)
    huge, _ = _queued_job(api, made, "huge", "gpu-queue", workers=3)
    assert "request > maximum capacity (24 > 16)" in _waiting_with(api, huge)["message"]
    wait_until(lambda: _reserved(api, low), 30, message="the smaller job passing it")


def test_strict_fifo_keeps_the_ones_behind_a_job_that_does_not_fit_waiting(api, made):
    first, _ = _queued_job(api, made, "first", "strict-queue", workers=1)
    wait_until(lambda: _reserved(api, first), 30, message="the first job's admission")
    head, _ = _queued_job(api, made, "head", "strict-queue", workers=1)
    _waiting_with(api, head)
    behind, _ = _queued_job(api, made, "behind", "strict-queue", workers=0, gpus=0)
    wait_until(lambda: _cluster_queue(api, "strict-a100")["status"]["pendingWorkloads"] == 2,
               30, message="both counted pending")
    assert not _reserved(api, behind)  # it would fit (no GPU), but the head blocks it
    api["jobs"].delete_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs", first)
    wait_until(lambda: _reserved(api, head) and _reserved(api, behind), 30,
               message="the queue to move")


def test_a_job_naming_a_queue_that_does_not_exist_waits_with_kueues_message(api, made):
    name, _ = _queued_job(api, made, "lost", "no-such-queue", workers=1)
    waiting = _waiting_with(api, name)
    assert (waiting["reason"], waiting["message"]) == (
        "Inadmissible", "LocalQueue no-such-queue doesn't exist")
    assert _suspended(_job(api, name))


# -- a cohort: borrowing and lending ----------------------------------------------------------
def _usage(api, cq: str) -> dict[str, tuple[str, str]]:
    [a100] = _cluster_queue(api, cq)["status"]["flavorsUsage"]
    return {r["name"]: (r["total"], r["borrowed"]) for r in a100["resources"]}


def test_a_queue_borrows_what_its_cohort_lends_and_no_more(api, made):
    # pool-a has 8 GPUs; pool-b lends at most 4 of its 8
    wide, _ = _queued_job(api, made, "wide", "a-queue", workers=3, gpus=4)  # 12 GPUs
    wait_until(lambda: _reserved(api, wide), 30, message="admitted by borrowing")
    wait_until(lambda: _usage(api, "pool-a").get(GPU) == ("12", "4"), 30,
               message=lambda: f"pool-a's usage: {_usage(api, 'pool-a')}")
    # pool-b keeps 4 for itself: 8 more do not fit now
    own, _ = _queued_job(api, made, "own", "b-queue", workers=1)
    assert _waiting_with(api, own)["message"] == (
        "couldn't assign flavors to pod set worker: insufficient unused quota for "
        "nvidia.com/gpu in flavor a100, 4 more needed")
    # more than nominal plus all the cohort may lend can never fit
    vast, _ = _queued_job(api, made, "vast", "a-queue", workers=2)  # 16 GPUs
    assert "request > maximum capacity (16 > 12)" in _waiting_with(api, vast)["message"]
    api["jobs"].delete_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs", wide)
    wait_until(lambda: _reserved(api, own), 30, message="pool-b's own job, once returned")


# -- preemption within a ClusterQueue --------------------------------------------------------
def test_a_higher_priority_job_preempts_a_lower_one_which_comes_back_after(api, made):
    low, _ = _queued_job(api, made, "low", "urgent-queue", workers=1, priority="low")
    wait_until(lambda: not _suspended(_job(api, low)), 30, message="the low job running")
    high, _ = _queued_job(api, made, "high", "urgent-queue", workers=1, priority="high")
    wait_until(lambda: _reserved(api, high), 30, message="the high job admitted")
    evicted = _condition(_workload_of(api, low), "Evicted")
    assert (evicted["status"], evicted["reason"]) == ("True", "Preempted")
    high_uid = _workload_of(api, high)["metadata"]["uid"]
    assert re.fullmatch(rf"Preempted to accommodate a workload \(UID: {high_uid}, JobUID: "
                        rf"[0-9a-f-]+\) due to prioritization in the ClusterQueue",
                        evicted["message"])
    assert _condition(_workload_of(api, low), "Preempted")["reason"] == "InClusterQueue"
    assert _condition(_workload_of(api, low), "QuotaReserved")["reason"] == "Pending"
    low_job = _job(api, low)
    assert _suspended(low_job)  # stopped, its pod templates as before admission
    worker = low_job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    assert "nodeSelector" not in worker
    api["jobs"].delete_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs", high)
    wait_until(lambda: _reserved(api, low), 30, message="the low job admitted again")
    back = _condition(_workload_of(api, low), "Evicted")
    assert (back["status"], back["reason"]) == ("False", "QuotaReserved")
    assert back["message"].startswith("Previously: Preempted to accommodate a workload")


# -- the visibility API ------------------------------------------------------------------------
def _pending(cluster, user: str, path: str) -> tuple[int, dict]:
    """GET a visibility API path as `user` (as `kubectl get --raw` would)."""
    import requests

    answer = requests.get(f"{cluster.api_url}/apis/visibility.kueue.x-k8s.io/v1beta1/{path}",
                          headers={"Authorization": f"Bearer {cluster.token(user)}"},
                          verify=str(cluster.ca_file), timeout=10)
    return answer.status_code, answer.json()


def test_the_visibility_api_says_each_pending_workloads_position(api, made, cluster):
    holder, _ = _queued_job(api, made, "holder", "gpu-queue", workers=2)
    wait_until(lambda: _reserved(api, holder), 30, message="the holder's admission")
    plain, _ = _queued_job(api, made, "plain", "gpu-queue", workers=1)
    low, _ = _queued_job(api, made, "low", "gpu-queue", workers=1, priority="low")
    high, _ = _queued_job(api, made, "high", "gpu-queue", workers=1, priority="high")
    for name in (plain, low, high):
        _waiting_with(api, name)
    status, summary = _pending(cluster, "admin",
                               "clusterqueues/gpu-a100/pendingworkloads")
    assert status == 200 and summary["kind"] == "PendingWorkloadsSummary"
    items = summary["items"]
    owners = [i["metadata"]["ownerReferences"][0]["name"] for i in items]
    assert owners == [high, low, plain]  # priority first, then arrival
    assert [(i["priority"], i["positionInClusterQueue"], i["positionInLocalQueue"],
             i["localQueueName"]) for i in items] == [
        (1000, 0, 0, "gpu-queue"), (10, 1, 1, "gpu-queue"), (0, 2, 2, "gpu-queue")]
    assert items[0]["metadata"]["name"] == _workload_of(api, high)["metadata"]["name"]
    status, page = _pending(cluster, "admin",
                            "clusterqueues/gpu-a100/pendingworkloads?offset=1&limit=1")
    assert [i["positionInClusterQueue"] for i in page["items"]] == [1]
    # alice may ask her LocalQueue, not the ClusterQueue
    status, mine = _pending(cluster, "alice",
                            f"namespaces/{NS}/localqueues/gpu-queue/pendingworkloads")
    assert status == 200
    assert [i["positionInLocalQueue"] for i in mine["items"]] == [0, 1, 2]
    status, refused = _pending(cluster, "alice", "clusterqueues/gpu-a100/pendingworkloads")
    assert status == 403 and refused["reason"] == "Forbidden"
    status, _ = _pending(cluster, "alice",
                         f"namespaces/{NS}/localqueues/no-such/pendingworkloads")
    assert status == 404
