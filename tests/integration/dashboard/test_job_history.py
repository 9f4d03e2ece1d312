"""A finished job's history record: its page, and the ways to it once the job is gone (the
"no longer exists" page, the audit trail)."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from odh.training.kinds.mpijob.model import MPIJobSpec
from odh.training.spec import build_manifest
from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard.wizard_flow import draft, key_of, step_url
from tests.page_text import text_of
from tests.wizard_cluster import ClusterJobs
from training.models import AuditEvent, JobHistory

NS = "team-nlp"
NAME = "history-gone-finetune"
FINISHED = datetime(2025, 3, 4, 12, 0, 0, tzinfo=UTC)
DURATION = 2 * 3600 + 15 * 60 + 43  # 2h 15m 43s


def _record(uid: str = "uid-history-1", name: str = NAME, finished: datetime = FINISHED,
            **overrides) -> JobHistory:
    spec = MPIJobSpec(name=name, namespace=NS, image="quay.io/opendatahub/horovod:0.28.1",
                      command=["horovodrun", "-np", "2", "python", "/workspace/train.py"],
                      workers=2, cpu_per_worker="8", memory_per_worker="32Gi",
                      gpus_per_worker=1, created_by="alice")
    fields = {"uid": uid, "namespace": NS, "kind": "MPIJob", "name": name,
              "created_by": "alice", "spec": build_manifest(spec), "outcome": "Failed",
              "reason": "BackoffLimitExceeded", "message": "Job has reached the backoff limit",
              "cause": "Worker 1 was OOMKilled", "cause_reason": "OOMKilled",
              "started": finished - timedelta(seconds=DURATION), "finished": finished,
              "duration_seconds": float(DURATION), "gpu_hours": 4.52}
    return JobHistory.objects.create(**(fields | overrides))


def _url(record: JobHistory) -> str:
    return reverse("training-job-history", args=[record.namespace, "mpijob", record.name,
                                                 record.uid])


def _hrefs(body: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="([^"]+)"', body)]


def test_it_shows_alice_the_record_of_a_finished_team_nlp_job(alice):
    record = _record()
    r = alice.get(_url(record))
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    # outcome as colour + icon + text
    status = body.split('<span id="history-status">', 1)[1]
    assert status.startswith('<span class="pf-v6-c-label pf-m-red dash-status" '
                             'data-status="Failed"')
    assert 'class="fas fa-exclamation-circle"' in status[:400]
    assert text_of(body, "history-status") == "Failed"
    facts = text_of(body, "history-facts")
    assert "2h 15m 43s" in facts and "4.52" in facts and "alice" in facts
    # in the person's zone (UTC until the browser says) and language's date order
    assert "03/04/2025 12:00:00 UTC" in facts and "03/04/2025 09:44:17 UTC" in facts
    outcome = text_of(body, "history-outcome")
    assert "BackoffLimitExceeded" in outcome and "Worker 1 was OOMKilled" in outcome
    config = html.unescape(text_of(body, "history-configuration"))
    assert "Launcher" in config and "Slots per worker 1" in config
    assert "2 Workers, each with 8 CPU, 32Gi, 1 GPU" in config
    assert "no longer exists" in text_of(body, "history-existence")
    assert reverse("training-job-retry", args=[NS, "mpijob", NAME]) in _hrefs(body)


def test_it_opens_the_wizard_prefilled_from_the_records_clone_link(alice):
    body = alice.get(_url(_record())).content.decode()
    clone = next(h for h in _hrefs(body) if "?clone=" in h)
    r = alice.get(clone)
    assert r.status_code == 302
    key = key_of(r)
    assert r["Location"] == step_url(key, "configuration")
    data = draft(key).data
    assert data["name"].startswith(f"{NAME}-") and data["namespace"] == NS
    assert data["workers"] == "2"
    assert "comes from its history record" in alice.get(r["Location"]).content.decode()


def test_it_offers_clone_only_on_the_newest_run_of_a_name(alice):
    older = _record("uid-history-old", finished=FINISHED - timedelta(days=1))
    newer = _record("uid-history-new")
    body = alice.get(_url(older)).content.decode()
    assert not any("?clone=" in h for h in _hrefs(body))
    assert _url(newer) in _hrefs(body)
    assert any("?clone=" in h for h in _hrefs(alice.get(_url(newer)).content.decode()))


def test_it_says_when_the_recorded_job_still_exists(alice, demo_cluster):
    with demo_cluster.api_client("admin") as api:
        live = ClusterJobs(api).get(NS, "gpt2-finetune")
    record = _record(live["metadata"]["uid"], name="gpt2-finetune")
    body = alice.get(_url(record)).content.decode()
    assert "still exists" in text_of(body, "history-existence")
    assert reverse("training-job-detail", args=[NS, "mpijob", "gpt2-finetune"]) in _hrefs(body)


def test_it_forbids_bob_the_record(bob):
    r = bob.get(_url(_record()))
    assert r.status_code == 403
    assert_valid(r.content.decode())
    assert NAME not in r.content.decode()


def test_it_forbids_bob_even_a_record_that_does_not_exist(bob, db):
    r = bob.get(reverse("training-job-history", args=[NS, "mpijob", NAME, "no-such-uid"]))
    assert r.status_code == 403


def test_it_says_a_missing_record_is_not_found(alice):
    record = _record()
    assert alice.get(reverse("training-job-history",
                             args=[NS, "mpijob", NAME, "no-such-uid"])).status_code == 404
    # the uid of another job's record, under this name
    assert alice.get(reverse("training-job-history",
                             args=[NS, "mpijob", "other", record.uid])).status_code == 404


def test_it_sends_anonymous_people_to_sign_in(client, db):
    url = _url(_record())
    r = client.get(url)
    assert r.status_code == 302
    assert r["Location"].startswith(reverse("training-login"))


def test_it_links_the_missing_job_page_to_its_newest_record(alice):
    _record("uid-history-old", finished=FINISHED - timedelta(days=1))
    newest = _record("uid-history-new")
    r = alice.get(reverse("training-job-detail", args=[NS, "mpijob", NAME]))
    assert r.status_code == 404
    body = r.content.decode()
    assert_valid(body)
    assert "This job no longer exists" in body
    assert "Failed" in text_of(body, "missing-job-history")
    hrefs = _hrefs(body)
    assert _url(newest) in hrefs
    assert f"{reverse('training-job-new')}?clone={NS}/mpijob/{NAME}" in hrefs
    assert reverse("training-job-list") in hrefs  # Back
    assert alice.get(_url(newest)).status_code == 200


def test_it_offers_no_record_on_the_missing_job_page_without_history(alice):
    r = alice.get(reverse("training-job-detail", args=[NS, "mpijob", "never-recorded"]))
    assert r.status_code == 404
    body = r.content.decode()
    assert not any("/history/" in h or "?clone=" in h for h in _hrefs(body))
    assert reverse("training-job-list") in _hrefs(body)


@pytest.fixture
def deleted_job_in_the_audit_trail(db):
    record = _record()
    event = AuditEvent.objects.create(username="alice", groups=[], project=NS, kind="MPIJob",
                                      name=NAME, verb="delete", outcome="success")
    return record, event


def test_it_leads_from_the_audit_row_of_a_deleted_job_to_its_record(
        admin, deleted_job_in_the_audit_trail):
    record, event = deleted_job_in_the_audit_trail
    trail = admin.get(reverse("training-cluster-audit"), {"project": NS, "user": "alice"})
    assert trail.status_code == 200
    row = re.search(rf'<tr id="audit-{event.pk}"[^>]*>(.*?)</tr>', trail.content.decode(),
                    re.S).group(1)
    job_page = next(h for h in _hrefs(row) if NAME in h)
    gone = admin.get(job_page)
    assert gone.status_code == 404
    assert _url(record) in _hrefs(gone.content.decode())
    page = admin.get(_url(record))
    assert page.status_code == 200
    assert "Worker 1 was OOMKilled" in page.content.decode()
