"""Records kept per project are bound to the project's uid, not only its name: a project
deleted and made again under the same name is another project, whose members never see
the old one's job history or shared templates (cluster administrators still do)."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from django.urls import reverse
from kubernetes import client as k8s

from tests.dashboard_support import sign_in
from tests.waiting import wait_until

OLD_UID = "0e1d0d1e-old-team-nlp"


def _record(uid: str, name: str, project_uid: str, namespace: str = "team-nlp"):
    from training.models import JobHistory

    spec = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "launcher", "image": "quay.io/old/secret-env:1",
                     "command": ["mpirun", "python", "t.py"],
                     "env": [{"name": "TOKEN", "value": "s3cr3t-of-the-old-team"}]}]}}},
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "worker", "image": "quay.io/old/secret-env:1"}]}}}}}}
    record, _ = JobHistory.record_once(uid=uid, namespace=namespace, kind="MPIJob", name=name,
                                       outcome="Failed", spec=spec, project_uid=project_uid)
    return record


@pytest.fixture
def team_nlp_uid(alice):
    from odh.training.kinds import MPIJOB  # noqa: F401 (the client's import path)
    from tests.dashboard_support import session_token
    from training.cluster import client_for_token
    with client_for_token(session_token(alice)) as client:
        return next(p.uid for p in client.list_projects() if p.name == "team-nlp")


def test_a_record_of_an_earlier_project_of_the_same_name_is_not_shown(alice, team_nlp_uid):
    assert team_nlp_uid and team_nlp_uid != OLD_UID
    old = _record("uid-old-run", "old-run", OLD_UID)
    url = reverse("training-job-history", args=["team-nlp", "mpijob", "old-run", old.uid])
    assert alice.get(url).status_code == 403
    # no clone from it, and no comparison with it
    clone = alice.get(reverse("training-job-new"), {"clone": "team-nlp/mpijob/old-run"})
    assert clone.status_code == 404
    assert "s3cr3t" not in clone.content.decode()
    compare = alice.get(reverse("training-job-compare"), {"job": "history:uid-old-run"})
    assert "s3cr3t" not in compare.content.decode()
    assert "You may not see this job." in compare.content.decode()
    # the job's "no longer exists" page does not offer it either
    gone = alice.get(reverse("training-job-detail", args=["team-nlp", "mpijob", "old-run"]))
    assert gone.status_code == 404 and old.uid not in gone.content.decode()


def test_a_record_of_the_project_as_it_is_and_older_unbound_ones_are_shown(alice, team_nlp_uid):
    now = _record("uid-current-run", "current-run", team_nlp_uid)
    legacy = _record("uid-legacy-run", "legacy-run", "")
    for record in (now, legacy):
        url = reverse("training-job-history", args=["team-nlp", "mpijob", record.name,
                                                    record.uid])
        assert alice.get(url).status_code == 200


def test_a_cluster_administrator_still_sees_the_old_projects_record(db, demo_cluster):
    old = _record("uid-old-run-2", "old-run-2", OLD_UID)
    admin = Client()
    sign_in(admin, demo_cluster, "admin")
    url = reverse("training-job-history", args=["team-nlp", "mpijob", "old-run-2", old.uid])
    assert admin.get(url).status_code == 200


def test_a_template_shared_with_an_earlier_project_of_the_same_name_is_not_offered(
        alice, team_nlp_uid):
    from training.models import JobTemplate

    spec = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {},
            "spec": {"mpiReplicaSpecs": {}}}
    JobTemplate.objects.create(owner="someone", project="team-nlp", project_uid=OLD_UID,
                               name="old-team-template", spec=spec)
    JobTemplate.objects.create(owner="someone", project="team-nlp", project_uid=team_nlp_uid,
                               name="this-team-template", spec=spec)
    page = alice.get(reverse("training-job-new")).content.decode()
    assert "this-team-template" in page
    assert "old-team-template" not in page


def _member(rbac, project: str, username: str) -> None:
    rbac.create_namespaced_role_binding(project, {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": f"{username}-edit"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "edit"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                      "name": username}]})


def _gone(core, project: str) -> bool:
    try:
        core.read_namespace(project)
    except k8s.ApiException as e:
        return e.status == 404
    return False


def test_a_project_deleted_and_made_again_does_not_show_the_old_teams_history(db,
                                                                              demo_cluster):
    """As the attack run found it: bob's team ran a job in a project; the project is deleted
    and made again under the same name for charlie's team, who must not read bob's job."""
    project = f"rebuilt-{uuid.uuid4().hex[:6]}"
    with demo_cluster.api_client("admin") as api:
        core, rbac = k8s.CoreV1Api(api), k8s.RbacAuthorizationV1Api(api)
        first = core.create_namespace({"metadata": {"name": project}})
        try:
            _member(rbac, project, "bob")
            record = _record(f"uid-{project}", "bobs-run", first.metadata.uid, project)
            url = reverse("training-job-history", args=[project, "mpijob", "bobs-run",
                                                        record.uid])
            bob = Client()
            sign_in(bob, demo_cluster, "bob")
            assert bob.get(url).status_code == 200  # his team's record

            core.delete_namespace(project)
            wait_until(lambda: _gone(core, project), 30, message="the project deleted")
            second = core.create_namespace({"metadata": {"name": project}})
            assert second.metadata.uid != first.metadata.uid
            _member(rbac, project, "charlie")
            charlie = Client()
            sign_in(charlie, demo_cluster, "charlie")
            assert charlie.get(url).status_code == 403
            clone = charlie.get(reverse("training-job-new"),
                                {"clone": f"{project}/mpijob/bobs-run"})
            assert clone.status_code == 404 and "s3cr3t" not in clone.content.decode()
            admin = Client()
            sign_in(admin, demo_cluster, "admin")
            assert admin.get(url).status_code == 200  # administrators still see it
        finally:
            try:
                core.delete_namespace(project)
            except k8s.ApiException:
                pass
