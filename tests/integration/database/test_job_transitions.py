"""Claiming a job transition in the database (training/live/hub/keepers/transitions.py): each change
of a job's status recorded once, whoever sees it and in whatever order; the history of a
finished job written with its transition; creations and deletions the dashboard did not
make told to the audit trail as "seen", once, found by their own index; the rows of jobs
deleted a day ago pruned, their transitions kept. Run on SQLite here and on PostgreSQL by
test_on_postgresql.py."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from odh.training.status.summarize import summarize
from training.live.hub.keepers.transition_rows import (
    AUDIT_GRACE,
    PRUNE_AFTER,
    Sighting,
    audit_seen_with_orm,
    claim_with_orm,
    due_for_audit,
    prune_with_orm,
)
from training.models import AuditEvent, JobHistory, JobState, JobTransition

pytestmark = pytest.mark.django_db(transaction=True)


def _sighting(status: str | None, at: str = "2026-05-01T11:00:00Z", name: str = "bert",
              uid: str = "uid-bert") -> Sighting:
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
           "metadata": {"name": name, "namespace": "team-nlp", "uid": uid,
                        "creationTimestamp": "2026-05-01T10:00:00Z",
                        "annotations": {"opendatahub.io/username": "alice"}},
           "spec": {"mpiReplicaSpecs": {}},
           "status": {"conditions": [{"type": status, "status": "True", "reason": "x",
                                      "lastTransitionTime": at}] if status else [],
                      "startTime": "2026-05-01T10:01:00Z"}}
    summary = summarize(job, [], [], datetime(2026, 5, 1, 12, tzinfo=UTC))
    return Sighting.of(job, summary, "Worker 2 was OOMKilled" if status == "Failed" else "")


def _events() -> list[tuple[str, str]]:
    return list(JobTransition.objects.order_by("id").values_list("from_status", "to_status"))


def test_it_records_each_new_status_once_and_never_goes_back():
    pending, running = _sighting(None), _sighting("Running")
    assert claim_with_orm(pending).transition is not None
    assert claim_with_orm(pending).transition is None  # the other watcher, or seen again
    assert claim_with_orm(running).transition is not None
    assert claim_with_orm(pending).transition is None  # a watcher behind: moves nothing
    failed = _sighting("Failed", at="2026-05-01T11:30:00Z")
    claim = claim_with_orm(failed)
    assert claim.transition is not None and claim.history_written
    assert claim_with_orm(failed).transition is None
    assert claim_with_orm(failed.deleted(datetime.now(UTC))).transition is not None
    assert claim_with_orm(running).transition is None  # deleted stays deleted
    assert _events() == [("", "Pending"), ("Pending", "Running"), ("Running", "Failed"),
                         ("Failed", "Deleted")]
    event = JobTransition.objects.get(to_status="Failed")
    assert (event.kind, event.namespace, event.name, event.created_by, event.headline) == (
        "MPIJob", "team-nlp", "bert", "alice", "Worker 2 was OOMKilled")
    record = JobHistory.objects.get(uid="uid-bert")
    assert (record.outcome, record.name) == ("Failed", "bert")


def test_a_job_first_seen_finished_gets_its_creation_and_its_history_at_once():
    claim = claim_with_orm(_sighting("Succeeded"))
    assert claim.history_written
    assert _events() == [("", "Succeeded")]
    assert JobHistory.objects.filter(uid="uid-bert").count() == 1
    # a job never seen before that is gone says nothing
    gone = _sighting("Running", name="other", uid="uid-other").deleted(datetime.now(UTC))
    assert claim_with_orm(gone).transition is None


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="SQLite lets one writer in at a time: no race to lose")
def test_watchers_racing_on_one_transition_record_it_once():
    claim_with_orm(_sighting("Running"))
    failed = _sighting("Failed", at="2026-05-01T11:30:00Z")
    start, claims = threading.Barrier(6), []

    def race() -> None:
        try:
            start.wait()
            claims.append(claim_with_orm(failed))
        finally:
            connection.close()

    threads = [threading.Thread(target=race) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sum(c.transition is not None for c in claims) == 1
    assert sum(c.history_written for c in claims) == 1
    assert _events() == [("", "Running"), ("Running", "Failed")]
    assert JobHistory.objects.filter(uid="uid-bert").count() == 1


def test_creations_and_deletions_made_elsewhere_are_audited_as_seen_once():
    made_here = _sighting("Running", name="from-wizard", uid="uid-w")
    AuditEvent.objects.create(username="alice", project="team-nlp", kind="MPIJob",
                              name="from-wizard", verb="create", outcome="success")
    claim_with_orm(made_here)
    claim_with_orm(_sighting("Running", name="from-kubectl", uid="uid-k"))
    claim_with_orm(_sighting("Running", name="from-kubectl", uid="uid-k").deleted(
        datetime.now(UTC)))
    # not before the dashboard had time to write its own row
    assert audit_seen_with_orm(datetime.now(UTC)) == 0
    later = datetime.now(UTC) + AUDIT_GRACE + timedelta(seconds=1)
    assert audit_seen_with_orm(later) == 2
    assert audit_seen_with_orm(later) == 0  # told once
    seen = list(AuditEvent.objects.filter(outcome="seen").order_by("id").values_list(
        "verb", "name", "username"))
    assert seen == [("create", "from-kubectl", "alice"), ("delete", "from-kubectl", "")]
    assert not AuditEvent.objects.filter(name="from-wizard", outcome="seen").exists()


def test_it_finds_the_transitions_to_audit_by_their_own_index():
    # the audit pass runs every 2 s against every transition ever recorded, nearly all
    # audited long ago: the planner, told so (ANALYZE), reads only the few that are not
    now = datetime.now(UTC)
    JobTransition.objects.bulk_create(
        JobTransition(uid=f"uid-{i}", namespace="team-nlp", kind="MPIJob", name=f"job-{i}",
                      from_status="Running", to_status="Succeeded", at=now,
                      audited=i % 100 != 0)
        for i in range(1000))
    # recorded a day ahead: a watch hub's recorder left running in this test process
    # (its audit pass every 2 s, on the real clock) must not audit them meanwhile
    ahead = now + timedelta(days=1)
    JobTransition.objects.filter(uid__startswith="uid-").update(recorded=ahead)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    later = ahead + AUDIT_GRACE + timedelta(seconds=1)
    assert due_for_audit(later).count() == 10
    plan = due_for_audit(later)[:200].explain()
    assert "jobtransition_unaudited_idx" in plan, plan


def test_it_prunes_the_rows_of_jobs_deleted_a_day_ago_and_keeps_their_transitions():
    running = _sighting("Running")
    claim_with_orm(running)
    claim_with_orm(_sighting("Running", name="alive", uid="uid-alive"))
    claim_with_orm(running.deleted(datetime.now(UTC)))
    assert prune_with_orm(datetime.now(UTC) + PRUNE_AFTER - timedelta(minutes=1)) == 0
    assert prune_with_orm(datetime.now(UTC) + PRUNE_AFTER + timedelta(seconds=1)) == 1
    # the job still there is kept however long its status has not changed
    assert list(JobState.objects.values_list("uid", flat=True)) == ["uid-alive"]
    # then another watcher sees the deletion, one that is behind sees the job running, or
    # finished: nothing is recorded and the row does not come back
    assert claim_with_orm(running.deleted(datetime.now(UTC))).transition is None
    assert claim_with_orm(running).transition is None
    assert claim_with_orm(_sighting("Failed", at="2026-05-01T11:30:00Z")).transition is None
    assert not JobState.objects.filter(uid="uid-bert").exists()
    assert list(JobTransition.objects.filter(uid="uid-bert").order_by("id").values_list(
        "from_status", "to_status")) == [("", "Running"), ("Running", "Deleted")]
    assert not JobHistory.objects.filter(uid="uid-bert").exists()


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="SQLite lets one writer in at a time: no race to lose")
def test_it_records_nothing_more_of_a_deleted_job_whose_row_is_pruned_meanwhile():
    running = _sighting("Running")
    claim_with_orm(running)
    deleted = running.deleted(datetime.now(UTC))
    claim_with_orm(deleted)
    later = datetime.now(UTC) + PRUNE_AFTER + timedelta(seconds=1)
    start, claims, pruned = threading.Barrier(5), [], []

    def race(work) -> None:
        try:
            start.wait()
            work()
        finally:
            connection.close()

    # two watchers seeing the deletion again and two that are behind, around the prune
    works = [lambda: pruned.append(prune_with_orm(later))] + [
        lambda s=s: claims.append(claim_with_orm(s)) for s in (deleted, deleted, running,
                                                                running)]
    threads = [threading.Thread(target=race, args=(work,)) for work in works]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert pruned == [1] and len(claims) == 4
    assert all(c.transition is None for c in claims)
    assert not JobState.objects.filter(uid="uid-bert").exists()
    assert _events() == [("", "Running"), ("Running", "Deleted")]
