from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

URL = reverse("training-job-list")


def test_it_sends_anonymous_people_to_sign_in(client, db):
    r = client.get(URL)
    assert r.status_code == 302
    assert r["Location"] == reverse("training-login") + "?next=%2Fjobs%2F"


def test_it_lists_the_jobs_of_alices_projects(alice, settings):
    settings.JOBS_PER_PAGE = 100  # the demo's jobs in her projects fill more than a page
    r = alice.get(URL)
    assert r.status_code == 200
    body = r.content.decode()
    for name in ("bert-large-pretrain", "gpt2-finetune", "resnet50-imagenet",
                 "vit-huge-pretrain", "whisper-asr-eval"):
        assert name in body
    # research belongs to bob's team: neither its PyTorchJob nor its TFJob shows
    assert "bert-classifier-ddp" not in body
    assert "mnist-tf-dist" not in body


def test_it_shows_status_as_icon_and_text(alice):
    body = alice.get(URL + "?q=gpt2").content.decode()
    assert 'data-status="Failed"' in body
    assert "fa-exclamation-circle" in body
    assert ">Failed<" in body


def test_it_filters_by_type_and_status(alice):
    body = alice.get(URL, {"type": "mpijob", "status": "Running"}).content.decode()
    assert "bert-large-pretrain" in body
    assert "gpt2-finetune" not in body


def test_it_searches_by_name(alice):
    body = alice.get(URL, {"q": "resnet"}).content.decode()
    assert "resnet50-imagenet" in body
    assert "bert-large-pretrain" not in body


def test_it_remembers_the_project_in_the_session(alice):
    alice.get(URL, {"project": "team-cv"})
    body = alice.get(URL).content.decode()
    assert "resnet50-imagenet" in body
    assert "bert-large-pretrain" not in body


def test_it_refuses_a_project_the_person_cannot_see(alice):
    r = alice.get(URL, {"project": "research"})
    assert r.status_code == 403
    assert "research" in r.content.decode()


def test_it_answers_htmx_with_the_table_only(alice):
    r = alice.get(URL, {"q": "bert"}, HTTP_HX_REQUEST="true")
    body = r.content.decode()
    assert r.status_code == 200
    assert body.lstrip().startswith('<div id="job-table"')
    assert "<html" not in body


def test_it_shows_bob_the_research_jobs_of_every_type(bob):
    body = bob.get(URL).content.decode()
    assert "bert-classifier-ddp" in body
    assert "mnist-tf-dist" in body
    assert "PyTorchJob" in body and "TFJob" in body
    assert "gpt2-finetune" not in body


def test_it_offers_bob_create_nowhere(bob):
    """bob may only view research: no Create job for him anywhere."""
    body = bob.get(URL).content.decode()
    assert "Create job" not in body and "/jobs/new/" not in body


def test_it_offers_alice_create_and_the_row_actions_that_fit(alice):
    body = alice.get(URL).content.decode()
    assert "Create job" in body
    assert row_menu(body, "team-nlp-mpijob-gpt2-finetune") == [  # finished: Retry too
        "View logs", "View metrics", "Export YAML", "Clone", "Retry", "Delete"]
    assert row_menu(body, "team-nlp-mpijob-bert-large-pretrain") == [  # running
        "View logs", "View metrics", "Export YAML", "Suspend", "Clone", "Delete"]


def row_menu(body: str, row: str) -> list[str]:
    """The items of a row's menu that show, in order (links and the buttons of its forms)."""
    cell = body[body.index(f'id="row-actions-{row}"'):]
    return re.findall(r"<li(?![^>]*\bhidden\b)[^>]*>(?:<a [^>]*>|<form .*?<button [^>]*>)"
                      r"([^<]+)</",
                      cell[:cell.index("</td>")])


def test_active_filters_are_chips_each_with_its_way_out(alice):
    body = alice.get(URL, {"type": "mpijob", "status": "Failed", "q": "gpt"}).content.decode()
    chips = re.search(r'<div class="pf-v6-c-label-group dash-filter-chips".*?</div>', body,
                      re.S).group(0)
    shown = re.findall(r'pf-v6-c-label__content">([^<]+)</span><a [^>]*href="([^"]+)"', chips)
    assert [text for text, _url in shown] == ["Type: MPIJob", "Status: Failed", "Name: gpt"]
    without_status = html.unescape(dict(shown)["Status: Failed"])
    assert "status=" not in without_status and "type=mpijob" in without_status
    assert "Clear all filters" in chips
    assert 'aria-label="Remove the filter Status: Failed"' in chips
    # the way out shows the other filters still applied
    rest = alice.get(URL + without_status).content.decode()
    assert "Type: MPIJob" in rest and "Status: Failed" not in rest
    assert "dash-filter-chips" not in alice.get(URL, {"project": ""}).content.decode()


def test_it_explains_the_empty_state(charlie):
    body = charlie.get(URL).content.decode()
    assert "No training jobs yet" in body
    assert "not a member of any project" in body


def test_it_refuses_post(alice):
    assert alice.post(URL).status_code == 405


def test_it_renders_valid_labelled_html(alice):
    from tests.html_checks import assert_valid

    assert_valid(alice.get(URL).content)
    assert_valid(alice.get(URL, {"q": "bert"}, HTTP_HX_REQUEST="true").content, page=False)


def test_it_pages_through_the_jobs(alice, settings):
    settings.JOBS_PER_PAGE = 2
    first = alice.get(URL, {"project": ""}).content.decode()
    assert "Page 1 of " in first  # other tests may add jobs: at least 3 pages of 2
    assert 'href="?project=&amp;page=2"' in first
    second = alice.get(URL, {"project": "", "page": "2"}).content.decode()
    assert "Page 2 of " in second


# -- "All projects" for people who may list some kinds everywhere but not others ----------------
def _grant_cluster_wide(demo_cluster, name: str, user: str, rules: list[dict]):
    """A ClusterRole with `rules` bound to `user` cluster-wide; returns the cleanup."""
    from kubernetes import client as k8s

    api_cm = demo_cluster.api_client("admin")
    api = api_cm.__enter__()
    rbac = k8s.RbacAuthorizationV1Api(api)
    rbac.create_cluster_role({"metadata": {"name": name}, "rules": rules})
    rbac.create_cluster_role_binding({
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                      "name": user}]})

    def cleanup():
        try:
            rbac.delete_cluster_role_binding(name)
            rbac.delete_cluster_role(name)
        finally:
            api_cm.__exit__(None, None, None)
    return cleanup


@pytest.fixture
def charlie_lists_mpijobs_everywhere(demo_cluster):
    """charlie (member of no project) may list MPIJobs and pods in every namespace, but
    no other job kind."""
    cleanup = _grant_cluster_wide(demo_cluster, "test-list-mpijobs-everywhere", "charlie", [
        {"apiGroups": ["kubeflow.org"], "resources": ["mpijobs"],
         "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}])
    try:
        yield
    finally:
        cleanup()


def test_all_projects_shows_the_kinds_one_may_list_and_names_the_others(
        charlie, charlie_lists_mpijobs_everywhere):
    r = charlie.get(URL)
    assert r.status_code == 200  # not a 403 page because TFJobs may not be listed
    body = r.content.decode()
    assert "bert-large-pretrain" in body and "resnet50-imagenet" in body  # MPIJobs, everywhere
    assert "mnist-tf-dist" not in body and "bert-classifier-ddp" not in body
    warning = re.search(r'<div [^>]*id="job-list-partial">(.*?)</p>\s*</div>', body, re.S)
    assert warning, "no warning about the hidden kinds"
    assert ("PyTorchJob, TFJob, TrainJob of other projects are hidden: you may not list them "
            "in all projects, only in yours.") in warning.group(1)
    # the workers were counted (pods listed cluster-wide)
    assert "Workers of jobs in other projects are not counted" not in body


def test_may_list_everywhere_is_asked_again_after_a_while(charlie, demo_cluster,
                                                          monkeypatch):
    """The answer is kept a minute (training/permissions.py), not for the whole session."""
    from odh.training.cluster.access import identity
    from training import permissions
    from training.accounts import session
    def answer():
        token = session.token_in(charlie.session[session.KEY])
        return permissions.ANSWERS.get((identity(token), permissions.EVERYWHERE,
                                        permissions.LIST_JOBS_EVERYWHERE))

    cleanup = _grant_cluster_wide(demo_cluster, "test-list-everywhere-ttl", "charlie", [
        {"apiGroups": ["kubeflow.org"], "resources": ["mpijobs"], "verbs": ["list"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}])
    try:
        assert "bert-large-pretrain" in charlie.get(URL).content.decode()
        assert answer() is True
    finally:
        cleanup()
    charlie.get(URL)
    assert answer() is True  # kept: the cluster itself refuses the list meanwhile
    monkeypatch.setattr(permissions.ANSWERS, "ttl", 0.0)  # as if the minute had passed
    r = charlie.get(URL)
    assert r.status_code == 200
    monkeypatch.setattr(permissions.ANSWERS, "ttl", 60.0)
    assert answer() is False
    body = r.content.decode()
    assert "bert-large-pretrain" not in body
    assert "No training jobs yet" in body


def test_list_pods_is_asked_too(charlie, demo_cluster):
    """MPIJobs everywhere but pods nowhere: the jobs of the person's projects only (none
    for charlie), rather than rows whose Workers cannot be counted."""
    cleanup = _grant_cluster_wide(demo_cluster, "test-list-mpijobs-not-pods", "charlie", [
        {"apiGroups": ["kubeflow.org"], "resources": ["mpijobs"], "verbs": ["list"]}])
    try:
        r = charlie.get(URL)
    finally:
        cleanup()
    assert r.status_code == 200
    assert "bert-large-pretrain" not in r.content.decode()


def test_the_cluster_s_own_namespaces_are_not_offered_as_projects(admin):
    """An administrator sees every namespace; the menus offer the projects people train
    in, as the OpenShift console's does (kube-*, openshift-*, default left out)."""
    body = admin.get(reverse("training-job-list")).content.decode()
    menu = re.search(r'<select id="filter-project".*?</select>', body, re.S).group(0)
    assert 'value="team-nlp"' in menu
    for system in ("default", "kube-system", "kube-public", "openshift-monitoring"):
        assert f'value="{system}"' not in menu
    # one chosen all the same is kept in the menu
    chosen = admin.get(reverse("training-job-list"), {"project": "default"}).content.decode()
    assert 'value="default" selected' in chosen
