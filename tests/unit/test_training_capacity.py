"""The admin overview's arithmetic: capacity, quotas per project, waiting jobs, success."""

from __future__ import annotations

import copy
from datetime import timedelta
from decimal import Decimal

from odh.training.capacity.allocation import held_part
from odh.training.kinds import MPIJOB, PYTORCHJOB, TFJOB
from odh.training.overviews import cluster as capacity
from odh.training.overviews.cluster import (
    ClusterState,
    HistoryRecord,
    Holdings,
    WaitReason,
    cluster_capacity,
    cluster_queues,
    jobs_by_kind,
    overview,
    pod_requests,
    project_rows,
    success_rates,
    waiting_jobs,
)
from odh.training.status.summarize import summarize
from tests.unit.training_objects import (
    INSUFFICIENT_GPU,
    NS,
    T0,
    at,
    condition,
    created,
    event,
    launcher,
    mpijob,
    running,
    v1_pod,
    worker,
)

NOW = T0 + timedelta(hours=1)


def node(name: str, cpu: str = "96", memory: str = "1152Gi", gpus: int = 8,
         product: str = "NVIDIA-A100-SXM4-80GB") -> dict:
    allocatable = {"cpu": cpu, "memory": memory, "pods": "250"}
    labels = {"kubernetes.io/hostname": name}
    if gpus:
        allocatable["nvidia.com/gpu"] = str(gpus)
        labels["nvidia.com/gpu.product"] = product
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": dict(allocatable), "allocatable": allocatable}}


def plain_pod(name: str, node_name: str | None, phase: str = "Running", namespace: str = NS,
              **resources) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": namespace},
           "spec": {"containers": [{"name": "c", "image": "x",
                                    "resources": {"requests": dict(resources)}}]},
           "status": {"phase": phase}}
    if node_name:
        pod["spec"]["nodeName"] = node_name
    return pod


def quota(namespace: str, hard: dict, used: dict, name: str = "team-quota") -> dict:
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"hard": hard}, "status": {"hard": hard, "used": used}}


# -- pods ---------------------------------------------------------------------------------------
def test_pod_requests_add_containers_take_the_larger_init_container_and_overhead():
    pod = {"spec": {
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"},
                                        "limits": {"nvidia.com/gpu": "2"}}},
            {"name": "b", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
        "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "4"}}}],
        "overhead": {"cpu": "250m"}}}
    assert pod_requests(pod) == {"cpu": Decimal("4.25"), "memory": Decimal(2 * 2**30),
                                 "nvidia.com/gpu": Decimal(2)}


def test_the_part_of_a_pod_kept_for_its_holdings_holds_the_same():
    pod = plain_pod("w0", "a100-0", cpu="8", memory="64Gi", **{"nvidia.com/gpu": "3"})
    pod["metadata"].update(uid="u0", resourceVersion="7", labels={"app": "x"})
    pod["spec"]["initContainers"] = [{"name": "i", "image": "x",
                                      "resources": {"requests": {"cpu": "16"}}}]
    pod["spec"]["overhead"] = {"cpu": "250m"}
    kept = held_part(pod)
    assert pod_requests(kept) == pod_requests(pod) == {
        "cpu": Decimal("16.25"), "memory": Decimal(64 * 2**30), "nvidia.com/gpu": Decimal(3)}
    assert capacity.holds_node(kept)
    assert "labels" not in kept["metadata"] and "image" not in kept["spec"]["containers"][0]
    done = held_part(plain_pod("d", "a100-0", phase="Succeeded"))
    assert not capacity.holds_node(done)


def test_finished_and_unbound_pods_hold_nothing():
    assert capacity.holds_node(plain_pod("a", "n1"))
    assert capacity.holds_node(plain_pod("a", "n1", phase="Pending"))
    assert not capacity.holds_node(plain_pod("a", None, phase="Pending"))
    assert not capacity.holds_node(plain_pod("a", "n1", phase="Succeeded"))
    assert not capacity.holds_node(plain_pod("a", "n1", phase="Failed"))


# -- capacity -----------------------------------------------------------------------------------
def test_capacity_by_gpu_model_cpu_and_memory():
    nodes = [node("a100-0"), node("a100-1"), node("h100-0", product="NVIDIA-H100-80GB-HBM3",
                                                  gpus=4),
             node("cpu-0", cpu="32", memory="128Gi", gpus=0)]
    pods = [
        plain_pod("w0", "a100-0", cpu="8", memory="64Gi", **{"nvidia.com/gpu": "3"}),
        plain_pod("w1", "a100-1", cpu="8", memory="64Gi", **{"nvidia.com/gpu": "2"}),
        plain_pod("h", "h100-0", phase="Pending", **{"nvidia.com/gpu": "4"}),  # bound, starting
        plain_pod("done", "a100-0", phase="Succeeded", **{"nvidia.com/gpu": "8"}),
        plain_pod("unbound", None, phase="Pending", **{"nvidia.com/gpu": "8"}),
        plain_pod("launcher", "cpu-0", cpu="2", memory="8Gi"),
    ]
    cap = cluster_capacity(nodes, pods)
    assert cap.nodes == 4 and cap.gpu_nodes == 3
    assert [(m.product, m.nodes, m.allocatable, m.requested) for m in cap.gpu_models] == [
        ("NVIDIA-A100-SXM4-80GB", 2, 16, 5), ("NVIDIA-H100-80GB-HBM3", 1, 4, 4)]
    assert (cap.gpus.allocatable, cap.gpus.requested, cap.gpus.free) == (20, 9, 11)
    assert (cap.cpu.allocatable, cap.cpu.requested) == (96 * 3 + 32, 18)
    assert cap.memory.allocatable == (1152 * 3 + 128) * 2**30
    assert cap.memory.requested == 136 * 2**30
    assert cap.gpu_models[1].percent == 100
    assert cap.gpus.text == "9 of 20 GPUs requested (45%)"
    assert cap.cpu.text == "18 of 320 CPUs requested (6%)"
    assert cap.memory.text == "136Gi of 3.5Ti of memory requested (4%)"


def test_holdings_kept_pod_by_pod_add_up_as_the_pods_themselves_do():
    nodes = [node("a100-0"), node("cpu-0", cpu="32", memory="128Gi", gpus=0)]

    def with_uid(pod, uid):
        pod["metadata"]["uid"] = uid
        return pod

    kept = Holdings()
    kept.put(with_uid(plain_pod("w0", "a100-0", **{"nvidia.com/gpu": "3"}), "u0"))
    kept.put(with_uid(plain_pod("w1", "a100-0", namespace="team-cv",
                                **{"nvidia.com/gpu": "2"}), "u1"))
    kept.put(with_uid(plain_pod("l", "cpu-0", cpu="2"), "u2"))
    # w0 finishes (holds nothing now), l is deleted, w1 is put again unchanged
    kept.put(with_uid(plain_pod("w0", "a100-0", phase="Succeeded", **{"nvidia.com/gpu": "3"}),
                      "u0"))
    kept.drop("u2")
    kept.put(with_uid(plain_pod("w1", "a100-0", namespace="team-cv",
                                **{"nvidia.com/gpu": "2"}), "u1"))
    assert cluster_capacity(nodes, kept).gpus.requested == 2
    assert cluster_capacity(nodes, kept).cpu.requested == 0
    assert dict(kept.by_namespace("nvidia.com/gpu")) == {"team-cv": 2}
    # pods not kept there (read apart) are added to a copy, the kept sums stay
    other = plain_pod("x", "a100-0", **{"nvidia.com/gpu": "1"})
    assert cluster_capacity(nodes, kept.plus([other])).gpus.requested == 3
    assert cluster_capacity(nodes, kept).gpus.requested == 2
    assert cluster_capacity(nodes, Holdings.of([other])).gpus.requested == 1


def test_an_empty_cluster_has_no_gpu_models_and_no_use():
    cap = cluster_capacity([], [])
    assert cap.gpu_models == [] and cap.gpus.ratio == 0 and cap.gpus.percent == 0


def test_gpus_on_a_node_without_a_product_label_are_of_an_unknown_model():
    bare = node("old-0")
    del bare["metadata"]["labels"]["nvidia.com/gpu.product"]
    [model] = cluster_capacity([bare], []).gpu_models
    assert (model.product, model.label, model.allocatable) == ("", "Unknown model", 8)


# -- projects -----------------------------------------------------------------------------------
def _summary(job: dict, pods: list[dict] | None = None, events: list[dict] | None = None):
    return summarize(job, pods or [], events, NOW)


def test_project_rows_sorted_by_pressure_and_flagged_at_90_percent():
    quotas = [
        quota("team-nlp", {"requests.nvidia.com/gpu": "16", "requests.cpu": "192",
                           "requests.memory": "1536Gi", "pods": "100",
                           "count/mpijobs.kubeflow.org": "10"},
              {"requests.nvidia.com/gpu": "8", "requests.cpu": "66",
               "requests.memory": "520Gi", "pods": "9", "count/mpijobs.kubeflow.org": "2"}),
        quota("team-cv", {"requests.nvidia.com/gpu": "24", "count/mpijobs.kubeflow.org": "10"},
              {"requests.nvidia.com/gpu": "24", "count/mpijobs.kubeflow.org": "3"}),
        quota("research", {"requests.nvidia.com/gpu": "8"}, {"requests.nvidia.com/gpu": "3"}),
    ]
    pods = [plain_pod("w0", "n1", **{"nvidia.com/gpu": "1"}) for _ in range(3)]
    jobs = [_summary(mpijob("a", conditions=[created(), running()])),
            _summary(mpijob("b", conditions=[created()])),
            _summary(mpijob("c", conditions=[created(), condition(
                "Suspended", "True", "MPIJobSuspended", "", 5)]))]
    rows = project_rows(quotas, pods, jobs)
    assert [r.namespace for r in rows] == ["team-cv", "team-nlp", "research"]
    cv, nlp, research = rows
    assert cv.flagged and cv.pressure_percent == 100
    assert [q.text for q in cv.pressed] == ["GPUs: 24/24 (100%)"]
    assert not nlp.flagged and nlp.pressure_percent == 50
    assert (nlp.running, nlp.pending, nlp.suspended, nlp.gpus_in_use) == (1, 1, 1, 3)
    assert [(q.title, q.numbers, q.percent) for q in nlp.quotas] == [
        ("GPUs", "8/16", 50), ("CPUs", "66/192", 34), ("Memory", "520Gi/1.5Ti", 34),
        ("Pods", "9/100", 9), ("MPIJobs", "2/10", 20)]
    assert nlp.gpu_quota.numbers == "8/16" and nlp.mpijobs.numbers == "2/10"
    assert research.gpu_quota.percent == 38 and research.mpijobs is None


def test_a_quota_of_nothing_is_full_once_anything_is_used():
    rows = project_rows([quota("x", {"pods": "0", "requests.nvidia.com/gpu": "0"},
                               {"pods": "1"})], [], [])
    pods, gpu = rows[0].quotas[1], rows[0].quotas[0]
    assert (pods.resource, pods.ratio, pods.flagged) == ("pods", 1, True)
    assert (gpu.ratio, gpu.flagged) == (0, False)


def test_the_most_used_of_two_quotas_speaks_for_a_resource():
    rows = project_rows([
        quota("x", {"requests.nvidia.com/gpu": "8"}, {"requests.nvidia.com/gpu": "2"}, "a"),
        quota("x", {"requests.nvidia.com/gpu": "4"}, {"requests.nvidia.com/gpu": "2"}, "b"),
        quota("x", {"limits.nvidia.com/gpu": "2"}, {"limits.nvidia.com/gpu": "2"}, "c")],
        [], [])
    assert (rows[0].gpu_quota.quota, rows[0].gpu_quota.percent) == ("b", 50)
    assert rows[0].pressure_percent == 100


# -- jobs by type and status --------------------------------------------------------------------
def test_jobs_by_kind_and_status_with_a_row_for_every_served_kind():
    jobs = [_summary(mpijob("a", conditions=[created(), running()])),
            _summary(mpijob("b", conditions=[created()])),
            _summary(mpijob("c", conditions=[created(), running(), condition(
                "Succeeded", "True", "MPIJobSucceeded", "", 600)]))]
    rows = jobs_by_kind(jobs, [MPIJOB, PYTORCHJOB])
    assert [r.kind for r in rows] == [MPIJOB, PYTORCHJOB]
    assert rows[0].cells == [("Running", 1), ("Pending", 1), ("Suspended", 0),
                             ("Succeeded", 1), ("Failed", 0)]
    assert rows[0].total == 3 and rows[1].total == 0


# -- waiting jobs -------------------------------------------------------------------------------
def test_why_jobs_wait_and_for_how_long():
    quota_text = ('worker pod created failed: pods "q-worker-0" is forbidden: exceeded quota: '
                  "team-quota, requested: requests.nvidia.com/gpu=1, used: "
                  "requests.nvidia.com/gpu=16, limited: requests.nvidia.com/gpu=16")
    by_quota = mpijob("q", conditions=[created("q")])
    gpu_short = mpijob("g", conditions=[created("g")])
    cpu_short = mpijob("c", conditions=[created("c")])
    suspended = mpijob("s", conditions=[created("s"), condition(
        "Suspended", "True", "MPIJobSuspended", "", 1200)])
    suspended["spec"]["runPolicy"]["suspend"] = True
    queued = copy.deepcopy(suspended)
    queued["metadata"].update(name="k", uid="uid-k",
                              labels={"kueue.x-k8s.io/queue-name": "team-nlp-queue"})
    starting = mpijob("p", conditions=[created("p")])
    running_job = mpijob("r", conditions=[created("r"), running("r")])
    for job, minutes in ((by_quota, 50), (gpu_short, 40), (cpu_short, 30), (starting, 5)):
        job["metadata"]["creationTimestamp"] = at(3600 - minutes * 60)
    cpu_message = "0/6 nodes are available: 6 Insufficient cpu."
    jobs = [
        (by_quota, _summary(by_quota, [launcher("q", phase="Pending", ready=False)],
                            [event("MPIJob", "q", "MPIJobFailed", quota_text, 3)])),
        (gpu_short, _summary(gpu_short, [worker("g", 0, phase="Pending",
                                                unschedulable=INSUFFICIENT_GPU)], [])),
        (cpu_short, _summary(cpu_short, [worker("c", 0, phase="Pending",
                                                unschedulable=cpu_message)], [])),
        (suspended, _summary(suspended)),
        (queued, _summary(queued)),
        (starting, _summary(starting, [worker("p", 0, phase="Pending", ready=False)], [])),
        (running_job, _summary(running_job, [worker("r", 0)], [])),
    ]
    waiting = waiting_jobs(jobs, NOW)
    assert [(w.summary.name, w.reason, w.waited) for w in waiting] == [
        # held suspended by Kueue, it is Pending to its owner: waiting since it was made
        ("k", WaitReason.QUEUED, "1h 0m 0s"),
        ("q", WaitReason.QUOTA, "50m 0s"),
        ("g", WaitReason.GPUS, "40m 0s"),
        ("s", WaitReason.SUSPENDED, "40m 0s"),  # suspended 20 minutes after T0
        ("c", WaitReason.RESOURCES, "30m 0s"),
        ("p", WaitReason.STARTING, "5m 0s"),
    ]
    assert waiting[0].summary.status == "Pending"
    assert waiting[0].queue == "team-nlp-queue"
    # the line is the job's story (odh.training.diagnosis.story): the diagnosis' headline, ours
    assert waiting[0].detail == "Queued in team-nlp-queue"
    assert waiting[1].detail == ("Waiting for quota: the project uses 16 of its 16 GPUs and "
                                 "this job needs 2 more")
    assert waiting[1].title == "Quota exceeded"
    assert waiting[2].detail == "Waiting for GPUs: 1 GPU needed, not enough free on any node"
    assert waiting[2].title == "Not enough GPUs"
    assert waiting[4].detail == "Waiting for room on a node: Insufficient cpu"
    assert waiting[4].title == "Not enough CPU or memory"
    assert waiting[5].detail == "Creating containers (0/3 pods ready)"


# -- success rate -------------------------------------------------------------------------------
def test_success_rate_per_kind_over_seven_days_each_job_once():
    def rec(uid, kind, outcome, hours_ago):
        return HistoryRecord(uid, kind, outcome, NOW - timedelta(hours=hours_ago))

    records = [rec("1", "MPIJob", "Succeeded", 1), rec("2", "MPIJob", "Failed", 30),
               rec("3", "MPIJob", "Succeeded", 24 * 6), rec("1", "MPIJob", "Succeeded", 1),
               rec("4", "MPIJob", "Failed", 24 * 8),  # too old
               rec("5", "TFJob", "Succeeded", 2), HistoryRecord("6", "TFJob", "Failed", None),
               rec("7", "PyTorchJob", "Failed", -1)]  # in the future: clock skew, not counted
    rates = success_rates(records, NOW, kinds=["MPIJob", "PyTorchJob", "TFJob"])
    assert [(r.kind, r.succeeded, r.failed, r.percent) for r in rates] == [
        ("MPIJob", 2, 1, 67), ("PyTorchJob", 0, 0, None), ("TFJob", 1, 0, 100)]


# -- Kueue --------------------------------------------------------------------------------------
def test_cluster_queue_nominal_quota_against_usage():
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
          "metadata": {"name": "gpu-queue"},
          "spec": {"cohort": "all", "resourceGroups": [
              {"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [
                  {"name": "a100", "resources": [
                      {"name": "cpu", "nominalQuota": "192"},
                      {"name": "memory", "nominalQuota": "1536Gi"},
                      {"name": "nvidia.com/gpu", "nominalQuota": "16"}]}]}]},
          "status": {"pendingWorkloads": 2, "admittedWorkloads": 1, "flavorsUsage": [
              {"name": "a100", "resources": [
                  {"name": "cpu", "total": "66"}, {"name": "memory", "total": "520Gi"},
                  {"name": "nvidia.com/gpu", "total": "8", "borrowed": "0"}]}]}}
    [row] = cluster_queues([cq])
    assert (row.name, row.cohort, row.pending, row.admitted) == ("gpu-queue", "all", 2, 1)
    assert [(r.flavor, r.title, r.numbers, r.percent) for r in row.resources] == [
        ("a100", "CPUs", "66/192", 34), ("a100", "Memory", "520Gi/1.5Ti", 34),
        ("a100", "GPUs", "8/16", 50)]


def test_a_new_cluster_queue_without_status_uses_nothing():
    [row] = cluster_queues([{"metadata": {"name": "q"}, "spec": {"resourceGroups": [
        {"flavors": [{"name": "f", "resources": [{"name": "nvidia.com/gpu",
                                                  "nominalQuota": 4}]}]}]}}])
    assert [(r.numbers, r.percent) for r in row.resources] == [("0/4", 0)]


# -- all together -------------------------------------------------------------------------------
def test_overview_counts_finished_live_jobs_in_the_success_rate_once():
    done = mpijob("done", conditions=[created("done"), running("done"), condition(
        "Succeeded", "True", "MPIJobSucceeded", "", 1800)],
        status={"startTime": at(60), "completionTime": at(1800)})
    ddp = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
           "metadata": {"name": "ddp", "namespace": NS, "uid": "uid-ddp",
                        "creationTimestamp": at(0)},
           "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": {
               "containers": [{"name": "pytorch", "image": "x"}]}}}}},
           "status": {"conditions": [condition("Running", "True", "Running", "", 10)]}}
    state = ClusterState(
        nodes=[node("gpu-0")],
        pods=[v1_pod("ddp", "pytorchjob-controller", "Master", 0, node="gpu-0", gpus=1)],
        quotas=[], jobs=[(done, _summary(done)), (ddp, _summary(ddp, [v1_pod(
            "ddp", "pytorchjob-controller", "Master", 0, node="gpu-0", gpus=1)]))],
        kinds=[MPIJOB, PYTORCHJOB, TFJOB], queues=None, observed_at=NOW)
    history = [HistoryRecord("uid-done", "MPIJob", "Succeeded", T0 + timedelta(minutes=30)),
               HistoryRecord("gone", "MPIJob", "Failed", T0)]
    result = overview(state, history)
    assert [(r.kind, r.succeeded, r.failed) for r in result.success] == [
        ("MPIJob", 1, 1), ("PyTorchJob", 0, 0), ("TFJob", 0, 0)]
    assert result.capacity.gpus.requested == 1
    assert [(p.namespace, p.running, p.gpus_in_use) for p in result.projects] == [(NS, 1, 1)]
    assert result.queues is None and result.waiting == [] and result.flagged_projects == []
