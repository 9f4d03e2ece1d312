"""Automatic retry in the wizard and on the job page: the Resources step's "Retries on
failure" and "Retry on" reach the manifest as the job's annotations (and the review says
so); a number out of range is refused where it was typed, kept; the job page shows the
wish, and a retry's page says which retry of which job it is, the first's its retries."""

from __future__ import annotations

from datetime import UTC, datetime

from django.urls import reverse

from odh.training.manifests.retries import (
    RETRIES_ANNOTATION,
    RETRY_ATTEMPT_ANNOTATION,
    RETRY_OF_ANNOTATION,
    RETRY_OF_UID_ANNOTATION,
    RETRY_ON_ANNOTATION,
)
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
from tests.training_jobs import mpijob
from training.models import JobRetry

NS = "team-nlp"


def test_the_wizards_retry_fields_reach_the_manifest_and_the_job_page(alice, cluster_jobs):
    key = start(alice)
    name = unique("wiz-retry")
    fill(alice, key, name=name, namespace=NS, workers=1, retries=2, retry_on="all")
    review = alice.get(step_url(key, "review")).content.decode()
    assert "Up to 2 retries after any failure" in review
    cluster_jobs.track(NS, name)
    r = create(alice, key)
    assert r.status_code == 302
    annotations = cluster_jobs.get(NS, name)["metadata"]["annotations"]
    assert (annotations[RETRIES_ANNOTATION], annotations[RETRY_ON_ANNOTATION]) == ("2", "all")
    page = alice.get(r["Location"]).content.decode()
    assert_valid(page)
    assert "Automatic retry" in page and "Up to 2 retries after any failure" in page


def test_a_retry_count_out_of_range_is_refused_where_it_was_typed(alice):
    key = start(alice)
    post_step(alice, key, "configuration", namespace=NS, name=unique("wiz-retry"),
              image="quay.io/opendatahub/horovod:0.28.1-pytorch2.1",
              command="horovodrun -np 1 python train.py")
    r = post_step(alice, key, "resources", workers="1", retries="9")
    assert r.status_code == 200
    body = r.content.decode()
    assert "Retries on failure: give a whole number from 0 to 5." in body
    assert draft(key).data["retries"] == "9"  # kept as typed
    # none asked for: no annotation at all
    r = post_step(alice, key, "resources", workers="1", retries="")
    assert r.status_code == 302
    review = alice.get(step_url(key, "review")).content.decode()
    assert "retries after" not in review and RETRIES_ANNOTATION not in review


def test_a_retrys_page_names_the_first_and_the_firsts_page_its_retries(alice, cluster_jobs,
                                                                      demo_cluster):
    from kubernetes import client as k8s

    first, retry = unique("bert"), ""
    with demo_cluster.api_client("alice") as api:
        custom = k8s.CustomObjectsApi(api)
        made = custom.create_namespaced_custom_object(
            "kubeflow.org", "v2beta1", NS, "mpijobs", mpijob(first, workers=1, annotations={
                RETRIES_ANNOTATION: "2", "opendatahub.io/username": "alice"}))
        cluster_jobs.track(NS, first)
        retry = f"{first}-retry-1"
        custom.create_namespaced_custom_object(
            "kubeflow.org", "v2beta1", NS, "mpijobs", mpijob(retry, workers=1, annotations={
                RETRIES_ANNOTATION: "2", RETRY_OF_ANNOTATION: first,
                RETRY_OF_UID_ANNOTATION: made["metadata"]["uid"],
                RETRY_ATTEMPT_ANNOTATION: "1", "opendatahub.io/username": "alice"}))
        cluster_jobs.track(NS, retry)
    JobRetry.objects.create(
        original_uid=made["metadata"]["uid"], attempt=1, retries=2, namespace=NS,
        kind="MPIJob", original=first, failed=first, failed_uid=made["metadata"]["uid"],
        name=retry, created_by="alice", scenario="node-lost", due=datetime.now(UTC),
        state=JobRetry.State.STARTED)
    page = alice.get(reverse("training-job-detail", args=[NS, "mpijob", retry])).content.decode()
    assert_valid(page)
    assert f"Retry 1 of 2 of {first}" in page
    assert reverse("training-job-detail", args=[NS, "mpijob", first]) in page
    page = alice.get(reverse("training-job-detail", args=[NS, "mpijob", first])).content.decode()
    assert_valid(page)
    assert "The node was lost" in page and f"{first} failed" in page
    assert reverse("training-job-detail", args=[NS, "mpijob", retry]) in page
    assert "1 of 2" in page and "Started" in page


def test_the_history_records_of_a_job_and_its_retry_tell_the_line(alice):
    from tests.integration.dashboard.test_job_history import _record, _url

    first = _record(uid="uid-retry-first", name="gone-bert")
    spec = dict(first.spec, metadata={**first.spec["metadata"], "name": "gone-bert-retry-1",
                                      "annotations": {
                                          **first.spec["metadata"].get("annotations", {}),
                                          RETRIES_ANNOTATION: "1",
                                          RETRY_OF_ANNOTATION: "gone-bert",
                                          RETRY_OF_UID_ANNOTATION: "uid-retry-first",
                                          RETRY_ATTEMPT_ANNOTATION: "1"}})
    retry = _record(uid="uid-retry-second", name="gone-bert-retry-1", spec=spec)
    JobRetry.objects.create(
        original_uid="uid-retry-first", attempt=1, retries=1, namespace=NS, kind="MPIJob",
        original="gone-bert", failed="gone-bert", failed_uid="uid-retry-first",
        name="gone-bert-retry-1", created_by="alice", scenario="evicted",
        due=datetime.now(UTC), state=JobRetry.State.STARTED)
    page = alice.get(_url(retry)).content.decode()
    assert_valid(page)
    assert "Retry 1 of 1 of gone-bert" in page and "(this job)" in page
    page = alice.get(_url(first)).content.decode()
    assert_valid(page)
    assert "gone-bert-retry-1" in page and "Evicted" in page and "gone-bert failed" in page
