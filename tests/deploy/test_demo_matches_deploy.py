"""The demo cluster (simcluster/scenarios/demo.yaml) gives the dashboard's service account
exactly the rights deploy/ gives the watcher on OpenShift, so `make demo` and the tests
exercise production's rights: a right added to one must be added to the other."""

from __future__ import annotations

import yaml

from tests.deploy import manifests as m

DEMO = m.ROOT / "simcluster" / "scenarios" / "demo.yaml"


def grants(role: dict) -> set[tuple[str, str, str]]:
    return {(group, resource, verb) for rule in role["rules"] for group in rule["apiGroups"]
            for resource in rule["resources"] for verb in rule["verbs"]}


def test_the_demo_service_account_has_the_watchers_rights():
    scenario = yaml.safe_load(DEMO.read_text())
    (account,) = [a for a in scenario["serviceAccounts"] if a.get("kubeconfig") == "dashboard"]
    # one account in the demo for what deploy gives two: the watcher's and the web pods'
    demo_roles = {o["metadata"]["name"]: o for o in scenario["objects"]
                  if o["kind"] == "ClusterRole"
                  and o["metadata"]["name"] in account["clusterRoles"]}
    for path in ("base/rbac-watcher.yaml", "base/rbac-web.yaml"):
        (deploy_role,) = [o for o in m.load(path) if o["kind"] == "ClusterRole"]
        assert grants(demo_roles.pop(deploy_role["metadata"]["name"])) == grants(deploy_role)
    assert demo_roles == {}


def test_the_demo_oauth_client_is_registered_as_deploy_registers_it():
    scenario = yaml.safe_load(DEMO.read_text())
    (client,) = [c for c in scenario["oauth"]["clients"] if c["name"] == "mpijob-dashboard"]
    (deploy_client,) = m.load("base/oauthclient.yaml")
    assert client["grantMethod"] == deploy_client["grantMethod"] == "auto"
    for uri in client["redirectURIs"] + deploy_client["redirectURIs"]:
        assert uri.endswith("/oauth/callback/")


def test_the_demo_publishes_prices_as_deploy_does():
    """The prices ConfigMap and its two Roles (deploy/base/rbac-prices.yaml) are in the
    demo with the same rules, the writer bound to the demo's one account."""
    scenario = yaml.safe_load(DEMO.read_text())
    demo = {(o["kind"], o["metadata"]["name"]): o for o in scenario["objects"]}
    for obj in m.load("base/rbac-prices.yaml"):
        twin = demo[(obj["kind"], obj["metadata"]["name"])]
        assert twin["metadata"]["namespace"] == obj["metadata"]["namespace"]
        if obj["kind"] == "Role":
            assert twin["rules"] == obj["rules"]
        elif obj["kind"] == "ConfigMap":
            assert twin["data"] == obj["data"]
        else:
            assert twin["roleRef"] == obj["roleRef"]
    (account,) = [a for a in scenario["serviceAccounts"] if a.get("kubeconfig") == "dashboard"]
    writer = demo[("RoleBinding", "mpijob-dashboard-prices-writer")]
    assert writer["subjects"] == [{"kind": "ServiceAccount", "name": account["name"],
                                   "namespace": account["namespace"]}]
