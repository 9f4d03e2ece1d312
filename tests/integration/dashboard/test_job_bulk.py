"""Suspend, Resume, Delete and Export several ticked jobs at once (issue 26 item 2): one
confirmation naming them, each made with the person's token, only where they may, a
result per job and one audit row per job."""

from __future__ import annotations

import uuid

import pytest
import yaml
from django.test import Client
from django.urls import reverse

from tests.dashboard_support import sign_in
from tests.html_checks import assert_valid
from tests.training_jobs import Jobs, mpijob
from tests.waiting import wait_until
from training.models import AuditEvent

BULK = reverse("training-job-bulk")
EXPORT = reverse("training-job-bulk-export")
NS = "team-nlp"
BOBS = "research/pytorchjob/bert-classifier-ddp"  # research: bob's project, not alice's


@pytest.fixture
def three_jobs(demo_cluster):
    """Three of alice's running team-nlp jobs, the third suspended already; deleted after."""
    with demo_cluster.api_client("alice") as api:
        jobs = Jobs(api, NS)
        names = [f"bulk-{i}-{uuid.uuid4().hex[:6]}" for i in range(3)]
        for name in names:
            jobs.create(mpijob(name, workers=1, run_seconds=3600,
                               annotations={"opendatahub.io/username": "alice"}))
        jobs.patch(names[2], {"spec": {"runPolicy": {"suspend": True}}})
        yield jobs, names
        jobs.cleanup()


def _refs(names: list[str]) -> list[str]:
    return [f"{NS}/mpijob/{name}" for name in names]


def _suspended(jobs: Jobs, name: str) -> bool:
    return (jobs.get(name)["spec"].get("runPolicy") or {}).get("suspend") is True


def _outcome(body: str, ref: str) -> str:
    row_id = 'id="bulk-result-' + ref.replace("/", "-") + '"'
    row = body[body.index(row_id):]
    return row[row.index('data-outcome="') + 14:].split('"', 1)[0]


def test_the_confirmation_names_each_job_and_those_left_alone(alice, three_jobs):
    jobs, names = three_jobs
    r = alice.get(BULK, {"action": "suspend", "job": _refs(names[:2]) + [BOBS]})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    assert "Suspend 3 jobs?" in body
    for name in names[:2] + ["bert-classifier-ddp"]:
        assert f"<strong>{name}</strong>" in body
    assert "Not changed: you have no access to the project “research”." in body
    assert 'name="csrfmiddlewaretoken"' in body and "Suspend jobs" in body
    assert not _suspended(jobs, names[0])  # nothing happened yet
    assert not AuditEvent.objects.filter(name__in=names).exists()


def test_alice_suspends_mixed_jobs_with_a_result_and_an_audit_row_each(alice, three_jobs):
    jobs, names = three_jobs
    chosen = _refs(names) + [BOBS]
    r = alice.post(BULK, {"action": "suspend", "job": chosen})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    assert [_outcome(body, ref) for ref in chosen] == ["done", "done", "already", "refused"]
    assert "Not changed: you have no access to the project “research”." in body
    assert "Already suspended: nothing was changed." in body
    assert "2 jobs done, 1 already so, 1 refused" in body  # the announced line
    wait_until(lambda: _suspended(jobs, names[0]) and _suspended(jobs, names[1]), 30,
               message="both to be suspended")
    rows = AuditEvent.objects.filter(verb="suspend", username="alice",
                                     name__in=names + ["bert-classifier-ddp"])
    assert sorted((e.name, e.outcome) for e in rows) == sorted(
        [(names[0], "success"), (names[1], "success"), (names[2], "success"),
         ("bert-classifier-ddp", "denied")])
    assert all(e.detail.startswith("bulk") for e in rows)


def test_an_htmx_post_swaps_in_the_results_and_fills_the_live_region(alice, three_jobs):
    _jobs, names = three_jobs
    r = alice.post(BULK, {"action": "resume", "job": _refs(names[1:])}, HTTP_HX_REQUEST="true")
    body = r.content.decode()
    assert body.lstrip().startswith('<div id="bulk-body">')
    assert '<div id="bulk-status" hx-swap-oob="innerHTML">1 job done, 1 already so</div>' \
        in body
    assert_valid(body, page=False)


def test_bob_may_view_but_not_change_research_so_nothing_is_sent(bob):
    confirm = bob.get(BULK, {"action": "delete", "job": [BOBS]}).content.decode()
    assert "You may not change any of these jobs: nothing to confirm." in confirm
    assert "Delete jobs" not in confirm  # no button for what would only be refused
    r = bob.post(BULK, {"action": "delete", "job": [BOBS]})
    body = r.content.decode()
    assert _outcome(body, BOBS) == "refused"
    assert "Not deleted: you may not delete PyTorchJobs in “research”." in body
    assert AuditEvent.objects.get(name="bert-classifier-ddp", verb="delete").outcome == "denied"
    assert "bert-classifier-ddp" in bob.get(reverse("training-job-list")).content.decode()


def test_alice_deletes_two_jobs_and_one_already_gone_is_said_so(alice, three_jobs):
    jobs, names = three_jobs
    gone = f"{NS}/mpijob/never-was-{uuid.uuid4().hex[:6]}"
    r = alice.post(BULK, {"action": "delete", "job": _refs(names[:2]) + [gone]})
    body = r.content.decode()
    assert [_outcome(body, ref) for ref in _refs(names[:2]) + [gone]] == [
        "done", "done", "already"]
    assert AuditEvent.objects.filter(verb="delete", name__in=names[:2],
                                     outcome="success").count() == 2
    wait_until(lambda: not any(n in {j["metadata"]["name"] for j in jobs.custom
                                     .list_namespaced_custom_object(
                                         "kubeflow.org", "v2beta1", NS, "mpijobs")["items"]}
                               for n in names[:2]), 60, message="both to be gone")


def test_export_gives_one_yaml_document_per_job_it_could_read(alice, three_jobs):
    _jobs, names = three_jobs
    r = alice.get(EXPORT, {"job": _refs(names[:2]) + [BOBS]})
    assert r["Content-Type"] == "application/yaml"
    assert r["Content-Disposition"] == 'attachment; filename="training-jobs.yaml"'
    text = r.content.decode()
    assert text.startswith(f"# {BOBS}: Not exported: you have no access to the project "
                           "“research”.\n")
    documents = list(yaml.safe_load_all(text))
    assert [d["metadata"]["name"] for d in documents] == names[:2]
    assert all("managedFields" not in d["metadata"] for d in documents)


def test_nothing_ticked_says_how_and_a_post_needs_the_csrf_token(alice, demo_cluster):
    r = alice.get(BULK, {"action": "suspend"})
    assert r.status_code == 400
    assert "No job is ticked: tick one or more jobs in the list" in r.content.decode()
    browser = Client(enforce_csrf_checks=True)
    sign_in(browser, demo_cluster, "alice")
    refused = browser.post(BULK, {"action": "delete", "job": [f"{NS}/mpijob/bert-large-pretrain"]})
    assert refused.status_code == 403
    assert not AuditEvent.objects.filter(name="bert-large-pretrain", verb="delete").exists()


def test_the_list_offers_the_actions_on_the_ticked_jobs(alice):
    body = alice.get(reverse("training-job-list")).content.decode()
    for action in ("suspend", "resume", "delete"):
        assert f'formaction="{BULK}" name="action" value="{action}"' in body
    assert f'formaction="{EXPORT}"' in body
    assert 'aria-label="Select bert-large-pretrain"' in body
