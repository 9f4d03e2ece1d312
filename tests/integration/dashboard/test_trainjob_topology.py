"""A TrainJob's Topology and pod count as its runtime lays its pods out: an MPI runtime adds
a Launcher, which with `runLauncherAsNode` is one of the nodes (the node Job then has one
pod fewer); a torch runtime has nodes only."""

from __future__ import annotations

import re
import uuid

import pytest
from django.urls import reverse
from kubernetes import client as k8s

from tests.html_checks import assert_valid
from tests.waiting import wait_until

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
NS = "team-nlp"


def _cards(body: str) -> tuple[list[str], list[str]]:
    """(the pods' cards, the cards of pods not created yet) of the Topology tab."""
    present = re.findall(r'<a id="topology-pod-([^"]+)"', body)
    absent = re.findall(r'<div id="topology-pod-([^"]+)" class="[^"]*dash-topo-card--absent',
                        body)
    return present, absent


@pytest.fixture
def deepspeed_job(demo_cluster):
    """alice's 2-node TrainJob on deepspeed-distributed (an MPI runtime whose Launcher runs
    as a node), on CPUs, running: its Launcher and its one node pod exist."""
    name = f"ds-topo-{uuid.uuid4().hex[:6]}"
    with demo_cluster.api_client("alice") as api:
        custom, core = k8s.CustomObjectsApi(api), k8s.CoreV1Api(api)
        custom.create_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "TrainJob",
            "metadata": {"name": name, "annotations": {"simcluster.io/run-seconds": "3600",
                                                       "opendatahub.io/username": "alice"}},
            "spec": {"runtimeRef": {"name": "deepspeed-distributed"},
                     "trainer": {"numNodes": 2, "resourcesPerNode": {
                         "limits": {"cpu": "1", "memory": "2Gi"}}}}})

        def running() -> bool:
            pods = core.list_namespaced_pod(
                NS, label_selector=f"jobset.sigs.k8s.io/jobset-name={name}").items
            return len(pods) == 2 and all(p.status.phase == "Running" for p in pods)
        try:
            wait_until(running, 60, message=f"{name}'s Launcher and node to run")
            yield name
        finally:
            custom.delete_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", name)


def test_a_launcher_that_runs_as_a_node_leaves_no_node_placeholder(alice, deepspeed_job):
    url = reverse("training-job-detail", args=[NS, "trainjob", deepspeed_job])
    body = alice.get(url, {"tab": "topology"}).content.decode()
    assert_valid(body)
    present, absent = _cards(body)
    # the node Job has numNodes - 1 pods: no "Node 1" that never comes
    assert absent == []
    assert len(present) == 2
    assert present[0].startswith(f"{deepspeed_job}-launcher-0-0-")
    assert present[1].startswith(f"{deepspeed_job}-node-0-0-")
    assert "2 pods" in body
    overview = " ".join(alice.get(url).content.decode().split())
    assert "Pods ready</dt><dd>2 of 2</dd>" in overview


def test_an_mpi_runtime_s_launcher_is_counted_with_its_nodes(bob):
    # xgboost-mpi-bench runs on mpi-distributed: a Launcher and 2 nodes, all running
    url = reverse("training-job-detail", args=["research", "trainjob", "xgboost-mpi-bench"])
    present, absent = _cards(bob.get(url, {"tab": "topology"}).content.decode())
    assert absent == [] and len(present) == 3
    assert present[0].startswith("xgboost-mpi-bench-launcher-0-0-")
    overview = " ".join(bob.get(url).content.decode().split())
    assert "Pods ready</dt><dd>3 of 3</dd>" in overview
