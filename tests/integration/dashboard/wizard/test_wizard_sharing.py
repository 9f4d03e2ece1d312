"""Sharing a template with a project needs the right to create jobs there, and whoever
starts from a template (or an import, or a clone) sees on Review what it carries that the
wizard does not show."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from tests.dashboard_support import role_in, sign_in
from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard.wizard_flow import fill, start, step_url, unique
from training.models import JobTemplate

SHARE_CHOICE = "Everyone who can see the project team-cv"


@pytest.fixture
def bob_views_team_cv(demo_cluster):
    """bob gets view (not edit) in team-cv: he sees the project, may not create there."""
    with role_in(demo_cluster, "team-cv", "bob", "view", "sharing-bob-view"):
        yield


@pytest.fixture
def bob(demo_cluster, db, bob_views_team_cv):
    browser = Client()
    sign_in(browser, demo_cluster, "bob")
    return browser


def test_who_may_only_see_a_project_is_not_offered_to_share_with_it(bob):
    key = start(bob)
    fill(bob, key, name=unique("share-bob"), namespace="team-cv", workers=1)
    review = bob.get(step_url(key, "review")).content.decode()
    assert "Save as template" in review
    assert SHARE_CHOICE not in review


def test_who_may_only_see_a_project_may_not_share_with_it(bob):
    key = start(bob)
    fill(bob, key, name=unique("share-bob"), namespace="team-cv", workers=1)
    r = bob.post(reverse("training-job-new-save-template", args=[key]),
                 {"template_name": "Bob's CV job", "share": "project"})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    assert "You may not create jobs in team-cv, so you may not share templates" in body
    assert not JobTemplate.objects.filter(name="Bob's CV job").exists()
    # keeping it for himself is fine
    r = bob.post(reverse("training-job-new-save-template", args=[key]),
                 {"template_name": "Bob's CV job", "share": "personal"})
    assert r.status_code == 302
    assert JobTemplate.objects.get(name="Bob's CV job").project == ""


def test_who_may_create_jobs_there_shares(alice):
    key = start(alice)
    fill(alice, key, name=unique("share-alice"), namespace="team-cv", workers=1)
    assert SHARE_CHOICE in alice.get(step_url(key, "review")).content.decode()
    r = alice.post(reverse("training-job-new-save-template", args=[key]),
                   {"template_name": "Alice's CV job", "share": "project"})
    assert r.status_code == 302
    assert JobTemplate.objects.get(name="Alice's CV job").project == "team-cv"


CARRYING = {
    "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {},
    "spec": {"slotsPerWorker": 1, "runPolicy": {"cleanPodPolicy": "Running"},
             "mpiReplicaSpecs": {
                 "Launcher": {"replicas": 1, "template": {"spec": {
                     "serviceAccountName": "cluster-powerful",
                     "containers": [{"name": "launcher",
                                     "image": "quay.io/opendatahub/horovod:0.28.1-pytorch2.1",
                                     "command": ["horovodrun", "-np", "1", "python", "t.py"],
                                     "securityContext": {"privileged": True}}]}}},
                 "Worker": {"replicas": 1, "template": {"spec": {
                     "containers": [{"name": "worker",
                                     "image": "quay.io/opendatahub/horovod:0.28.1-pytorch2.1",
                                     "volumeMounts": [{"name": "host-root",
                                                       "mountPath": "/host"}]}],
                     "volumes": [{"name": "host-root", "hostPath": {"path": "/"}}]}}}}}}


def test_review_names_what_a_shared_template_carries_unseen(alice):
    template = JobTemplate.objects.create(owner="someone", project="team-cv",
                                          name="Carries more", spec=CARRYING)
    key = start(alice, saved=str(template.pk))
    fill(alice, key, name=unique("kept"), namespace="team-cv", workers=1)
    review = alice.get(step_url(key, "review")).content.decode()
    assert_valid(review)
    section = re.search(r'<section [^>]*id="kept-fields".*?</section>', review, re.S)
    assert section, "no list of the settings the wizard does not show"
    text = section.group(0)
    assert "This job carries 4 settings the wizard does not show" in text
    for path in ("Launcher: spec.serviceAccountName",
                 "Launcher: spec.containers[launcher].securityContext",
                 "Worker: spec.containers[worker].volumeMounts[host-root]",
                 "Worker: spec.volumes[host-root]"):
        assert f"<code>{path}</code>" in text


def test_review_of_a_plain_wizard_job_has_no_such_list(alice):
    key = start(alice)
    fill(alice, key, name=unique("plain"), namespace="team-cv", workers=1)
    assert 'id="kept-fields"' not in alice.get(step_url(key, "review")).content.decode()


def test_the_wizard_offers_only_the_projects_one_may_create_in(demo_cluster, db):
    """alice also views research (no edit there): her wizard offers team-nlp and team-cv."""
    with role_in(demo_cluster, "research", "alice", "view", "wizard-alice-view"):
        alice = Client()
        sign_in(alice, demo_cluster, "alice")
        assert "research" in alice.get(reverse("training-job-list")).content.decode()
        key = start(alice)
        page = alice.get(step_url(key, "configuration")).content.decode()
        select = page[page.index('name="namespace"'):]
        offered = re.findall(r'<option value="([^"]+)"', select[:select.index("</select>")])
        assert sorted(offered) == ["team-cv", "team-nlp"]
