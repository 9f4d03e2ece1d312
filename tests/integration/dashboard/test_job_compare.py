"""Jobs side by side (/jobs/compare/): live jobs, history records, jobs that are gone."""

from __future__ import annotations

import copy
import html
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from tests.html_checks import assert_valid

COMPARE = reverse("training-job-compare")
GPT2 = "team-nlp/mpijob/gpt2-finetune"
BERT = "team-nlp/mpijob/bert-large-pretrain"


def _text(body: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))


def _row(body: str, label: str) -> str:
    match = re.search(rf"<tr[^>]*>\s*<th scope=\"row\"[^>]*>[^<]*(?:<i[^>]*></i> )?"
                      rf"{re.escape(label)}.*?</tr>", body, re.S)
    assert match, f"no row {label}"
    return match.group(0)


@pytest.fixture
def succeeded_record(db, alice):
    """A successful earlier run of gpt2-finetune's configuration, with more memory."""
    from odh.training.kinds import MPIJOB
    from odh.training.queries import job_detail
    from tests.dashboard_support import session_token
    from training.cluster import client_for_token
    from training.models import JobHistory

    with client_for_token(session_token(alice)) as client:
        job = job_detail(client, MPIJOB, "team-nlp", "gpt2-finetune").job
    spec = copy.deepcopy(job)
    spec.pop("status", None)
    worker = spec["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    worker["resources"]["limits"]["memory"] = "96Gi"
    now = datetime.now(UTC)
    record, _created = JobHistory.record_once(
        uid="uid-gpt2-finetune-v1", namespace="team-nlp", kind="MPIJob",
        name="gpt2-finetune-v1", outcome="Succeeded", created_by="alice", spec=spec,
        started=now - timedelta(hours=6), finished=now - timedelta(hours=4),
        duration_seconds=7200.0, gpu_hours=8.0)
    return record


def test_two_live_jobs_side_by_side_with_the_differences_marked(alice):
    response = alice.get(COMPARE, {"job": [GPT2, BERT]})
    assert response.status_code == 200
    body = response.content.decode()
    assert_valid(body)
    memory = _row(body, "Memory per worker")
    assert 'class="dash-differs"' in memory and "(differs)" in memory
    assert "48Gi" in memory and "64Gi" in memory
    slots = _row(body, "Slots per worker")
    assert "dash-differs" not in slots
    outcome = _text(body)
    assert "Worker 2 ran out of memory and was killed (exit code 137)" in outcome
    assert "GPU-hours" in outcome


def test_a_history_record_compares_like_a_job_and_the_failed_page_offers_it(alice,
                                                                           succeeded_record):
    page = alice.get(reverse("training-job-detail", args=GPT2.split("/"))).content.decode()
    offer = re.search(r'href="([^"]*history%3Auid-gpt2-finetune-v1[^"]*)"', page)
    assert offer, "the failed job's card offers no comparison with the successful run"
    card = _text(page)
    assert "Compare with gpt2-finetune-v1, a similar run that succeeded (Memory per worker " \
        "96Gi)" in card
    body = alice.get(html.unescape(offer.group(1))).content.decode()
    assert_valid(body)
    memory = _row(body, "Memory per worker")
    assert "96Gi" in memory and "(differs)" in memory
    assert "(history)" in body


def test_a_job_that_is_gone_is_said_to_be_gone(alice):
    body = alice.get(COMPARE, {"job": [GPT2, "team-nlp/mpijob/never-was-here"]}).content
    text = _text(body.decode())
    assert "never-was-here" in text
    assert "no longer exists, and it has no history record to compare with" in text


def test_bad_references_and_other_peoples_jobs_are_said_not_500(alice, bob):
    text = _text(alice.get(COMPARE, {"job": ["nonsense", "history:nope"]}).content.decode())
    assert "does not name a job" in text
    assert "There is no history record “nope”." in text
    refused = _text(bob.get(COMPARE, {"job": [GPT2]}).content.decode())
    assert "You may not see this job." in refused


def test_one_job_offers_others_to_compare_with(alice):
    body = alice.get(COMPARE, {"job": [GPT2]}).content.decode()
    assert_valid(body)
    assert re.search(r'<label[^>]*for="compare-add"', body)
    assert 'value="team-nlp/mpijob/bert-large-pretrain"' in body
