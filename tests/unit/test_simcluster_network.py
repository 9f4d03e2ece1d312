"""simcluster's NetworkPolicy evaluation (network.py): whether the MPI launcher's ssh (TCP 22)
reaches a worker, as a CNI that enforces networking.k8s.io/v1 policies would decide."""

from __future__ import annotations

import pytest

from simcluster import scenario
from simcluster.cluster import SYSTEM_USER, Cluster
from simcluster.node.network import Network, selector_matches

NS = "team-nlp"


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(speed=1.0)
    scenario.load(c, scenario.load_file(scenario.resolve("empty")), tmp_path)
    c.create_as(SYSTEM_USER, {"apiVersion": "v1", "kind": "Namespace",
                              "metadata": {"name": "monitoring", "labels": {"team": "ops"}}})
    return c


def pod(name: str, role: str, ip: str, namespace: str = NS, **labels: str) -> dict:
    return {"metadata": {"name": name, "namespace": namespace,
                         "labels": {"training.kubeflow.org/job-role": role, **labels}},
            "spec": {"containers": [{"name": "main"}]}, "status": {"podIP": ip}}


LAUNCHER = pod("pi-launcher", "launcher", "10.128.0.5")
WORKER = pod("pi-worker-0", "worker", "10.128.2.7")


def allows(cluster: Cluster, *specs: dict, source: dict = LAUNCHER) -> bool:
    """With exactly these policies in team-nlp, does the launcher's ssh get through?"""
    rt = cluster.rt("networkpolicies", "networking.k8s.io")
    for policy in list(cluster.store.iter_raw(rt, NS)):
        cluster.store.delete(rt, NS, policy["metadata"]["name"])
    for i, spec in enumerate(specs):
        cluster.create_as(SYSTEM_USER, {
            "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": f"policy-{i}", "namespace": NS}, "spec": spec})
    return Network(cluster).allows(source, WORKER, 22)


WORKERS = {"matchLabels": {"training.kubeflow.org/job-role": "worker"}}


def test_without_policies_everything_is_allowed(cluster):
    assert allows(cluster)


def test_a_policy_with_no_rules_denies_the_pods_it_selects(cluster):
    assert not allows(cluster, {"podSelector": {}})
    assert not allows(cluster, {"podSelector": WORKERS, "policyTypes": ["Ingress"]})


def test_a_policy_selecting_other_pods_changes_nothing(cluster):
    assert allows(cluster, {"podSelector": {"matchLabels": {"app": "web"}}})


@pytest.mark.parametrize("rule,allowed", [
    ({}, True),
    ({"from": [{"podSelector": {}}]}, True),
    ({"from": [{"podSelector": {"matchLabels": {"app": "web"}}}]}, False),
    ({"from": [{"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": NS}}}]}, True),
    ({"from": [{"namespaceSelector": {"matchLabels": {"team": "ops"}}}]}, False),
    ({"from": [{"ipBlock": {"cidr": "10.128.0.0/14"}}]}, True),
    ({"from": [{"ipBlock": {"cidr": "10.128.0.0/14", "except": ["10.128.0.0/23"]}}]}, False),
    ({"ports": [{"port": 22}]}, True),
    ({"ports": [{"port": "ssh"}]}, True),
    ({"ports": [{"port": 20, "endPort": 30}]}, True),
    ({"ports": [{"port": 8080}]}, False),
    ({"ports": [{"protocol": "UDP", "port": 22}]}, False),
    ({"ports": [{"protocol": "TCP"}]}, True),
])
def test_an_ingress_rule_admits_the_launcher_or_not(cluster, rule, allowed):
    assert allows(cluster, {"podSelector": WORKERS, "ingress": [rule]}) is allowed


def test_rules_of_every_policy_selecting_the_pod_add_up(cluster):
    assert allows(cluster, {"podSelector": {}},
                  {"podSelector": WORKERS, "ingress": [{"ports": [{"port": 22}]}]})


def test_a_launcher_in_another_namespace_needs_a_namespace_selector(cluster):
    elsewhere = pod("x-launcher", "launcher", "10.129.0.9", "monitoring")
    same_namespace = {"podSelector": WORKERS, "ingress": [{"from": [{"podSelector": {}}]}]}
    assert not allows(cluster, same_namespace, source=elsewhere)


def test_egress_policies_bind_the_launcher_too(cluster):
    assert not allows(cluster, {"podSelector": {"matchLabels": {
        "training.kubeflow.org/job-role": "launcher"}}, "policyTypes": ["Egress"]})
    assert allows(cluster, {"podSelector": {}, "policyTypes": ["Egress"],
                            "egress": [{"to": [{"podSelector": {}}]}]})
    # without policyTypes a policy governs ingress as well: no ingress rule, no ssh
    assert not allows(cluster, {"podSelector": {}, "egress": [{"to": [{"podSelector": {}}]}]})


@pytest.mark.parametrize("selector,matches", [
    ({}, True), (None, True),
    ({"matchLabels": {"a": "1"}}, True), ({"matchLabels": {"a": "2"}}, False),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "3"]}]}, True),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, False),
    ({"matchExpressions": [{"key": "b", "operator": "Exists"}]}, False),
    ({"matchExpressions": [{"key": "b", "operator": "DoesNotExist"}]}, True),
])
def test_label_selectors(selector, matches):
    assert selector_matches(selector, {"a": "1"}) is matches
