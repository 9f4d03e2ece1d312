"""Kubeflow Trainer v2's API in simcluster (`apis: [trainer, jobset]`): TrainJob,
TrainingRuntime, ClusterTrainingRuntime and JobSet served like any custom resource, as a
cluster with the Trainer and JobSet installed serves them (no controller acts on them yet:
issue 23)."""

from __future__ import annotations

import pytest
from kubernetes import client as k8s

from tests import simcluster_process

NS = "team-nlp"
SCENARIO = {
    "name": "trainer-api",
    "description": "The Trainer's and JobSet's APIs, nothing else.",
    "apis": ["trainer", "jobset"],
    "users": [{"name": "admin", "password": "admin", "groups": ["cluster-admins"]}],
    "namespaces": [{"name": NS}],
    "access": [{"user": "admin", "clusterRole": "cluster-admin"}],
}
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
    sim = simcluster_process.start_scenario(tmp_path_factory.mktemp("trainer-api"), SCENARIO,
                                            name="trainer-api.yaml")
    try:
        with sim.api_client("admin") as client:
            yield client
    finally:
        sim.stop()


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
