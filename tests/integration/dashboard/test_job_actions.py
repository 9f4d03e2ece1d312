"""Delete, Suspend/Resume and Export on the job detail page, each made with the person's token."""

from __future__ import annotations

import json
import uuid

import pytest
import yaml
from django.test import Client
from django.urls import reverse
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from tests.dashboard_support import sign_in
from tests.html_checks import assert_valid
from tests.training_jobs import Jobs, mpijob
from tests.waiting import wait_until
from training.models import AuditEvent

NS = "team-nlp"


@pytest.fixture
def alice_jobs(demo_cluster):
    """alice's team-nlp jobs through the cluster API; jobs made here are deleted afterwards."""
    with demo_cluster.api_client("alice") as api:
        jobs = Jobs(api, NS)
        made: list[str] = []

        def make(prefix: str = "dash-action") -> str:
            name = f"{prefix}-{uuid.uuid4().hex[:6]}"
            jobs.create(mpijob(name, workers=1, run_seconds=3600,
                               annotations={"opendatahub.io/username": "alice"}))
            made.append(name)
            return name

        jobs.make = make
        yield jobs
        for name in made:
            jobs.delete(name)


def _url(action: str, name: str, project: str = NS, kind: str = "mpijob") -> str:
    return reverse(f"training-job-{action}", args=[project, kind, name])


def _condition(job: dict, kind: str) -> dict:
    return next((c for c in (job.get("status") or {}).get("conditions") or []
                 if c.get("type") == kind), {})


def _gone(jobs: Jobs, name: str) -> bool:
    try:
        jobs.get(name)
    except ApiException as e:
        return e.status == 404
    return False


def test_it_asks_before_deleting(alice, alice_jobs):
    name = alice_jobs.make()
    r = alice.get(_url("delete", name))
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    assert f"Delete the MPIJob “{name}”?" in body
    assert "cannot be undone" in body
    assert 'method="post"' in body and "Delete job" in body
    assert f'href="{_url("detail", name)}"' in body  # Cancel
    assert alice_jobs.get(name)  # nothing happened yet
    assert not AuditEvent.objects.filter(name=name).exists()


def test_it_deletes_a_job_and_records_it(alice, alice_jobs):
    name = alice_jobs.make()
    r = alice.post(_url("delete", name), HTTP_USER_AGENT="pytest-browser/1.0",
                   REMOTE_ADDR="192.0.2.7")
    assert r.status_code == 302
    assert r["Location"] == reverse("training-job-list")
    listing = alice.get(r["Location"]).content.decode()
    assert f"The MPIJob “{name}” is being deleted." in listing
    wait_until(lambda: _gone(alice_jobs, name), 30, message=f"{name} to be deleted")

    event = AuditEvent.objects.get(name=name)
    assert (event.username, event.project, event.kind, event.verb, event.outcome) == (
        "alice", NS, "MPIJob", "delete", "success")
    assert event.source_ip == "192.0.2.7"
    assert event.user_agent == "pytest-browser/1.0"
    assert event.request_id == r["X-Request-Id"]


def test_it_says_when_the_job_to_delete_is_already_gone(alice):
    r = alice.post(_url("delete", "never-was"))
    assert r.status_code == 404
    assert "This job no longer exists" in r.content.decode()
    event = AuditEvent.objects.get(name="never-was")
    assert event.outcome == "failed"


def test_it_suspends_and_resumes_a_job(alice, alice_jobs):
    name = alice_jobs.make()
    wait_until(lambda: _condition(alice_jobs.get(name), "Running").get("status") == "True", 60,
               message=f"{name} to run")
    detail = alice.get(_url("detail", name)).content.decode()
    assert f'action="{_url("suspend", name)}"' in detail

    r = alice.post(_url("suspend", name))
    assert r.status_code == 302
    assert r["Location"] == _url("detail", name)
    wait_until(lambda: (alice_jobs.get(name)["spec"]["runPolicy"]["suspend"] is True
                        and _condition(alice_jobs.get(name), "Suspended").get("status") == "True"),
               60, message=f"{name} to be suspended")
    page = alice.get(r["Location"]).content.decode()
    assert f"“{name}” is suspended" in page
    assert 'data-status="Suspended"' in page
    assert f'action="{_url("resume", name)}"' in page

    r = alice.post(_url("resume", name))
    assert r.status_code == 302
    wait_until(lambda: (alice_jobs.get(name)["spec"]["runPolicy"]["suspend"] is False
                        and _condition(alice_jobs.get(name), "Suspended").get("status") != "True"),
               60, message=f"{name} to resume")
    assert f"“{name}” is resuming." in alice.get(r["Location"]).content.decode()

    verbs = list(AuditEvent.objects.filter(name=name).order_by("id")
                 .values_list("verb", "outcome", "username"))
    assert verbs == [("suspend", "success", "alice"), ("resume", "success", "alice")]


def test_it_refuses_bob_a_delete_in_a_project_he_only_views(bob, demo_cluster):
    url = _url("delete", "bert-classifier-ddp", project="research", kind="pytorchjob")
    r = bob.post(url)
    assert r.status_code == 403
    body = r.content.decode()
    # he may see the project: the page says what he may not do, not that it is closed to him
    assert "You can view jobs in research but not change them" in body
    assert "access to the project" not in body
    assert_valid(body)
    event = AuditEvent.objects.get(name="bert-classifier-ddp", verb="delete")
    assert (event.username, event.project, event.kind, event.outcome) == (
        "bob", "research", "PyTorchJob", "denied")
    assert "forbidden" in event.detail
    with demo_cluster.api_client("admin") as api:
        assert Jobs(api, "research").get("bert-classifier-ddp", "pytorchjobs", "v1")


def test_it_refuses_bob_a_suspend_in_a_project_he_only_views(bob):
    r = bob.post(_url("suspend", "bert-classifier-ddp", project="research", kind="pytorchjob"))
    assert r.status_code == 403
    assert "You can view jobs in research but not change them" in r.content.decode()
    assert AuditEvent.objects.get(name="bert-classifier-ddp", verb="suspend").outcome == "denied"


def test_it_suspends_only_by_post(alice):
    assert alice.get(_url("suspend", "bert-large-pretrain")).status_code == 405
    assert alice.get(_url("resume", "whisper-asr-eval", project="team-cv")).status_code == 405
    assert alice.put(_url("delete", "bert-large-pretrain")).status_code == 405
    assert not AuditEvent.objects.exists()


def test_it_refuses_a_form_from_another_site(db, demo_cluster, alice_jobs):
    name = alice_jobs.make()
    browser = Client(enforce_csrf_checks=True)
    sign_in(browser, demo_cluster, "alice")
    assert browser.post(_url("delete", name)).status_code == 403
    assert alice_jobs.get(name)
    assert not AuditEvent.objects.filter(name=name).exists()

    # the same request from the dashboard's own page goes through
    page = browser.get(_url("delete", name))
    token = page.context["csrf_token"]
    r = browser.post(_url("delete", name), {"csrfmiddlewaretoken": str(token)})
    assert r.status_code == 302
    wait_until(lambda: _gone(alice_jobs, name), 30, message=f"{name} to be deleted")


def test_it_accepts_the_csrf_header_htmx_sends(db, demo_cluster, alice_jobs):
    name = alice_jobs.make()
    browser = Client(enforce_csrf_checks=True)
    sign_in(browser, demo_cluster, "alice")
    page = browser.get(_url("detail", name)).content.decode()
    assert "hx-headers='{&quot;X-CSRFToken&quot;" in page or 'hx-headers=\'{"X-CSRFToken"' in page
    token = str(browser.get(_url("delete", name)).context["csrf_token"])
    r = browser.post(_url("delete", name), HTTP_X_CSRFTOKEN=token)
    assert r.status_code == 302


@pytest.mark.parametrize("fmt, load", [("yaml", yaml.safe_load), ("json", json.loads)])
def test_it_exports_a_job_ready_to_apply_again(alice, fmt, load):
    r = alice.get(_url("export", "gpt2-finetune"), {"format": fmt})
    assert r.status_code == 200
    assert r["Content-Disposition"] == f'attachment; filename="gpt2-finetune.{fmt}"'
    manifest = load(r.content.decode())
    assert manifest["apiVersion"] == "kubeflow.org/v2beta1"
    assert manifest["kind"] == "MPIJob"
    assert manifest["metadata"]["name"] == "gpt2-finetune"
    assert manifest["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 4
    assert "status" not in manifest
    for server_set in ("uid", "resourceVersion", "managedFields", "creationTimestamp",
                       "generation"):
        assert server_set not in manifest["metadata"]


def test_it_exports_what_bob_may_read_and_nothing_else(bob):
    ok = bob.get(_url("export", "mnist-tf-dist", project="research", kind="tfjob"),
                 {"format": "json"})
    assert ok.status_code == 200
    assert json.loads(ok.content)["kind"] == "TFJob"
    assert bob.get(_url("export", "gpt2-finetune"), {"format": "yaml"}).status_code == 403


def test_a_finished_job_is_not_suspended_and_the_page_says_why(alice, demo_cluster):
    r = alice.post(_url("suspend", "gpt2-finetune"))  # Failed two hours ago
    assert r.status_code == 302
    assert r["Location"] == _url("detail", "gpt2-finetune")
    page = alice.get(r["Location"]).content.decode()
    assert "gpt2-finetune has finished (Failed): there is nothing to suspend." in page
    assert "is suspended" not in page  # no success said where nothing changed
    assert AuditEvent.objects.get(name="gpt2-finetune", verb="suspend").outcome == "failed"
    with demo_cluster.api_client("admin") as api:
        job = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
            "kubeflow.org", "v2beta1", "team-nlp", "mpijobs", "gpt2-finetune")
    assert job["spec"].get("runPolicy", {}).get("suspend") is not True


def test_an_action_in_a_project_bob_cannot_see_is_not_found_and_not_audited(bob):
    """Anyone may type a URL: a project the person cannot see gets 404, and no audit row
    with text they chose (a denied action in a project they can see is still audited)."""
    for action in ("delete", "suspend", "resume"):
        r = bob.post(_url(action, "bert-large-pretrain", project="team-nlp"))
        assert r.status_code == 404, action
        r = bob.post(_url(action, "made-up", project="no-such-project"))
        assert r.status_code == 404, action
    assert not AuditEvent.objects.exists()
