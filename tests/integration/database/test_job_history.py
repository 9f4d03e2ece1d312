"""The job history: one record per job uid, however many watchers see the job finish.

Runs on the default database (SQLite) in the normal test run, and again on a real
PostgreSQL through test_on_postgresql.py.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from odh.training.status.history import history_fields
from odh.training.status.summarize import summarize
from training.models import JobHistory

T0 = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)


def _record(uid: str = "uid-1", **overrides):
    fields = {"uid": uid, "namespace": "team-nlp", "kind": "MPIJob", "name": "bert",
              "outcome": "Succeeded", "created_by": "alice", "spec": {"kind": "MPIJob"},
              "started": T0, "finished": T0 + timedelta(hours=2), "duration_seconds": 7200.0,
              "gpu_hours": 16.0}
    return JobHistory.record_once(**(fields | overrides))


def test_the_first_record_is_kept_and_later_ones_read_it(db):
    first, created = _record()
    assert created
    again, created_again = _record(outcome="Failed", reason="changed its mind",
                                   cause="Worker 0 was OOMKilled", cause_reason="OOMKilled")
    assert not created_again
    assert again.pk == first.pk and again.outcome == "Succeeded" and again.reason == ""
    assert (again.cause, again.cause_reason) == ("", "")
    assert JobHistory.objects.count() == 1


def test_it_records_only_finished_jobs_with_a_uid(db):
    with pytest.raises(ValueError, match="uid"):
        _record(uid="")
    with pytest.raises(ValueError, match="finished"):
        _record(outcome="Running")
    assert not JobHistory.objects.exists()


def test_a_record_from_a_finished_job_and_its_summary(db):
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
           "metadata": {"name": "gpt2", "namespace": "team-nlp", "uid": "uid-gpt2",
                        "resourceVersion": "42", "creationTimestamp": "2026-05-01T10:00:00Z",
                        "annotations": {"opendatahub.io/username": "alice"}},
           "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 4, "template": {"spec": {
               "containers": [{"name": "w", "image": "x", "resources": {
                   "limits": {"nvidia.com/gpu": "2"}}}]}}}}},
           "status": {"startTime": "2026-05-01T10:00:30Z",
                      "completionTime": "2026-05-01T11:30:30Z",
                      "conditions": [{"type": "Failed", "status": "True",
                                      "reason": "MPIJobFailed", "message": "OOMKilled",
                                      "lastTransitionTime": "2026-05-01T11:30:30Z"}]}}
    summary = summarize(job, [], [], T0 + timedelta(hours=3))
    record, created = JobHistory.record_finished(job, summary)
    assert created
    record.refresh_from_db()
    assert (record.uid, record.kind, record.namespace, record.name, record.created_by) == (
        "uid-gpt2", "MPIJob", "team-nlp", "gpt2", "alice")
    assert (record.outcome, record.reason, record.message) == (
        "Failed", "MPIJobFailed", "OOMKilled")
    assert (record.cause, record.cause_reason) == ("", "")  # no pods seen: no diagnosis
    assert record.duration_seconds == 5400.0
    assert record.gpu_hours == 12.0  # 8 GPUs for an hour and a half
    assert "status" not in record.spec
    assert "uid" not in record.spec["metadata"] and record.spec["metadata"]["name"] == "gpt2"
    with pytest.raises(ValueError, match="has not finished"):
        running = dict(job, status={"conditions": []})
        history_fields(running, summarize(running, [], [], T0))


def test_a_record_keeps_the_diagnosed_cause_of_a_failure(db):
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
           "metadata": {"name": "bert", "namespace": "team-nlp", "uid": "uid-bert",
                        "creationTimestamp": "2026-05-01T10:00:00Z"},
           "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {
               "containers": [{"name": "w", "image": "x"}]}}}}},
           "status": {"conditions": [{"type": "Failed", "status": "True",
                                      "reason": "BackoffLimitExceeded/Error",
                                      "lastTransitionTime": "2026-05-01T11:00:00Z"}]}}

    def worker(index: int, reason: str) -> dict:
        name = f"bert-worker-{index}"
        return {"metadata": {"name": name, "namespace": "team-nlp", "uid": f"uid-{name}",
                             "labels": {"training.kubeflow.org/job-name": "bert",
                                        "training.kubeflow.org/job-role": "worker",
                                        "training.kubeflow.org/replica-index": str(index)}},
                "spec": {"nodeName": "n1"},
                "status": {"phase": "Failed", "containerStatuses": [{
                    "name": "w", "state": {"terminated": {"reason": reason,
                                                          "exitCode": 137}}}]}}

    pods = [worker(0, "Error"), worker(1, "OOMKilled")]
    record, created = JobHistory.record_finished(job, summarize(job, pods, [], T0))
    assert created
    record.refresh_from_db()
    assert (record.reason, record.cause, record.cause_reason) == (
        "BackoffLimitExceeded/Error", "Worker 1 was OOMKilled", "OOMKilled")
    # seen again by another watcher, with other pods: the first record stays as it was
    again, created = JobHistory.record_finished(job, summarize(job, [worker(0, "Error")],
                                                               [], T0))
    assert not created and again.pk == record.pk
    assert (again.cause, again.cause_reason) == ("Worker 1 was OOMKilled", "OOMKilled")


@pytest.mark.django_db(transaction=True)
def test_watchers_racing_to_record_one_job_write_one_row():
    writers = 8
    barrier = threading.Barrier(writers)
    results: list[tuple[int, bool]] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def watcher(n: int) -> None:
        try:
            barrier.wait(10)
            record, created = _record(uid="uid-raced", reason=f"watcher {n}")
            with lock:
                results.append((record.pk, created))
        except BaseException as e:
            with lock:
                failures.append(e)
        finally:
            connection.close()

    threads = [threading.Thread(target=watcher, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert failures == []
    assert len(results) == writers
    assert len({pk for pk, _ in results}) == 1
    assert sum(created for _, created in results) == 1
    assert JobHistory.objects.filter(uid="uid-raced").count() == 1
