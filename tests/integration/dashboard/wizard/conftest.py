"""Fixtures of the create-job wizard's view tests: the cluster as its admin sees it, and
the demo cluster with or without Kubeflow Trainer for the TrainJob tests (a module uses one
by overriding `demo_cluster`)."""

from __future__ import annotations

import pytest
from kubernetes import client as k8s

from tests import simcluster_process
from tests.trainer_scenario import demo_with_trainer, demo_without_trainer
from tests.wizard_cluster import ClusterJobs, give_limit_range_a_gpu_default


@pytest.fixture
def cluster_jobs(demo_cluster):
    with demo_cluster.api_client("admin") as api:
        jobs = ClusterJobs(api)
        yield jobs
        jobs.cleanup()


@pytest.fixture
def gpu_default(demo_cluster):
    with demo_cluster.api_client("admin") as api:
        restore = give_limit_range_a_gpu_default(api)
        yield
        restore()


def _cluster(tmp_path_factory, scenario: dict):
    base = tmp_path_factory.mktemp(scenario["name"])
    cluster = simcluster_process.start_scenario(base, scenario, speed=20,
                                                name=f"{scenario['name']}.yaml")
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def trainer_cluster(tmp_path_factory):
    """demo.yaml with Kubeflow Trainer and JobSet (tests/trainer_scenario.py)."""
    yield from _cluster(tmp_path_factory, demo_with_trainer())


@pytest.fixture(scope="module")
def no_trainer_cluster(tmp_path_factory):
    """demo.yaml without Kubeflow Trainer."""
    yield from _cluster(tmp_path_factory, demo_without_trainer())


@pytest.fixture
def trainjobs(demo_cluster):
    with demo_cluster.api_client("admin") as api:
        jobs = ClusterJobs(api, "trainer.kubeflow.org", "v1alpha1", "trainjobs")
        yield jobs
        jobs.cleanup()


@pytest.fixture
def tight_mpijob_quota(demo_cluster, cluster_jobs):
    """team-cv may hold no more MPIJobs than it has now (a second ResourceQuota)."""
    with demo_cluster.api_client("admin") as api:
        core = k8s.CoreV1Api(api)
        count = len(cluster_jobs.names("team-cv"))
        core.create_namespaced_resource_quota("team-cv", {
            "metadata": {"name": "wizard-tight"},
            "spec": {"hard": {"count/mpijobs.kubeflow.org": str(count)}}})
        yield
        core.delete_namespaced_resource_quota("wizard-tight", "team-cv")
