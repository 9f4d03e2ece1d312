"""Kueue admitting TrainJobs in simcluster, as upstream Kueue's trainjob integration does
(simcluster/README.md, "Kueue"): a queued TrainJob is created suspended, gets a Workload
whose pod sets are its JobSet's replicated jobs (numNodes pods of resourcesPerNode),
waits with Kueue's message while the quota is taken, and once admitted runs with the
flavor's node selectors given through `podSpecOverrides`; preempted, it is suspended
again and Kueue's overrides are taken back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from kubernetes import client as k8s

from tests import simcluster_process
from tests.waiting import wait_until

NS = "team-nlp"
TRAINER = ("trainer.kubeflow.org", "v1alpha1")
JOBSET = ("jobset.x-k8s.io", "v1alpha2")
KUEUE = ("kueue.x-k8s.io", "v1beta1")
GPU = "nvidia.com/gpu"
A100 = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
RUNTIMES = yaml.safe_load((Path(__file__).resolve().parents[2] / "simcluster" / "scenarios"
                           / "trainer-runtimes.yaml").read_text())


def cluster_queue(name: str, gpus: int, **spec: object) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {"namespaceSelector": {}, **spec, "resourceGroups": [{
                "coveredResources": ["cpu", "memory", GPU],
                "flavors": [{"name": "a100", "resources": [
                    {"name": "cpu", "nominalQuota": "64"},
                    {"name": "memory", "nominalQuota": "512Gi"},
                    {"name": GPU, "nominalQuota": str(gpus)}]}]}]}}


def local_queue(name: str, cq: str) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": NS}, "spec": {"clusterQueue": cq}}


SCENARIO = simcluster_process.admin_scenario(
    "trainjob-kueue", "Kueue admitting TrainJobs.", ["kueue", "trainer", "jobset"], NS,
    nodes=[{"name": "gpu-{i}", "count": 3, "cpu": 64, "memory": "512Gi", "gpus": 8}],
    objects=RUNTIMES + [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
         "metadata": {"name": "a100"}, "spec": {"nodeLabels": A100}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "WorkloadPriorityClass",
         "metadata": {"name": "high"}, "value": 1000},
        cluster_queue("gpus", 16), cluster_queue("small", 4),
        cluster_queue("ranked", 8, preemption={"withinClusterQueue": "LowerPriority"}),
        local_queue("gpu-queue", "gpus"), local_queue("small-queue", "small"),
        local_queue("ranked-queue", "ranked")])
TIMEOUT = 60


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with simcluster_process.admin_client(tmp_path_factory.mktemp("tjkueue"), SCENARIO) as c:
        yield c


def queued_trainjob(api, name: str, queue: str, runtime: str = "torch-distributed",
                    nodes: int = 1, gpus: int = 8, run_seconds: int = 3600,
                    priority: str = "", **trainer: object) -> dict:
    labels = {"kueue.x-k8s.io/queue-name": queue}
    if priority:
        labels["kueue.x-k8s.io/priority-class"] = priority
    body = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "labels": labels,
                         "annotations": {"simcluster.io/run-seconds": str(run_seconds)}},
            "spec": {"runtimeRef": {"name": runtime},
                     "trainer": {"numNodes": nodes, "resourcesPerNode": {
                         "limits": {GPU: gpus, "cpu": "4", "memory": "16Gi"}}, **trainer}}}
    return k8s.CustomObjectsApi(api).create_namespaced_custom_object(*TRAINER, NS, "trainjobs",
                                                                     body)


def trainjob(api, name: str) -> dict:
    return k8s.CustomObjectsApi(api).get_namespaced_custom_object(*TRAINER, NS, "trainjobs",
                                                                  name)


def workload_of(api, name: str) -> dict | None:
    items = k8s.CustomObjectsApi(api).list_namespaced_custom_object(*KUEUE, NS,
                                                                    "workloads")["items"]
    return next((w for w in items if any(r["name"] == name and r["kind"] == "TrainJob"
                                         for r in w["metadata"]["ownerReferences"])), None)


def condition(obj: dict | None, type_: str) -> dict:
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or []
                 if c["type"] == type_), {})


def reserved(api, name: str) -> bool:
    return condition(workload_of(api, name), "QuotaReserved").get("status") == "True"


def waiting(api, name: str) -> dict:
    def told():
        c = condition(workload_of(api, name), "QuotaReserved")
        return c if c.get("status") == "False" else None
    return wait_until(told, TIMEOUT, message=f"{name}'s Workload to say why it waits")


def pods_of(api, name: str) -> list:
    return k8s.CoreV1Api(api).list_namespaced_pod(
        NS, label_selector=f"jobset.sigs.k8s.io/jobset-name={name}").items


def delete(api, *names: str) -> None:
    for name in names:
        k8s.CustomObjectsApi(api).delete_namespaced_custom_object(*TRAINER, NS, "trainjobs",
                                                                  name)
    wait_until(lambda: not any(workload_of(api, n) for n in names), TIMEOUT,
               message="their Workloads to go with them")


def test_a_queued_trainjob_waits_while_the_queue_is_full_and_runs_once_admitted(api):
    first = queued_trainjob(api, "first", "gpu-queue", nodes=2, run_seconds=30)
    assert first["spec"]["suspend"] is True  # Kueue's webhook
    wait_until(lambda: reserved(api, "first"), TIMEOUT, message="the first one's admission")
    workload = workload_of(api, "first")
    assert re.fullmatch(r"trainjob-first-[0-9a-f]{5}", workload["metadata"]["name"])
    assert workload["metadata"]["labels"]["kueue.x-k8s.io/job-uid"] == \
        first["metadata"]["uid"]
    assert workload["spec"]["queueName"] == "gpu-queue"
    [node] = workload["spec"]["podSets"]
    assert (node["name"], node["count"]) == ("node", 2)
    assert node["template"]["spec"]["containers"][0]["resources"]["limits"][GPU] == 8
    [assigned] = workload["status"]["admission"]["podSetAssignments"]
    assert (assigned["flavors"][GPU], assigned["resourceUsage"][GPU]) == ("a100", "16")
    # admitted: unsuspended, the flavor's labels given to the Trainer as an override
    running = wait_until(lambda: (j := trainjob(api, "first"))["spec"]["suspend"] is False
                         and j, TIMEOUT, message="the first one unsuspended")
    assert running["spec"]["podSpecOverrides"] == [
        {"targetJobs": [{"name": "node"}], "nodeSelector": A100}]
    assert running["metadata"]["annotations"]["kueue.x-k8s.io/trainjob-override-idx"] == "0"
    pods = wait_until(lambda: (p := pods_of(api, "first")) and len(p) == 2 and p, TIMEOUT,
                      message="the first one's two pods")
    assert [p.spec.node_selector for p in pods] == [A100, A100]

    # the queue's 16 GPUs are taken: the second waits, suspended, with Kueue's words
    queued_trainjob(api, "second", "gpu-queue", nodes=1, run_seconds=30)
    said = waiting(api, "second")
    assert (said["reason"], said["message"]) == (
        "Pending", "couldn't assign flavors to pod set node: insufficient unused quota for "
        "nvidia.com/gpu in flavor a100, 8 more needed")
    assert trainjob(api, "second")["spec"]["suspend"] is True
    assert not pods_of(api, "second")
    # the first finishes; its quota goes to the second, which runs to the end
    wait_until(lambda: condition(workload_of(api, "first"), "Finished").get("status") == "True",
               90, message="the first one's Workload to finish")
    assert condition(workload_of(api, "first"), "Finished")["reason"] == "Succeeded"
    wait_until(lambda: reserved(api, "second"), TIMEOUT, message="the second one's admission")
    wait_until(lambda: condition(trainjob(api, "second"), "Complete").get("status") == "True",
               90, message="the second one to complete")
    delete(api, "first", "second")


def test_an_mpi_trainjob_has_a_launcher_and_a_node_pod_set(api):
    queued_trainjob(api, "pi", "gpu-queue", runtime="mpi-distributed", nodes=2, gpus=2,
                    numProcPerNode=2)
    wait_until(lambda: reserved(api, "pi"), TIMEOUT, message="the MPI TrainJob's admission")
    podsets = workload_of(api, "pi")["spec"]["podSets"]
    assert [(p["name"], p["count"]) for p in podsets] == [("launcher", 1), ("node", 2)]
    usage = {a["name"]: a["resourceUsage"] for a in
             workload_of(api, "pi")["status"]["admission"]["podSetAssignments"]}
    assert usage["node"][GPU] == "4" and GPU not in usage["launcher"]
    job = wait_until(lambda: (j := trainjob(api, "pi"))["spec"]["suspend"] is False and j,
                     TIMEOUT, message="unsuspended")
    assert [o["targetJobs"] for o in job["spec"]["podSpecOverrides"]] == [
        [{"name": "launcher"}], [{"name": "node"}]]
    delete(api, "pi")


def test_a_trainjob_beyond_its_queues_quota_stays_suspended_saying_why(api):
    queued_trainjob(api, "too-big", "small-queue", nodes=1, gpus=8)
    said = waiting(api, "too-big")
    assert said["reason"] == "Pending"
    assert said["message"] == ("couldn't assign flavors to pod set node: insufficient quota "
                               "for nvidia.com/gpu in flavor a100, request > maximum "
                               "capacity (8 > 4)")
    job = trainjob(api, "too-big")
    assert job["spec"]["suspend"] is True and "podSpecOverrides" not in job["spec"]
    jobset = wait_until(lambda: k8s.CustomObjectsApi(api).get_namespaced_custom_object(
        *JOBSET, NS, "jobsets", "too-big"), TIMEOUT, message="its suspended JobSet")
    assert jobset["spec"]["suspend"] is True
    assert not pods_of(api, "too-big")
    delete(api, "too-big")


def test_a_preempted_trainjob_is_suspended_and_kueues_overrides_are_taken_back(api):
    queued_trainjob(api, "low", "ranked-queue", nodes=1, gpus=8)
    wait_until(lambda: pods_of(api, "low"), TIMEOUT, message="the low-priority one's pod")
    queued_trainjob(api, "urgent", "ranked-queue", nodes=1, gpus=8, priority="high")
    evicted = wait_until(lambda: condition(workload_of(api, "low"), "Evicted").get(
        "status") == "True" and workload_of(api, "low"), TIMEOUT, message="the eviction")
    assert condition(evicted, "Preempted")["reason"] == "InClusterQueue"
    stopped = trainjob(api, "low")
    assert stopped["spec"]["suspend"] is True
    assert stopped["spec"].get("podSpecOverrides") == []
    assert "kueue.x-k8s.io/trainjob-override-idx" not in stopped["metadata"].get(
        "annotations", {})
    wait_until(lambda: reserved(api, "urgent"), TIMEOUT, message="the urgent one's admission")
    wait_until(lambda: not pods_of(api, "low"), TIMEOUT, message="the low one's pods to go")
    wait_until(lambda: pods_of(api, "urgent"), TIMEOUT, message="the urgent one's pod")
    delete(api, "low", "urgent")
