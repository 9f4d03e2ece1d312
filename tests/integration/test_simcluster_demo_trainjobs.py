"""The demo scenario's Kubeflow Trainer v2: the upstream runtimes, and a TrainJob in each
state (Succeeded, Failed with its node pods evicted, Running, Suspended, waiting in a Kueue
queue) that leaves the GPUs a newcomer's first job needs free (issue 21)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tests import simcluster_process

SCENARIOS = Path(__file__).resolve().parents[2] / "simcluster" / "scenarios"
TRAINER = ("trainer.kubeflow.org", "v1alpha1")
GPU = "nvidia.com/gpu"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    sim = simcluster_process.start(tmp_path_factory.mktemp("demo-trainer") / "state",
                                   scenario="demo", speed=50)
    with sim.api_client("admin") as api:
        yield client.CoreV1Api(api), client.CustomObjectsApi(api)
    sim.stop()


def trainjob(custom: client.CustomObjectsApi, ns: str, name: str) -> dict:
    return custom.get_namespaced_custom_object(*TRAINER, ns, "trainjobs", name)


def true_conditions(job: dict) -> dict[str, str]:
    return {c["type"]: c.get("reason", "") for c in job["status"]["conditions"]
            if c["status"] == "True"}


def pods_of(core: client.CoreV1Api, ns: str, name: str) -> list[client.V1Pod]:
    return core.list_namespaced_pod(
        ns, label_selector=f"jobset.sigs.k8s.io/jobset-name={name}").items


def test_the_demo_installs_the_upstream_runtimes_as_trainer_runtimes_yaml_has_them():
    demo = yaml.safe_load((SCENARIOS / "demo.yaml").read_text())
    runtimes = yaml.safe_load((SCENARIOS / "trainer-runtimes.yaml").read_text())
    assert [o for o in demo["objects"] if o["kind"] == "ClusterTrainingRuntime"] == runtimes


def test_a_succeeded_and_a_running_trainjob(demo):
    core, custom = demo
    done = trainjob(custom, "research", "bert-base-ner")
    assert true_conditions(done) == {"Created": "JobsCreationSucceeded",
                                     "Complete": "AllJobsCompleted"}
    running = trainjob(custom, "research", "xgboost-mpi-bench")
    assert true_conditions(running) == {"Created": "JobsCreationSucceeded"}
    assert {s["name"]: s["active"] for s in running["status"]["jobsStatus"]} == {
        "launcher": 1, "node": 1}
    pods = pods_of(core, "research", "xgboost-mpi-bench")
    assert sorted(p.status.phase for p in pods) == ["Running"] * 3


def test_a_trainjob_failed_by_its_node_pods_being_evicted(demo):
    core, custom = demo
    failed = trainjob(custom, "team-nlp", "t5-large-summarize")
    assert true_conditions(failed)["Failed"] == "FailedJobs"
    pods = pods_of(core, "team-nlp", "t5-large-summarize")
    assert len(pods) == 7  # the first try and the backoff limit's 6 more
    assert {(p.status.phase, p.status.reason) for p in pods} == {("Failed", "Evicted")}
    assert pods[0].status.message.startswith("The node was low on resource: memory.")


def test_a_suspended_trainjob_and_one_waiting_in_a_kueue_queue(demo):
    core, custom = demo
    held = trainjob(custom, "research", "detr-coco-finetune")
    assert held["spec"]["suspend"] is True
    assert true_conditions(held)["Suspended"] == "Suspended"
    assert pods_of(core, "research", "detr-coco-finetune") == []
    queued = trainjob(custom, "team-nlp", "qwen-7b-sft")
    assert queued["spec"]["suspend"] is True and pods_of(core, "team-nlp", "qwen-7b-sft") == []
    [workload] = [w for w in custom.list_namespaced_custom_object(
        "kueue.x-k8s.io", "v1beta1", "team-nlp", "workloads")["items"]
        if w["metadata"]["ownerReferences"][0]["name"] == "qwen-7b-sft"]
    reserved = next(c for c in workload["status"]["conditions"] if c["type"] == "QuotaReserved")
    assert (reserved["status"], reserved["reason"]) == ("False", "Pending")
    assert reserved["message"] == ("couldn't assign flavors to pod set node: insufficient "
                                   "unused quota for nvidia.com/gpu in flavor a100, 8 more "
                                   "needed")


def test_the_trainjobs_leave_the_newcomers_gpu_node_free(demo):
    """gpu-a100-4 is kept for a newcomer's first GPU job: no pod of the demo is on it."""
    core, _ = demo
    on_it = [p.metadata.name for p in core.list_pod_for_all_namespaces(
        field_selector="spec.nodeName=gpu-a100-4").items
        if p.status.phase in ("Pending", "Running")
        and any((c.resources.requests or {}).get(GPU) for c in p.spec.containers)]
    assert on_it == []
    running_gpus = sum(int((c.resources.requests or {}).get(GPU, 0))
                       for ns in ("team-nlp", "team-cv", "research")
                       for name in ("bert-base-ner", "t5-large-summarize",
                                    "xgboost-mpi-bench", "detr-coco-finetune", "qwen-7b-sft")
                       for p in pods_of(core, ns, name) if p.status.phase == "Running"
                       for c in p.spec.containers)
    assert running_gpus == 0
