"""deploy/'s RBAC, NetworkPolicy and quota templates applied with `kubectl apply` to a real
simcluster, and the rights they give proven: with SubjectAccessReviews made as the admin
(simcluster, like many clusters, has no impersonation) and, for one person, by doing it."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from kubernetes import client as k8s

from odh.training import errors
from odh.training.cluster.api import make_api_client
from odh.training.cluster.client import ClusterClient
from odh.training.kinds import KINDS, MPIJOB
from odh.training.overviews import cluster as capacity
from tests import reference, simcluster_process
from tests.deploy import manifests as m
from tests.waiting import wait_until

reason = m.kubectl_missing_reason()
if reason is not None:
    print(f"SKIP test_rbac_on_simcluster: {reason}")
    pytest.skip(reason, allow_module_level=True)

pytestmark = pytest.mark.kubectl

PI = reference.PI
WATCHER = "system:serviceaccount:mpijob-dashboard:mpijob-dashboard-watcher"
WEB = "system:serviceaccount:mpijob-dashboard:mpijob-dashboard-web"
SA_GROUPS = ("system:serviceaccounts", "system:serviceaccounts:mpijob-dashboard",
             "system:authenticated")
# people of the example bindings (deploy/rbac/examples/bindings.yaml), by their groups
USER = ("dana", ("team-nlp-data-scientists", "system:authenticated"))
VIEWER = ("erin", ("team-nlp-stakeholders", "system:authenticated"))
ADMIN = ("olga", ("mlops-admins", "system:authenticated"))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = simcluster_process.start(tmp_path_factory.mktemp("deploy-rbac") / "state",
                                   scenario="empty", speed=50)
    yield sim
    sim.stop()


@pytest.fixture(scope="module")
def kubectl(cluster, tmp_path_factory):
    home = tmp_path_factory.mktemp("kubectl-home")

    def run(user: str, *args: str, check: bool = True,
            stdin: str | None = None) -> subprocess.CompletedProcess:
        env = dict(os.environ, KUBECONFIG=str(cluster.kubeconfig(user)), HOME=str(home))
        result = subprocess.run([m.KUBECTL, *args], env=env, text=True, capture_output=True,
                                input=stdin, timeout=60)
        if check:
            assert result.returncode == 0, (args, result.stdout, result.stderr)
        return result
    return run


@pytest.fixture(scope="module")
def applied(cluster, kubectl):
    """Everything deploy/ asks an administrator to apply, as they would."""
    kubectl("admin", "create", "namespace", "mpijob-dashboard")
    kubectl("admin", "create", "namespace", "team-cv")
    files = ["base/rbac-watcher.yaml", "base/rbac-web.yaml", "base/rbac-prices.yaml",
             "rbac/mpijob-viewer.yaml",
             "rbac/mpijob-user.yaml", "rbac/mpijob-admin.yaml",
             "rbac/mpijob-admin-overview.yaml", "rbac/storage-class-reader.yaml",
             "rbac/examples/bindings.yaml"]
    args = [a for f in files for a in ("-f", str(m.DEPLOY / f))]
    out = kubectl("admin", "apply", *args).stdout
    templates = ["networkpolicy/allow-training-peers.yaml", "networkpolicy/allow-monitoring.yaml",
                 "examples/resourcequota.yaml", "examples/limitrange.yaml"]
    args = [a for f in templates for a in ("-f", str(m.DEPLOY / f))]
    out += kubectl("admin", "apply", "-n", "team-nlp", *args).stdout
    return out


@pytest.fixture(scope="module")
def admin_api(cluster):
    return cluster.api_client("admin")


def allowed(api, subject: str, groups, verb: str, resource: str, group: str = "",
            namespace: str = "", subresource: str = "") -> bool:
    attributes = {"verb": verb, "resource": resource, "group": group}
    if namespace:
        attributes["namespace"] = namespace
    if subresource:
        attributes["subresource"] = subresource
    review = k8s.AuthorizationV1Api(api).create_subject_access_review({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": subject, "groups": list(groups), "resourceAttributes": attributes}})
    return bool(review.status.allowed)


def test_everything_applies(applied):
    for line in ("serviceaccount/mpijob-dashboard-watcher created",
                 "clusterrole.rbac.authorization.k8s.io/mpijob-dashboard-watcher created",
                 "clusterrolebinding.rbac.authorization.k8s.io/mpijob-dashboard-watcher created",
                 "clusterrole.rbac.authorization.k8s.io/mpijob-user created",
                 "rolebinding.rbac.authorization.k8s.io/mpijob-users created",
                 "networkpolicy.networking.k8s.io/allow-training-peers created",
                 "resourcequota/training-quota created",
                 "limitrange/training-limits created"):
        assert line in applied


def test_the_watcher_reads_everywhere_and_writes_only_on_training_jobs(applied, admin_api):
    def can(verb, resource, group="", namespace="", subresource=""):
        return allowed(admin_api, WATCHER, SA_GROUPS, verb, resource, group, namespace,
                       subresource)

    # cluster-wide watches (namespace "" = all namespaces)
    assert can("list", "pods") and can("watch", "pods")
    for plural in ("mpijobs", "pytorchjobs", "tfjobs"):
        assert can("watch", plural, "kubeflow.org")
    assert can("watch", "trainjobs", "trainer.kubeflow.org")
    # the runtimes say a TrainJob's pods (its Launcher, and whether it runs as a node)
    for plural in ("clustertrainingruntimes", "trainingruntimes"):
        assert can("watch", plural, "trainer.kubeflow.org")
    assert can("watch", "events") and can("watch", "resourcequotas")
    assert can("list", "nodes") and can("list", "jobs", "batch")
    assert can("get", "pods", namespace="team-nlp", subresource="log")
    # the evidence it kept, written on the job (an annotation)
    assert can("patch", "mpijobs", "kubeflow.org", namespace="team-nlp")
    assert can("patch", "trainjobs", "trainer.kubeflow.org", namespace="team-nlp")
    # before each notification it sends: may that person still see the job?
    assert can("create", "subjectaccessreviews", "authorization.k8s.io")
    # automatic retries: the clone of a failed job, made when its creator is not signed in
    assert can("create", "mpijobs", "kubeflow.org", namespace="team-nlp")
    assert can("create", "trainjobs", "trainer.kubeflow.org", namespace="team-nlp")
    # and nothing more
    assert not can("delete", "mpijobs", "kubeflow.org", namespace="team-nlp")
    assert not can("delete", "pods", namespace="team-nlp")
    assert not can("patch", "pods", namespace="team-nlp")
    assert not can("list", "secrets")
    assert not can("get", "configmaps", namespace="team-nlp")
    assert not can("create", "localsubjectaccessreviews", "authorization.k8s.io",
                   namespace="team-nlp")


def test_the_web_pods_read_nodes_only(applied, admin_api):
    assert allowed(admin_api, WEB, SA_GROUPS, "list", "nodes")
    assert not allowed(admin_api, WEB, SA_GROUPS, "list", "pods")
    assert not allowed(admin_api, WEB, SA_GROUPS, "watch", "mpijobs", "kubeflow.org")
    assert not allowed(admin_api, WEB, SA_GROUPS, "create", "mpijobs", "kubeflow.org",
                       "team-nlp")


def test_the_prices_configmap_is_written_by_the_dashboard_and_read_by_everyone(
        applied, admin_api):
    """deploy/base/rbac-prices.yaml: the one ConfigMap the CLI and SDK read the prices
    from (odh.training.cost), updated by the dashboard's accounts, read by anyone signed in;
    no other ConfigMap, and no create."""
    ns = "mpijob-dashboard"

    def can(subject, groups, verb, name="mpijob-dashboard-prices"):
        review = k8s.AuthorizationV1Api(admin_api).create_subject_access_review({
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": subject, "groups": list(groups), "resourceAttributes": {
                "verb": verb, "resource": "configmaps", "namespace": ns, "name": name}}})
        return bool(review.status.allowed)

    for account in (WEB, WATCHER):
        assert can(account, SA_GROUPS, "get") and can(account, SA_GROUPS, "update")
        assert not can(account, SA_GROUPS, "get", "mpijob-dashboard-config")
        assert not can(account, SA_GROUPS, "create", "")
        assert not can(account, SA_GROUPS, "delete")
    for person, groups in (USER, VIEWER, ("nobody", ("system:authenticated",))):
        assert can(person, groups, "get")
        assert not can(person, groups, "update")
        assert not can(person, groups, "get", "mpijob-dashboard-config")


def test_personas_bound_in_a_project(applied, admin_api):
    def can(person, verb, resource, group="", namespace="team-nlp", subresource=""):
        name, groups = person
        return allowed(admin_api, name, groups, verb, resource, group, namespace, subresource)

    kf = "kubeflow.org"
    # mpijob-user: creates and manages MPIJobs in team-nlp, and only there
    assert can(USER, "create", "mpijobs", kf)
    assert can(USER, "delete", "mpijobs", kf) and can(USER, "patch", "mpijobs", kf)
    assert not can(USER, "create", "mpijobs", kf, namespace="team-cv")
    assert not can(USER, "create", "pytorchjobs", kf)
    assert can(USER, "get", "pods", subresource="log") and can(USER, "list", "events")
    assert can(USER, "list", "resourcequotas")  # the wizard's quota check
    assert can(USER, "get", "projects", "project.openshift.io")
    # the Artifacts tab's short-lived lister pod, created, read and deleted as the person
    assert can(USER, "create", "pods") and can(USER, "delete", "pods")
    assert not can(USER, "create", "pods", namespace="team-cv")
    assert not can(VIEWER, "create", "pods")
    # the wizard's new volume claim: created as the person, in their project only
    assert can(USER, "create", "persistentvolumeclaims")
    assert not can(USER, "create", "persistentvolumeclaims", namespace="team-cv")
    assert not can(USER, "delete", "persistentvolumeclaims")
    assert not can(VIEWER, "create", "persistentvolumeclaims")
    # the StorageClasses it offers: everyone signed in lists them (cluster-scoped)
    for person in (USER, VIEWER, ("nobody", ("system:authenticated",))):
        assert can(person, "list", "storageclasses", "storage.k8s.io", namespace="")
    assert not can(USER, "list", "secrets")
    assert not can(USER, "list", "resourcequotas", namespace="")
    # mpijob-viewer: reads, changes nothing
    assert can(VIEWER, "list", "mpijobs", kf) and can(VIEWER, "get", "pods", subresource="log")
    assert can(VIEWER, "watch", "tfjobs", kf)
    for verb in ("create", "patch", "delete"):
        assert not can(VIEWER, verb, "mpijobs", kf)
    assert not can(VIEWER, "list", "resourcequotas")
    # mpijob-admin: anyone's jobs of any kind, stuck pods, quotas; the overview cluster-wide
    assert can(ADMIN, "delete", "pytorchjobs", kf) and can(ADMIN, "deletecollection",
                                                            "mpijobs", kf)
    assert can(ADMIN, "delete", "pods") and can(ADMIN, "get", "resourcequotas",
                                                subresource="status")
    assert can(ADMIN, "list", "resourcequotas", namespace="")  # the admin overview's gate
    assert can(ADMIN, "list", "nodes", namespace="")
    assert can(ADMIN, "list", "pods", namespace="") and can(ADMIN, "list", "events", namespace="")
    assert can(ADMIN, "list", "mpijobs", kf, namespace="")
    assert not can(ADMIN, "create", "mpijobs", kf, namespace="team-cv")
    assert not can(ADMIN, "list", "secrets")


def test_a_person_bound_to_mpijob_user_creates_a_job_there_and_not_elsewhere(
        applied, kubectl, cluster):
    # bob has no rights in the empty scenario's team-nlp until the binding
    refused = kubectl("bob", "create", "-n", "team-nlp", "-f", str(PI), check=False)
    assert refused.returncode != 0 and "Forbidden" in refused.stderr
    # (as `oc create rolebinding --clusterrole=mpijob-user --user=bob` would; kubectl 1.32
    # sends that one as protobuf, which simcluster does not read)
    kubectl("admin", "apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "bob-mpijob-user", "namespace": "team-nlp"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "mpijob-user"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                      "name": "bob"}]}))
    projects = json.loads(kubectl("bob", "get", "projects.project.openshift.io",
                                  "-o", "json").stdout)
    assert [p["metadata"]["name"] for p in projects["items"]] == ["team-nlp"]
    assert kubectl("bob", "auth", "can-i", "create", "mpijobs.kubeflow.org",
                   "-n", "team-nlp").stdout.strip() == "yes"
    created = kubectl("bob", "create", "-n", "team-nlp", "-f", str(PI)).stdout
    assert created.strip() == "mpijob.kubeflow.org/pi created"
    elsewhere = kubectl("bob", "create", "-n", "team-cv", "-f", str(PI), check=False)
    assert elsewhere.returncode != 0 and "Forbidden" in elsewhere.stderr
    # the example quota counts the job
    def used():
        quota = json.loads(kubectl("bob", "get", "resourcequota", "training-quota",
                                   "-n", "team-nlp", "-o", "json").stdout)
        return (quota.get("status") or {}).get("used", {}).get("count/mpijobs.kubeflow.org")
    assert wait_until(used, message="count/mpijobs.kubeflow.org in the quota's status") == "1"
    assert kubectl("bob", "logs", "-n", "team-nlp", "pod/does-not-exist",
                   check=False).stderr.count("Forbidden") == 0  # may read logs: NotFound
    kubectl("bob", "delete", "mpijob", "pi", "-n", "team-nlp", "--wait=false")
    # but no secrets, and nothing cluster-wide
    assert "Forbidden" in kubectl("bob", "get", "secrets", "-n", "team-nlp",
                                  check=False).stderr
    assert "Forbidden" in kubectl("bob", "get", "resourcequotas", "-A", check=False).stderr


def test_templates_are_in_the_project(applied, kubectl):
    policies = json.loads(kubectl("admin", "get", "networkpolicies", "-n", "team-nlp",
                                  "-o", "json").stdout)
    names = {p["metadata"]["name"] for p in policies["items"]}
    assert names == {"allow-training-peers", "allow-training-metrics-scraping"}
    limits = json.loads(kubectl("admin", "get", "limitrange", "training-limits", "-n",
                                "team-nlp", "-o", "json").stdout)
    container = limits["spec"]["limits"][0]
    assert container["defaultRequest"]["nvidia.com/gpu"] == "0"
    quota = json.loads(kubectl("admin", "get", "resourcequota", "training-quota", "-n",
                               "team-nlp", "-o", "json").stdout)
    assert quota["spec"]["hard"]["requests.nvidia.com/gpu"] == "16"
    assert quota["spec"]["hard"]["count/mpijobs.kubeflow.org"] == "10"


def person(cluster, user: str) -> ClusterClient:
    """The dashboard's own client code, acting with a person's token (as the views do)."""
    return ClusterClient(make_api_client(cluster.api_url, cluster.token(user),
                                         str(cluster.ca_file)))


def test_mpijob_user_covers_what_the_dashboard_reads_for_them(applied, kubectl, cluster):
    """The reads the job pages and the wizard make with a person's token, made by the
    dashboard's own client for a person who holds only mpijob-user in team-nlp."""
    kubectl("admin", "apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "bob-mpijob-user", "namespace": "team-nlp"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "mpijob-user"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                      "name": "bob"}]}))
    with person(cluster, "bob") as bob:
        assert [p.name for p in bob.list_projects()] == ["team-nlp"]
        assert bob.can_i("get", "mpijobs", "kubeflow.org", "team-nlp")  # the live page's check
        assert bob.can_i("create", "mpijobs", "kubeflow.org", "team-nlp")
        for kind in (MPIJOB, KINDS["pytorchjob"], KINDS["tfjob"]):
            bob.list_jobs(kind, "team-nlp")
        bob.list_job_pods("team-nlp")
        bob.list_events("team-nlp")
        assert [q["metadata"]["name"] for q in bob.list_quotas("team-nlp")] == ["training-quota"]
        assert [r["metadata"]["name"] for r in bob.list_limit_ranges("team-nlp")] == [
            "training-limits"]
        bob.list_pvcs("team-nlp")
        with pytest.raises(errors.Forbidden):
            bob.list_jobs(MPIJOB, "team-cv")
        with pytest.raises(errors.Forbidden):
            capacity.read_cluster(bob, [MPIJOB])


def test_mpijob_admin_overview_covers_every_read_of_the_admin_overview(applied, kubectl,
                                                                         cluster):
    """/cluster/ lets in whoever may list quotas in all namespaces, then reads the cluster
    with their token (odh.training.overviews.cluster.read_cluster): the role must cover all of
    it."""
    with person(cluster, "bob") as bob:
        assert not bob.can_i("list", "resourcequotas", "")
    kubectl("admin", "apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "bob-mpijob-admin-overview"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "mpijob-admin-overview"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                      "name": "bob"}]}))
    with person(cluster, "bob") as bob:
        assert bob.can_i("list", "resourcequotas", "")
        state = capacity.read_cluster(bob, list(KINDS.values()))
    assert state.nodes and state.queues is None  # no Kueue in this cluster
    assert "training-quota" in {q["metadata"]["name"] for q in state.quotas}
    assert [k.kind for k in state.kinds] == ["MPIJob", "PyTorchJob", "TFJob"]
