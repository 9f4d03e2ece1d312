"""The cluster the plan's SDK and CLI tests run against: two 8-GPU nodes and a CPU node, a
16-GPU quota in team-nlp (alice edits it), a research project bob may only view."""

from __future__ import annotations

import pytest

from odh.training.sdk import TrainingClient
from tests import simcluster_process

NS = "team-nlp"
IMAGE = "quay.io/team-nlp/bert:1.0"
PLAN_SCENARIO = {
    "name": "plan",
    "description": "Two 8-GPU nodes, a 16-GPU quota, alice editing team-nlp.",
    "users": [{"name": "alice", "password": "alice", "groups": ["data-scientists"]},
              {"name": "bob", "password": "bob", "groups": ["researchers"]},
              {"name": "admin", "password": "admin", "groups": ["cluster-admins"]}],
    "namespaces": [{"name": NS}, {"name": "research"}],
    "nodes": [{"name": "gpu-{i}", "count": 2, "cpu": 64, "memory": "512Gi", "gpus": 8},
              {"name": "cpu-0", "cpu": 32, "memory": "128Gi"}],
    "access": [{"user": "alice", "role": "edit", "namespaces": [NS]},
               {"user": "bob", "role": "view", "namespaces": ["research"]},
               {"user": "admin", "clusterRole": "cluster-admin"}],
    "objects": [{"apiVersion": "v1", "kind": "ResourceQuota",
                 "metadata": {"name": "team-quota", "namespace": NS},
                 "spec": {"hard": {"requests.nvidia.com/gpu": "16"}}}],
}


# A module takes them as its own (`cluster, alice = plan_cluster.cluster, plan_cluster.alice`):
# each module that does gets its own simcluster, started once for its tests.
@pytest.fixture(scope="module")
def cluster(request, tmp_path_factory):
    """The plan's cluster, a simcluster of the module's own (at the tests' speed, 50)."""
    name = request.module.__name__.rsplit(".", 1)[-1]
    sim = simcluster_process.start_scenario(tmp_path_factory.mktemp(name), PLAN_SCENARIO,
                                            name=f"{name}.yaml")
    yield sim
    sim.stop()


@pytest.fixture(scope="module")
def alice(cluster):
    """The SDK's client as alice (edit in team-nlp)."""
    with TrainingClient(kubeconfig=str(cluster.kubeconfig("alice"))) as client:
        yield client
