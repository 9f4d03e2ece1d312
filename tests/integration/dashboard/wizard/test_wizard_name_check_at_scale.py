"""The wizard checks a job's name with one get, not a list of the project's jobs: in a
project of 2,000 MPIJobs it still says which name is taken, and lists none of them."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from kubernetes import client as k8s

from tests import simcluster_process
from tests.dashboard_support import sign_in
from tests.integration.dashboard.wizard.wizard_flow import post_step, start, unique

JOBS = 2000
NS = "team-cv"


def _suspended_job(i: int) -> dict:
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": f"bulk-{i:04d}", "namespace": NS},
            "spec": {"slotsPerWorker": 1, "runPolicy": {"suspend": True},
                     "mpiReplicaSpecs": {
                         role: {"replicas": count, "template": {"spec": {"containers": [{
                             "name": "main", "image": "quay.io/x/y:1",
                             "command": ["sleep", "1"]}]}}}
                         for role, count in (("Launcher", 1), ("Worker", 1))}}}


@pytest.fixture(scope="module")
def big_cluster(tmp_path_factory):
    cluster = simcluster_process.start(tmp_path_factory.mktemp("big") / "state",
                                       scenario="demo", speed=20)
    with cluster.api_client("admin") as api:
        # this cluster's own: the demo's quota holds team-cv to 20 MPIJobs
        for quota in k8s.CoreV1Api(api).list_namespaced_resource_quota(NS).items:
            k8s.CoreV1Api(api).delete_namespaced_resource_quota(quota.metadata.name, NS)
        custom = k8s.CustomObjectsApi(api)
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: custom.create_namespaced_custom_object(
                "kubeflow.org", "v2beta1", NS, "mpijobs", _suspended_job(i)), range(JOBS)))
    yield cluster
    cluster.stop()


@pytest.fixture
def alice_on_big(client, db, big_cluster, settings):
    from training import cluster
    from training.accounts import oauth
    settings.CLUSTER_KUBECONFIG = str(big_cluster.kubeconfig("dashboard"))
    cluster.cluster_config.cache_clear()
    oauth.reset()
    sign_in(client, big_cluster, "alice")
    yield client
    cluster.cluster_config.cache_clear()


def _mpijob_lists(cluster) -> int:
    """LIST requests of MPIJobs the API server has answered (its own /metrics)."""
    text = requests.get(f"{cluster.api_url}/metrics", verify=str(cluster.ca_file), timeout=10,
                        headers={"Authorization": f"Bearer {cluster.token('admin')}"}).text
    total = 0
    for labels, value in re.findall(r"^apiserver_request_total\{([^}]*)\} (\S+)$", text, re.M):
        seen = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if seen.get("resource") == "mpijobs" and seen.get("verb") == "LIST":
            total += int(float(value))
    return total


def test_it_names_the_taken_one_among_2000_jobs_without_listing_them(alice_on_big,
                                                                      big_cluster):
    key = start(alice_on_big)  # (a new draft reads one page of the project's jobs: is
    # this the person's first job? training/wizard/simple.py)
    lists_before = _mpijob_lists(big_cluster)
    taken = post_step(alice_on_big, key, "configuration", namespace=NS, name="bulk-1234",
                      image="quay.io/x/y:1", command="python train.py")
    assert taken.status_code == 200
    assert "already exists in team-cv" in taken.content.decode()
    free = post_step(alice_on_big, key, "configuration", namespace=NS, name=unique("free"),
                     image="quay.io/x/y:1", command="python train.py")
    assert free.status_code == 302  # on to Resources: the name is free
    assert _mpijob_lists(big_cluster) == lists_before
