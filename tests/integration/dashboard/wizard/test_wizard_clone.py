"""Clone (the wizard prefilled from a live job) and Retry (the same job under a new name)."""

from __future__ import annotations

import copy
import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from tests.dashboard_support import sign_in
from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard.wizard_flow import (
    NEW,
    create,
    draft,
    key_of,
    post_step,
    step_url,
)
from training.models import AuditEvent, JobHistory

NS = "team-nlp"
SERVER_SET = ("status",)


def _comparable(job: dict) -> dict:
    spec = copy.deepcopy(job["spec"])
    spec.get("runPolicy", {}).pop("suspend", None)
    return spec


def test_cloning_and_creating_unchanged_gives_the_same_spec(alice, cluster_jobs, gpu_default):
    original = cluster_jobs.get(NS, "gpt2-finetune")
    r = alice.get(NEW, {"clone": f"{NS}/mpijob/gpt2-finetune"})
    assert r.status_code == 302
    key = key_of(r)
    assert r["Location"] == step_url(key, "configuration")
    data = draft(key).data
    name = data["name"]
    assert name.startswith("gpt2-finetune-") and name != "gpt2-finetune"
    assert draft(key).source == f"clone:{NS}/mpijob/gpt2-finetune"
    page = alice.get(step_url(key, "configuration"))
    assert "Cloned “gpt2-finetune”" in page.content.decode()
    # through every step, changing nothing
    assert post_step(alice, key, "configuration").status_code == 302
    assert post_step(alice, key, "resources").status_code == 302
    cluster_jobs.track(NS, name)
    r = create(alice, key)
    assert r.status_code == 302, r.content.decode()[:3000]
    clone = cluster_jobs.get(NS, name)
    assert _comparable(clone) == _comparable(original)
    # unknown fields kept: the simcluster failure annotations travel with the clone
    assert clone["metadata"]["annotations"]["simcluster.io/failure"] == "oom"
    assert clone["metadata"]["annotations"]["opendatahub.io/username"] == "alice"
    event = AuditEvent.objects.get(name=name)
    assert (event.verb, event.outcome) == ("clone", "success")


def test_a_clone_can_be_changed_before_creating(alice, cluster_jobs):
    key = key_of(alice.get(NEW, {"clone": "team-cv/mpijob/resnet50-imagenet"}))
    name = draft(key).data["name"]
    post_step(alice, key, "configuration")
    r = post_step(alice, key, "resources", workers="1", gpus_per_worker="0", cpu_per_worker="1",
                  memory_per_worker="2Gi")
    assert r.status_code == 302
    cluster_jobs.track("team-cv", name)
    assert create(alice, key).status_code == 302
    job = cluster_jobs.get("team-cv", name)
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 1
    assert "nvidia.com/gpu" not in worker["template"]["spec"]["containers"][0]["resources"].get(
        "limits", {})
    assert job["spec"]["slotsPerWorker"] == 1


def test_only_mpijobs_are_cloned_here(demo_cluster, db):
    bob = Client()
    sign_in(bob, demo_cluster, "bob")
    r = bob.get(NEW, {"clone": "research/pytorchjob/bert-classifier-ddp"})
    body = r.content.decode()
    assert r.status_code == 400
    assert_valid(body)
    assert "creates MPIJobs and TrainJobs only" in body
    assert "The PyTorchJob “bert-classifier-ddp” cannot be cloned here" in body
    retry = bob.get(reverse("training-job-retry", args=["research", "pytorchjob",
                                                       "bert-classifier-ddp"]))
    assert retry.status_code == 400
    assert "The PyTorchJob “bert-classifier-ddp” cannot be retried here" in \
        retry.content.decode()


def test_cloning_a_missing_job_says_it_is_gone(alice):
    r = alice.get(NEW, {"clone": f"{NS}/mpijob/no-such-job"})
    assert r.status_code == 404
    assert "no longer exists" in r.content.decode()


def test_a_deleted_job_is_cloned_from_its_history_record(alice, cluster_jobs):
    manifest = copy.deepcopy(cluster_jobs.get("team-cv", "resnet50-imagenet"))
    manifest.pop("status", None)
    manifest["metadata"] = {"name": "deleted-by-ttl", "namespace": "team-cv",
                            "annotations": {"opendatahub.io/username": "alice"}}
    JobHistory.objects.create(uid="uid-deleted-by-ttl", namespace="team-cv", kind="MPIJob",
                              name="deleted-by-ttl", spec=manifest, outcome="Succeeded")
    r = alice.get(NEW, {"clone": "team-cv/mpijob/deleted-by-ttl"})
    assert r.status_code == 302
    key = key_of(r)
    assert draft(key).data["name"].startswith("deleted-by-ttl-")
    assert draft(key).data["workers"] == "4"
    assert "comes from its history record" in alice.get(r["Location"]).content.decode()


def test_cloning_from_a_project_one_cannot_see_is_forbidden(alice):
    r = alice.get(NEW, {"clone": "research/mpijob/anything"})
    assert r.status_code == 403


def test_the_detail_page_and_the_list_offer_clone_and_retry(alice):
    detail = alice.get(reverse("training-job-detail", args=[NS, "mpijob", "gpt2-finetune"]))
    body = detail.content.decode()
    assert f"/jobs/new/?clone={NS}/mpijob/gpt2-finetune" in body
    assert reverse("training-job-retry", args=[NS, "mpijob", "gpt2-finetune"]) in body
    listing = alice.get(reverse("training-job-list")).content.decode()
    assert "Actions for gpt2-finetune" in listing
    assert_valid(listing)


def test_retry_asks_then_resubmits_under_a_new_name(alice, cluster_jobs):
    url = reverse("training-job-retry", args=["team-cv", "mpijob", "resnet50-imagenet"])
    page = alice.get(url)
    body = page.content.decode()
    assert page.status_code == 200
    assert_valid(body)
    assert "Retry “resnet50-imagenet”?" in body
    new_name = re.search(r'name="new_name" value="([^"]+)"', body).group(1)
    assert new_name.startswith("resnet50-imagenet-")
    cluster_jobs.track("team-cv", new_name)
    r = alice.post(url, {"new_name": new_name})
    assert r.status_code == 302
    assert r["Location"] == reverse("training-job-detail", args=["team-cv", "mpijob", new_name])
    original = cluster_jobs.get("team-cv", "resnet50-imagenet")
    retried = cluster_jobs.get("team-cv", new_name)
    assert _comparable(retried) == _comparable(original)
    event = AuditEvent.objects.get(name=new_name)
    assert (event.verb, event.outcome) == ("retry", "success")
    assert event.detail == "retry_of=resnet50-imagenet"


RETRY_RESNET = reverse("training-job-retry", args=["team-cv", "mpijob", "resnet50-imagenet"])


@pytest.mark.parametrize(("typed", "expected"), [
    ("Resnet_Retry", 'Job name "Resnet_Retry" is not valid: use lower-case letters'),
    ("resnet50-imagenet", 'A job called "resnet50-imagenet" already exists in team-cv: '
                          "choose another name."),
    ("", 'Enter a job name, for example "bert-finetune".'),
    ("r" * 60, "The name is too long: at most"),
])
def test_it_explains_a_retry_name_it_cannot_use_and_keeps_it(alice, cluster_jobs, typed,
                                                             expected):
    before = cluster_jobs.names("team-cv")
    r = alice.post(RETRY_RESNET, {"new_name": typed})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    field = re.search(r'<input type="text" name="new_name" value="([^"]*)"[^>]*>', body)
    assert field and html.unescape(field.group(1)) == typed  # what they typed, to correct
    assert 'aria-invalid="true"' in field.group(0)
    message = body[body.index('id="id_new_name-message"'):]
    assert expected in html.unescape(message[:message.index('class="dash-actions"')])
    assert cluster_jobs.names("team-cv") == before
    assert not AuditEvent.objects.filter(verb="retry").exists()


def test_it_retries_under_the_name_typed_once_corrected(alice, cluster_jobs):
    r = alice.post(RETRY_RESNET, {"new_name": "Resnet-Again"})
    assert r.status_code == 200
    cluster_jobs.track("team-cv", "resnet-again")
    r = alice.post(RETRY_RESNET, {"new_name": " resnet-again "})
    assert r.status_code == 302
    assert r["Location"] == reverse("training-job-detail",
                                    args=["team-cv", "mpijob", "resnet-again"])
    assert "resnet-again" in cluster_jobs.names("team-cv")


@pytest.fixture
def running_in_team_cv(demo_cluster):
    """A job of alice's at work in team-cv (its node lost, say): the retry page's case for
    suspending it first."""
    from tests.training_jobs import Jobs, mpijob

    with demo_cluster.api_client("admin") as api:
        jobs = Jobs(api, "team-cv")
        jobs.create(mpijob("retry-me", workers=1, run_seconds=3600))
        try:
            jobs.wait_condition("retry-me", "Running")
            yield jobs
        finally:
            jobs.cleanup()


RETRY_RUNNING = reverse("training-job-retry", args=["team-cv", "mpijob", "retry-me"])


def _suspended(jobs, name: str) -> bool:
    return bool(jobs.get(name)["spec"].get("runPolicy", {}).get("suspend"))


def test_retry_of_a_running_job_suspends_it_first_by_default(alice, running_in_team_cv,
                                                            cluster_jobs):
    body = alice.get(RETRY_RUNNING).content.decode()
    assert_valid(body)
    box = re.search(r'<input[^>]*name="suspend_original"[^>]*>', body).group(0)
    assert " checked" in box
    assert "“retry-me” is still Running: suspended, its Workers stop" in html.unescape(body)
    cluster_jobs.track("team-cv", "retry-me-again")
    r = alice.post(RETRY_RUNNING, {"new_name": "retry-me-again", "suspend_original": "on"})
    assert r.status_code == 302
    assert _suspended(running_in_team_cv, "retry-me")
    assert "retry-me-again" in cluster_jobs.names("team-cv")
    done = AuditEvent.objects.filter(name__in=["retry-me", "retry-me-again"]).order_by("id")
    assert [(e.verb, e.name, e.outcome) for e in done] == [
        ("suspend", "retry-me", "success"), ("retry", "retry-me-again", "success")]


def test_a_running_job_left_unticked_keeps_running(alice, running_in_team_cv, cluster_jobs):
    cluster_jobs.track("team-cv", "retry-me-beside")
    r = alice.post(RETRY_RUNNING, {"new_name": "retry-me-beside"})
    assert r.status_code == 302
    assert not _suspended(running_in_team_cv, "retry-me")
    assert not AuditEvent.objects.filter(verb="suspend").exists()


def test_a_refused_retry_resumes_the_job_it_suspended(alice, running_in_team_cv, cluster_jobs):
    before = cluster_jobs.names("team-cv")
    r = alice.post(RETRY_RUNNING, {"new_name": "resnet50-imagenet", "suspend_original": "on"})
    assert r.status_code == 200
    body = html.unescape(r.content.decode())
    assert 'A job called "resnet50-imagenet" already exists in team-cv' in body
    assert not _suspended(running_in_team_cv, "retry-me")  # back at work
    assert " checked" in re.search(r'<input[^>]*name="suspend_original"[^>]*>', body).group(0)
    assert cluster_jobs.names("team-cv") == before
    done = AuditEvent.objects.filter(name="retry-me").order_by("id")
    assert [(e.verb, e.outcome) for e in done] == [("suspend", "success"),
                                                   ("resume", "success")]
