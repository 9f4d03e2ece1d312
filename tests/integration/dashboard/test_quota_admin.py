"""Cluster administrators change a project's ResourceQuota and a ClusterQueue's nominal
quota from /cluster/ (training/views/cluster/quota_admin.py), with their own token; others cannot.

These tests change the cluster's limits, so they run on a demo cluster of their own."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse
from kubernetes import client as k8s

from tests import simcluster_process
from tests.dashboard_support import role_in, sign_in
from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard.wizard_flow import post_step, start, step_url, unique
from training import kueue_settings
from training.models import AuditEvent

NS = "team-nlp"
QUOTA = reverse("training-cluster-quota", args=[NS, "team-quota"])
QUEUE = reverse("training-cluster-queue-quota", args=["team-nlp-a100"])
GPU_KEY = "requests.nvidia.com/gpu"


@pytest.fixture(scope="module")
def demo_cluster(tmp_path_factory):
    cluster = simcluster_process.start(tmp_path_factory.mktemp("quota-admin") / "state",
                                       scenario="demo", speed=20)
    yield cluster
    cluster.stop()


@pytest.fixture
def person(db, demo_cluster):
    """A test client of its own signed in as the user named (beside `admin`'s)."""
    def signed_in(username: str) -> Client:
        client = Client()
        sign_in(client, demo_cluster, username)
        return client
    return signed_in


def _text(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def _hard(sim, key: str = GPU_KEY) -> str:
    with sim.api_client("admin") as api:
        return k8s.CoreV1Api(api).read_namespaced_resource_quota("team-quota", NS).spec.hard[key]


def _form_from(page: str) -> dict[str, str]:
    """The form's text and hidden fields, as a browser would post them back."""
    return {m.group(1): html.unescape(m.group(2)) for m in re.finditer(
        r'<input type="(?:text|hidden)"[^>]*? name="([^"]+)" value="([^"]*)"', page)
        if m.group(1) != "csrfmiddlewaretoken"}


def _form(client, url: str) -> dict[str, str]:
    return _form_from(client.get(url).content.decode())


@pytest.fixture
def gpu_quota_restored(demo_cluster):
    before = _hard(demo_cluster)
    yield
    with demo_cluster.api_client("admin") as api:
        k8s.CoreV1Api(api).patch_namespaced_resource_quota(
            "team-quota", NS, {"spec": {"hard": {GPU_KEY: before}}})


def _wizard_asking_for_32_gpus(alice) -> str:
    key = start(alice)
    post_step(alice, key, "configuration", namespace=NS, name=unique(),
              image="quay.io/a/b:1", command="horovodrun -np 32 python x.py")
    post_step(alice, key, "resources", action="back", workers="4", gpus_per_worker="8")
    return key


def test_an_admin_raises_the_gpu_quota_and_the_wizard_sees_it_at_once(
        admin, person, demo_cluster, gpu_quota_restored):
    alice = person("alice")
    key = _wizard_asking_for_32_gpus(alice)
    before = _text(alice.get(step_url(key, "resources")).content.decode())
    assert "This job can never fit the team-nlp quota of 24 GPUs: it asks for 32 GPUs." in before

    overview = admin.get(reverse("training-cluster-overview")).content.decode()
    assert f'href="{QUOTA}"' in overview  # "Change the quota of team-nlp"
    # "Manage quotas" (ADM-6) leads to the projects' quotas and their links
    assert re.search(r'href="#cluster-projects" id="manage-quotas">.*Manage quotas</a>',
                     overview)
    assert 'id="cluster-projects"' in overview
    page = admin.get(QUOTA)
    assert page.status_code == 200
    assert_valid(page.content.decode())
    form = _form(admin, QUOTA)
    assert form["gpus"] == "24" and form["gpus-shown"] == "24"
    response = admin.post(QUOTA, {**form, "gpus": "64"}, follow=True)
    assert response.status_code == 200
    assert "GPUs 24 → 64" in _text(response.content.decode())
    assert _hard(demo_cluster) == "64"

    after = _text(alice.get(step_url(key, "resources")).content.decode())
    assert "can never fit the team-nlp quota" not in after
    row = AuditEvent.objects.get(verb="set_quota", outcome="success")
    assert (row.username, row.project, row.kind, row.name) == (
        "admin", NS, "ResourceQuota", "team-quota")
    assert row.detail == f"{GPU_KEY}: 24 -> 64"


@pytest.mark.parametrize("typed, says", [
    ("lots", '"lots" is not a Kubernetes quantity'),
    ("-2", "GPUs cannot be negative"),
    ("2.5", "GPUs count whole"),
])
def test_bad_values_are_refused_and_kept(admin, demo_cluster, typed, says):
    form = _form(admin, QUOTA)
    response = admin.post(QUOTA, {**form, "gpus": typed, "cpu": "200"})
    assert response.status_code == 400
    page = response.content.decode()
    assert_valid(page)
    assert says in _text(page)
    assert "Nothing was changed" in _text(page)
    assert f'name="gpus" value="{html.escape(typed)}"' in page  # what was typed is kept
    assert 'name="cpu" value="200"' in page
    assert _hard(demo_cluster) == "24" and _hard(demo_cluster, "requests.cpu") == "192"
    assert not AuditEvent.objects.filter(verb="set_quota", outcome="success").exists()


def test_a_value_below_use_is_made_with_a_warning(admin, demo_cluster, gpu_quota_restored):
    form = _form(admin, QUOTA)
    response = admin.post(QUOTA, {**form, "gpus": "0"}, follow=True)
    text = _text(response.content.decode())
    assert "GPUs 24 → 0" in text
    assert "in use now, more than 0 GPUs: what runs keeps running" in text
    assert _hard(demo_cluster) == "0"


def test_a_change_made_meanwhile_is_not_overwritten(admin, demo_cluster, gpu_quota_restored):
    form = _form(admin, QUOTA)
    with demo_cluster.api_client("admin") as api:  # someone else, after the page was made
        k8s.CoreV1Api(api).patch_namespaced_resource_quota(
            "team-quota", NS, {"spec": {"hard": {GPU_KEY: "30"}}})
    response = admin.post(QUOTA, {**form, "gpus": "40"})
    assert response.status_code == 409
    text = _text(response.content.decode())
    assert "Someone changed this since you opened the page: GPUs is now 30 (you saw 24)" in text
    assert 'name="gpus" value="40"' in response.content.decode()
    assert _hard(demo_cluster) == "30"
    again = admin.post(QUOTA, {**_form_from(response.content.decode()), "gpus": "40"})
    assert again.status_code == 302 and _hard(demo_cluster) == "40"
    assert [r.outcome for r in AuditEvent.objects.filter(verb="set_quota").order_by("id")] == [
        "failed", "success"]


def test_alice_and_a_project_admin_may_see_the_quota_but_not_change_it(
        admin, person, demo_cluster):
    alice, charlie = person("alice"), person("charlie")
    form = _form(admin, QUOTA)
    assert alice.get(QUOTA).status_code == 403
    refused = alice.post(QUOTA, {**form, "gpus": "99"})
    assert refused.status_code == 403
    assert "Only cluster administrators change quotas" in _text(refused.content.decode())
    with role_in(demo_cluster, NS, "charlie", "admin", "charlie-admin"):
        project = charlie.get(reverse("training-project", args=[NS]))
        assert project.status_code == 200
        page = project.content.decode()
        assert 'data-resource="requests.nvidia.com/gpu"' in page  # the numbers, seen
        assert QUOTA not in page and 'name="gpus"' not in page  # no form, no link to one
        assert charlie.post(QUOTA, {**form, "gpus": "99"}).status_code == 403
        assert charlie.post(reverse("training-project", args=[NS])).status_code == 405
    assert _hard(demo_cluster) == "24"
    # the cluster's administrators find the way from the same page
    assert f'href="{QUOTA}"' in admin.get(reverse("training-project", args=[NS])).content.decode()
    assert list(AuditEvent.objects.filter(verb="set_quota").values_list(
        "username", "outcome")) == [("charlie", "denied"), ("alice", "denied")]


def _gpus_of(cluster_queue: dict) -> str:
    return next(r["nominalQuota"] for g in cluster_queue["spec"]["resourceGroups"]
                for f in g["flavors"] for r in f["resources"] if r["name"] == "nvidia.com/gpu")


def test_an_admin_changes_a_cluster_queues_nominal_quota(admin, person, demo_cluster):
    alice = person("alice")
    page = admin.get(QUEUE)
    assert page.status_code == 200
    assert_valid(page.content.decode())
    form = _form(admin, QUEUE)
    gpu_field = next(name for name, value in form.items()
                     if name.startswith("nominal-") and not name.endswith("-shown")
                     and value == "8")
    assert _gpus_of(kueue_settings.cluster_queue("team-nlp-a100")) == "8"  # kept 10 s
    refused = admin.post(QUEUE, {**form, gpu_field: "eight"})
    assert refused.status_code == 400
    assert 'value="eight"' in refused.content.decode()
    response = admin.post(QUEUE, {**form, gpu_field: "12"}, follow=True)
    assert "GPUs (a100) 8 → 12" in _text(response.content.decode())
    with demo_cluster.api_client("admin") as api:
        cq = k8s.CustomObjectsApi(api).get_cluster_custom_object(
            "kueue.x-k8s.io", "v1beta1", "clusterqueues", "team-nlp-a100")
    flavors = [f for g in cq["spec"]["resourceGroups"] for f in g["flavors"]]
    quotas = {(f["name"], r["name"]): r["nominalQuota"] for f in flavors for r in f["resources"]}
    assert quotas == {("default-flavor", "cpu"): "128", ("default-flavor", "memory"): "1Ti",
                      ("a100", "nvidia.com/gpu"): "12"}
    # what the wizard's queue check reads (shared for a while) is read again at once
    assert _gpus_of(kueue_settings.cluster_queue("team-nlp-a100")) == "12"
    row = AuditEvent.objects.get(verb="set_nominal_quota", outcome="success")
    assert (row.username, row.kind, row.name, row.detail) == (
        "admin", "ClusterQueue", "team-nlp-a100", "nvidia.com/gpu: 8 -> 12")
    assert alice.post(QUEUE, {**form, gpu_field: "99"}).status_code == 403


def _workloads(sim) -> list[dict]:
    with sim.api_client("admin") as api:
        return k8s.CustomObjectsApi(api).list_cluster_custom_object(
            "kueue.x-k8s.io", "v1beta1", "workloads")["items"]


def test_an_admin_changes_a_workloads_priority(admin, person, demo_cluster):
    waiting = next(w for w in _workloads(demo_cluster) if not any(
        c["type"] in ("Finished", "QuotaReserved") and c["status"] == "True"
        for c in w.get("status", {}).get("conditions", [])))
    ns, name = waiting["metadata"]["namespace"], waiting["metadata"]["name"]
    url = reverse("training-cluster-workload-priority", args=[ns, name])
    queues = admin.get(reverse("training-cluster-queues")).content.decode()
    assert f'href="{url}"' in queues
    page = admin.get(url).content.decode()
    assert_valid(page)
    assert '<option value="high">high (' in page
    response = admin.post(url, {"priority": "high", "shown": _form_from(page)["shown"]},
                          follow=True)
    assert response.status_code == 200
    with demo_cluster.api_client("admin") as api:
        high = k8s.CustomObjectsApi(api).get_cluster_custom_object(
            "kueue.x-k8s.io", "v1beta1", "workloadpriorityclasses", "high")["value"]
    spec = next(w for w in _workloads(demo_cluster)
                if w["metadata"]["name"] == name)["spec"]
    assert (spec["priority"], spec["priorityClassName"], spec["priorityClassSource"]) == (
        high, "high", "kueue.x-k8s.io/workloadpriorityclass")
    assert f"high ({high})" in _text(response.content.decode())
    row = AuditEvent.objects.get(verb="set_priority", outcome="success")
    assert (row.username, row.project, row.kind, row.name) == ("admin", ns, "Workload", name)
    assert row.detail.endswith(f"-> high ({high})")
    refused = admin.post(url, {"priority": "urgent", "shown": f"high ({high})"})
    assert refused.status_code == 400
    assert "Choose one of the cluster's workload priority classes." in _text(
        refused.content.decode())
    assert person("alice").post(url, {"priority": "low"}).status_code == 403


def test_the_change_is_made_with_the_persons_own_token(person, demo_cluster):
    """charlie may read every quota (so he gets the form) but not change one: the cluster,
    asked with his token, refuses, and the page says so with his values kept."""
    rbac_body = {"metadata": {"name": "quota-reader"},
                 "rules": [{"apiGroups": [""], "resources": ["resourcequotas"],
                            "verbs": ["get", "list", "watch"]}]}
    binding = {"metadata": {"name": "charlie-quota-reader"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "quota-reader"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                             "name": "charlie"}]}
    with demo_cluster.api_client("admin") as api:
        rbac = k8s.RbacAuthorizationV1Api(api)
        rbac.create_cluster_role(rbac_body)
        rbac.create_cluster_role_binding(binding)
        try:
            charlie = person("charlie")
            form = _form(charlie, QUOTA)
            assert form["gpus"] == _hard(demo_cluster)
            response = charlie.post(QUOTA, {**form, "gpus": "99"})
            assert response.status_code == 403
            page = response.content.decode()
            assert "The cluster refused: your account may not change the quota team-quota " \
                   "of team-nlp. Nothing was changed." in _text(page)
            assert 'name="gpus" value="99"' in page
            assert _hard(demo_cluster) != "99"
            row = AuditEvent.objects.get(verb="set_quota", username="charlie")
            assert row.outcome == "denied" and "forbidden" in row.detail.lower()
        finally:
            rbac.delete_cluster_role_binding("charlie-quota-reader")
            rbac.delete_cluster_role("quota-reader")
