"""Creating the job at the end of the wizard: the cluster's answer decides, every attempt is
audited, and a refusal comes back on the review page with the input kept."""

from __future__ import annotations

import html

import pytest
from django.test import Client
from django.urls import reverse
from kubernetes import client as k8s

from tests.dashboard_support import sign_in
from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard.wizard_flow import (
    create,
    draft,
    fill,
    post_step,
    start,
    step_url,
    unique,
)
from training.models import AuditEvent, JobTemplate, WizardDraft

NS = "team-nlp"


def test_the_whole_flow_without_javascript_creates_a_two_worker_mpijob(alice, cluster_jobs,
                                                                    gpu_default):
    key = start(alice)
    assert WizardDraft.objects.get(key=key).kind == "mpijob"  # a draft records its kind
    name = unique("wiz-create")
    fill(alice, key, name=name, namespace=NS, workers=2, gpus_per_worker=1)
    cluster_jobs.track(NS, name)
    r = create(alice, key)
    assert r.status_code == 302
    assert r["Location"] == reverse("training-job-detail", args=[NS, "mpijob", name])
    job = cluster_jobs.get(NS, name)
    assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
    assert job["metadata"]["annotations"]["opendatahub.io/username"] == "alice"
    assert not WizardDraft.objects.filter(key=key).exists()
    event = AuditEvent.objects.get(name=name)
    assert (event.verb, event.outcome, event.username, event.project) == \
        ("create", "success", "alice", NS)
    detail = alice.get(r["Location"]).content.decode()
    assert f"The MPIJob “{name}” was created in {NS}" in detail


def test_invalid_input_is_not_sent_to_the_cluster(alice, cluster_jobs):
    key = start(alice)
    post_step(alice, key, "configuration", namespace=NS, name="-bad-", action="back")
    before = cluster_jobs.names(NS)
    r = create(alice, key)
    body = r.content.decode()
    assert r.status_code == 200
    assert_valid(body)
    assert "The job was not created: correct these first." in body
    assert step_url(key, "configuration") + "#id_name" in body
    assert cluster_jobs.names(NS) == before
    assert not AuditEvent.objects.exists()
    assert draft(key).data["name"] == "-bad-"


def test_a_quota_refusal_comes_back_on_the_review_page(alice, cluster_jobs, tight_mpijob_quota):
    key = start(alice)
    name = unique("wiz-quota")
    fill(alice, key, name=name, namespace="team-cv", workers=1)
    cluster_jobs.track("team-cv", name)
    review = alice.get(step_url(key, "review")).content.decode()
    assert "MPIJobs" in review  # the resource check shows the count quota too
    r = create(alice, key)
    body = r.content.decode()
    assert r.status_code == 200
    text = html.unescape(body)
    # a quota on the number of jobs: finished jobs fill it; deleting them is the fix, not
    # waiting for other jobs to finish; in our words, not the cluster's
    assert "finished jobs count too, so delete those you no longer need" in text
    assert "ask the project's administrator for a larger quota" in text.lower()
    assert "until other jobs" not in text and "exceeded quota" not in text
    assert name not in cluster_jobs.names("team-cv")
    assert draft(key).data["name"] == name  # input kept
    event = AuditEvent.objects.get(name=name)
    assert (event.verb, event.outcome) == ("create", "failed")
    assert "finished jobs count" in event.detail


@pytest.fixture
def bob_sees_team_cv(demo_cluster):
    """bob gets view (not edit) in team-cv: he can pick it, the cluster refuses his create."""
    with demo_cluster.api_client("admin") as api:
        rbac = k8s.RbacAuthorizationV1Api(api)
        rbac.create_namespaced_role_binding("team-cv", {
            "metadata": {"name": "wizard-bob-view"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "view"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                          "name": "bob"}]})
        yield
        rbac.delete_namespaced_role_binding("wizard-bob-view", "team-cv")


def test_a_forbidden_create_comes_back_on_the_review_page(demo_cluster, db, bob_sees_team_cv,
                                                          cluster_jobs):
    bob = Client()
    sign_in(bob, demo_cluster, "bob")
    key = start(bob)
    name = unique("wiz-bob")
    fill(bob, key, name=name, namespace="team-cv", workers=1)
    r = create(bob, key)
    body = r.content.decode()
    assert r.status_code == 200
    assert "You may not create jobs in the project “team-cv”" in body
    assert name not in cluster_jobs.names("team-cv")
    assert WizardDraft.objects.filter(key=key).exists()
    event = AuditEvent.objects.get(name=name)
    assert (event.username, event.verb, event.outcome) == ("bob", "create", "denied")


def test_a_name_taken_meanwhile_is_caught_before_creating(alice, cluster_jobs):
    key = start(alice)
    name = unique("wiz-race")
    fill(alice, key, name=name, namespace="team-cv", workers=1)
    cluster_jobs.custom.create_namespaced_custom_object(
        "kubeflow.org", "v2beta1", "team-cv", "mpijobs", {
            "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": name},
            "spec": {"mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "launcher", "image": "mpioperator/mpi-pi:openmpi"}]}}},
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "worker", "image": "mpioperator/mpi-pi:openmpi"}]}}}}}})
    cluster_jobs.track("team-cv", name)
    body = create(alice, key).content.decode()
    assert "already exists in team-cv" in body
    assert draft(key).data["name"] == name


def test_save_as_template_personal_then_start_from_it(alice, demo_cluster):
    key = start(alice)
    fill(alice, key, name=unique(), namespace="team-cv", workers=3,
         command="mpirun -np 3 python /workspace/mine.py")
    url = reverse("training-job-new-save-template", args=[key])
    r = alice.post(url, {"template_name": "My CPU job", "description": "three workers",
                         "share": "personal"})
    assert r.status_code == 302
    template = JobTemplate.objects.get(name="My CPU job")
    assert (template.owner, template.project) == ("alice", "")
    assert "name" not in template.spec.get("metadata", {})
    first = alice.get(reverse("training-job-new")).content.decode()
    assert "My CPU job" in first and "Your template" in first
    new_key = start(alice, saved=str(template.pk))
    data = draft(new_key).data
    assert data["workers"] == "3" and data["name"] == ""
    assert data["command"] == "mpirun -np 3 python /workspace/mine.py"
    # bob sees neither the personal template nor can he use it
    bob = Client()
    sign_in(bob, demo_cluster, "bob")
    assert "My CPU job" not in bob.get(reverse("training-job-new")).content.decode()
    assert bob.post(reverse("training-job-new"), {"saved": str(template.pk)}).status_code == 404


def test_a_template_shared_with_a_project_is_offered_to_its_members(alice, demo_cluster):
    key = start(alice)
    fill(alice, key, name=unique(), namespace="team-cv", workers=2)
    url = reverse("training-job-new-save-template", args=[key])
    alice.post(url, {"template_name": "CV baseline", "share": "project"})
    template = JobTemplate.objects.get(name="CV baseline")
    assert template.project == "team-cv"
    admin = Client()
    sign_in(admin, demo_cluster, "admin")
    page = admin.get(reverse("training-job-new")).content.decode()
    assert "CV baseline" in page and "Shared with team-cv by alice" in page
    bob = Client()
    sign_in(bob, demo_cluster, "bob")
    assert "CV baseline" not in bob.get(reverse("training-job-new")).content.decode()


def test_a_built_in_template_fills_the_wizard(alice):
    key = start(alice, template="horovod-pytorch")
    data = draft(key).data
    assert data["image"] and data["command"].startswith("horovodrun")
    assert draft(key).source == "template:horovod-pytorch"


def test_a_draft_of_a_kind_not_created_here_creates_the_one_that_is(alice):
    """A draft keeps the slug of its kind; one saved for a kind no longer created here (or
    unknown) does not strand the person: it creates the first kind that is."""
    draft = WizardDraft.objects.get(key=start(alice))
    assert draft.job_kind.slug == "mpijob" and draft.job_kind.creatable
    for slug in ("pytorchjob", "no-such-kind"):
        draft.kind = slug
        assert draft.job_kind.slug == "mpijob"
