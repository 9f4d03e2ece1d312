"""Kubeflow Trainer v2's API in simcluster (`apis: [trainer, jobset]`): TrainJob,
TrainingRuntime, ClusterTrainingRuntime and JobSet served like any custom resource, as a
cluster with the Trainer and JobSet installed serves them (the TrainJob controller is
tested in test_simcluster_trainjob.py)."""

from __future__ import annotations

import json

import pytest
from kubernetes import client as k8s

from tests import simcluster_process

NS = "team-nlp"
SCENARIO = simcluster_process.admin_scenario(
    "trainer-api", "The Trainer's and JobSet's APIs, nothing else.", ["trainer", "jobset"], NS)
# a runtime as upstream's manifests/base/runtimes write one (mpi-distributed, shortened)
RUNTIME_SPEC = {
    "mlPolicy": {"numNodes": 1, "mpi": {"numProcPerNode": 1, "mpiImplementation": "OpenMPI",
                                        "sshAuthMountPath": "/home/mpiuser/.ssh",
                                        "runLauncherAsNode": False}},
    "template": {"spec": {"network": {"publishNotReadyAddresses": True},
                          "successPolicy": {"operator": "All", "targetReplicatedJobs":
                                            ["launcher"]},
                          "replicatedJobs": [
                              {"name": "launcher", "template": {"spec": {"template": {
                                  "spec": {"containers": [{
                                      "name": "node", "image": "mpioperator/mpi-pi:openmpi"}]}}}}},
                              {"name": "node", "template": {"spec": {"template": {"spec": {
                                  "containers": [{"name": "node",
                                                  "image": "mpioperator/mpi-pi:openmpi"}]}}}}}]}},
}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    base = tmp_path_factory.mktemp("trainer-api")
    with simcluster_process.admin_client(base, SCENARIO) as client:
        yield client


def test_discovery_lists_the_trainers_and_jobsets_resources(api):
    groups = {g.name: [v.version for v in g.versions]
              for g in k8s.ApisApi(api).get_api_versions().groups}
    assert groups["trainer.kubeflow.org"] == ["v1alpha1"]
    assert groups["jobset.x-k8s.io"] == ["v1alpha2"]
    custom = k8s.CustomObjectsApi(api)
    found = custom.get_api_resources("trainer.kubeflow.org", "v1alpha1")
    scoped = {r.name: r.namespaced for r in found.resources if "/" not in r.name}
    assert scoped == {"trainjobs": True, "trainingruntimes": True,
                      "clustertrainingruntimes": False}


def test_runtimes_and_jobsets_are_stored_and_read_back(api):
    custom = k8s.CustomObjectsApi(api)
    custom.create_namespaced_custom_object(
        "trainer.kubeflow.org", "v1alpha1", NS, "trainingruntimes",
        {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
         "metadata": {"name": "mpi-team", "labels": {
             "trainer.kubeflow.org/framework": "mpi"}}, "spec": RUNTIME_SPEC})
    custom.create_cluster_custom_object(
        "trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes",
        {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
         "metadata": {"name": "mpi-distributed"}, "spec": RUNTIME_SPEC})
    mine = custom.get_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NS,
                                               "trainingruntimes", "mpi-team")
    assert mine["spec"]["mlPolicy"]["mpi"]["numProcPerNode"] == 1
    assert mine["metadata"]["labels"]["trainer.kubeflow.org/framework"] == "mpi"
    listed = custom.list_cluster_custom_object("trainer.kubeflow.org", "v1alpha1",
                                               "clustertrainingruntimes")
    assert [r["metadata"]["name"] for r in listed["items"]] == ["mpi-distributed"]
    custom.create_namespaced_custom_object(
        "jobset.x-k8s.io", "v1alpha2", NS, "jobsets",
        {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
         "metadata": {"name": "pi"}, "spec": RUNTIME_SPEC["template"]["spec"]})
    jobset = custom.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", NS,
                                                 "jobsets", "pi")
    assert [r["name"] for r in jobset["spec"]["replicatedJobs"]] == ["launcher", "node"]


# -- the structural schemas: pruning, strict decoding, types, round trips ---------------------
TRAINJOB = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "llama"},
    "spec": {
        "runtimeRef": {"name": "torch-distributed"},
        "initializer": {
            "dataset": {"storageUri": "hf://tatsu-lab/alpaca",
                        "env": [{"name": "SPLIT", "value": "train"}],
                        "secretRef": {"name": "hf-token"}},
            "model": {"storageUri": "hf://meta-llama/Llama-3.2-1B"}},
        "trainer": {"image": "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime",
                    "command": ["torchrun", "train.py"], "args": ["--epochs", "3"],
                    "env": [{"name": "NCCL_DEBUG", "value": "INFO"},
                            {"name": "POD", "valueFrom": {"fieldRef": {
                                "fieldPath": "metadata.name"}}}],
                    "numNodes": 2, "numProcPerNode": 4,
                    "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4, "memory": "64Gi"},
                                         "requests": {"cpu": "8"}}},
        "labels": {"team": "nlp"},
        "annotations": {"owner": "alice"},
        "podSpecOverrides": [{"targetJobs": [{"name": "node"}],
                              "nodeSelector": {"gpu": "a100"},
                              "tolerations": [{"key": "gpu", "operator": "Exists"}]}],
        "suspend": True,
    },
}
JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "full"},
    "spec": {
        "network": {"enableDNSHostnames": True, "subdomain": "full",
                    "publishNotReadyAddresses": True},
        "successPolicy": {"operator": "Any", "targetReplicatedJobs": ["driver"]},
        "failurePolicy": {"maxRestarts": 3, "rules": [
            {"name": "oom", "action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"],
             "targetReplicatedJobs": ["workers"]}]},
        "startupPolicy": {"startupPolicyOrder": "AnyOrder"},
        "coordinator": {"replicatedJob": "driver", "jobIndex": 0, "podIndex": 0},
        "suspend": True,
        "managedBy": "kueue.x-k8s.io/multikueue",
        "ttlSecondsAfterFinished": 600,
        "replicatedJobs": [
            {"name": "driver", "replicas": 1, "template": {
                "metadata": {"labels": {"role": "driver"}},
                "spec": {"backoffLimit": 0, "completions": 1, "parallelism": 1,
                         "template": {"spec": {"restartPolicy": "Never", "containers": [
                             {"name": "driver", "image": "busybox",
                              "command": ["sh", "-c", "echo hi"]}]}}}}},
            {"name": "workers", "replicas": 2,
             "dependsOn": [{"name": "driver", "status": "Ready"}],
             "template": {"spec": {
                 "completionMode": "Indexed", "completions": 2, "parallelism": 2,
                 "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {
                     "operator": "In", "values": [42]}}]},
                 "template": {"metadata": {"annotations": {"a": "b"}}, "spec": {
                     "containers": [{"name": "w", "image": "busybox",
                                     "resources": {"limits": {"cpu": "1"}}}]}}}}}],
    },
}


def contains(stored, sent, path="") -> list[str]:
    """Where something sent is missing from, or changed in, what was stored."""
    if isinstance(sent, dict) and isinstance(stored, dict):
        return [m for k, v in sent.items()
                for m in ([f"{path}.{k}"] if k not in stored
                          else contains(stored[k], v, f"{path}.{k}"))]
    if isinstance(sent, list) and isinstance(stored, list) and len(sent) == len(stored):
        return [m for i, (a, b) in enumerate(zip(stored, sent, strict=True))
                for m in contains(a, b, f"{path}[{i}]")]
    return [] if stored == sent else [path]


def test_unknown_fields_of_a_trainjob_are_refused_when_strict_and_pruned_otherwise(api):
    custom = k8s.CustomObjectsApi(api)
    body = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "typo"},
            "spec": {"runtimeRef": {"name": "torch-distributed"},
                     "trainer": {"numNode": 2, "image": "busybox"}}}
    with pytest.raises(k8s.ApiException) as refused:
        custom.create_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NS,
                                               "trainjobs", body, field_validation="Strict")
    assert refused.value.status == 400
    assert json.loads(refused.value.body)["message"] == (
        'TrainJob in version "v1alpha1" cannot be handled as a TrainJob: strict decoding '
        'error: unknown field "spec.trainer.numNode"')
    created = custom.create_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NS,
                                                     "trainjobs", body)
    assert created["spec"]["trainer"] == {"image": "busybox"}
    # the CRD's defaults are applied
    assert created["spec"]["runtimeRef"] == {"name": "torch-distributed",
                                             "apiGroup": "trainer.kubeflow.org",
                                             "kind": "ClusterTrainingRuntime"}
    assert created["spec"]["suspend"] is False


def test_a_trainjob_value_of_the_wrong_type_is_invalid(api):
    custom = k8s.CustomObjectsApi(api)
    body = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "two"},
            "spec": {"runtimeRef": {"name": "torch-distributed"},
                     "trainer": {"numNodes": "two"}}}
    with pytest.raises(k8s.ApiException) as refused:
        custom.create_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NS,
                                               "trainjobs", body)
    assert refused.value.status == 422
    status = json.loads(refused.value.body)
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        'TrainJob.trainer.kubeflow.org "two" is invalid: spec.trainer.numNodes: Invalid '
        'value: "string": spec.trainer.numNodes in body must be of type integer: "string"')
    assert status["details"]["causes"][0]["field"] == "spec.trainer.numNodes"
    body["spec"] = {"trainer": {"numNodes": 2}}
    with pytest.raises(k8s.ApiException) as refused:
        custom.create_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NS,
                                               "trainjobs", body)
    assert refused.value.status == 422
    assert "spec.runtimeRef: Required value" in json.loads(refused.value.body)["message"]


def test_upstream_shaped_objects_round_trip(api):
    custom = k8s.CustomObjectsApi(api)
    for name, spec in (("rt-trip", RUNTIME_SPEC), ("rt-trip-torch", {
            "mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
            "podGroupPolicy": {"coscheduling": {"scheduleTimeoutSeconds": 120}},
            "template": {"metadata": {"labels": {"a": "b"}},
                         "spec": JOBSET["spec"]}})):
        custom.create_namespaced_custom_object(
            "trainer.kubeflow.org", "v1alpha1", NS, "trainingruntimes",
            {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
             "metadata": {"name": name}, "spec": spec})
        stored = custom.get_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NS,
                                                     "trainingruntimes", name)
        assert contains(stored["spec"], spec) == []
    stored = custom.get_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NS,
                                                 "trainingruntimes", "rt-trip")
    assert [r["replicas"] for r in stored["spec"]["template"]["spec"]["replicatedJobs"]] \
        == [1, 1]  # defaulted
    custom.create_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NS,
                                           "trainjobs", TRAINJOB, field_validation="Strict")
    stored = custom.get_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NS,
                                                 "trainjobs", "llama")
    assert contains(stored["spec"], TRAINJOB["spec"]) == []
    custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", NS, "jobsets",
                                           JOBSET, field_validation="Strict")
    stored = custom.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", NS,
                                                 "jobsets", "full")
    assert contains(stored["spec"], JOBSET["spec"]) == []
    status = {"conditions": [{"type": "Suspended", "status": "True", "reason": "Suspended",
                              "message": "suspended", "lastTransitionTime":
                                  "2026-01-01T00:00:00Z"}],
              "restarts": 0, "terminalState": "",
              "replicatedJobsStatus": [{"name": "driver", "ready": 0, "succeeded": 0,
                                        "failed": 0, "active": 0, "suspended": 1}]}
    patched = custom.patch_namespaced_custom_object_status(
        "jobset.x-k8s.io", "v1alpha2", NS, "jobsets", "full", {"status": status})
    assert contains(patched["status"], status) == []
