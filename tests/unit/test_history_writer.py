"""The hub's job-history writer (training/live/hub/history.py) with a stand-in database."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from odh.training.status.summarize import summarize
from tests.waiting import wait_until
from training.live.hub.history import HistoryWriter


def _finished(name: str, status: str = "Succeeded") -> tuple[dict, object]:
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
           "metadata": {"name": name, "namespace": "team-nlp", "uid": f"uid-{name}",
                        "creationTimestamp": "2026-05-01T10:00:00Z"},
           "spec": {"mpiReplicaSpecs": {}},
           "status": {"conditions": [{"type": status, "status": "True", "reason": "x",
                                      "lastTransitionTime": "2026-05-01T11:00:00Z"}]}}
    return job, summarize(job, [], [], datetime(2026, 5, 1, 12, tzinfo=UTC))


class FlakyDatabase:
    """Refuses the first `failures` writes (the database restarting), then keeps rows."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.rows: dict[str, str] = {}
        self.calls = 0
        self.lock = threading.Lock()

    def record(self, job: dict, summary) -> bool:
        with self.lock:
            self.calls += 1
            if self.failures:
                self.failures -= 1
                raise ConnectionError("the database is restarting")
            if summary.uid in self.rows:
                return False
            self.rows[summary.uid] = str(summary.status)
            return True


def test_each_finished_job_is_written_once_however_often_it_is_seen():
    db = FlakyDatabase()
    writer = HistoryWriter(db.record).start()
    try:
        job, summary = _finished("a")
        for _ in range(5):
            writer.submit(job, summary)
        running_job, running = _finished("b")
        running.status = running.status.__class__("Running")
        writer.submit(running_job, running)  # not finished: ignored
        wait_until(lambda: writer.idle() and db.rows == {"uid-a": "Succeeded"})
        writer.submit(job, summary)  # seen again later: known, not written again
        assert writer.idle()
        assert writer.stats()["written"] == 1 and db.calls <= 2
    finally:
        writer.stop()


def test_a_record_the_database_refused_is_tried_again():
    db = FlakyDatabase(failures=2)
    writer = HistoryWriter(db.record).start()
    try:
        writer.submit(*_finished("a", "Failed"))
        wait_until(lambda: db.rows == {"uid-a": "Failed"}, 30,
                   message=lambda: str(writer.stats()))
        stats = writer.stats()
        assert stats["errors"] == 2 and stats["written"] == 1 and stats["queued"] == 0
        assert "restarting" in stats["last_error"]
    finally:
        writer.stop()


def test_a_record_another_watcher_wrote_is_found():
    db = FlakyDatabase()
    job, summary = _finished("a")
    db.rows[summary.uid] = "Succeeded"
    writer = HistoryWriter(db.record).start()
    try:
        writer.submit(job, summary)
        wait_until(writer.idle)
        assert writer.stats()["found"] == 1 and writer.stats()["written"] == 0
    finally:
        writer.stop()
