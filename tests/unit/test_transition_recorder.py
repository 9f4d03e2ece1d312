"""The hub's transition recorder (training/live/hub/keepers/transitions.py) with a stand-in
database: what it hands to the claim, how it copes with a database that refuses, and when
it prunes the rows of deleted jobs."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from odh.training.status.summarize import summarize
from tests.waiting import wait_until
from training.live.hub.keepers.transitions import (
    DELETED,
    PRUNE_EVERY,
    Claim,
    Sighting,
    TransitionRecorder,
)


def _job(name: str, status: str | None = None, at: str = "2026-05-01T11:00:00Z"):
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
           "metadata": {"name": name, "namespace": "team-nlp", "uid": f"uid-{name}",
                        "creationTimestamp": "2026-05-01T10:00:00Z"},
           "spec": {"mpiReplicaSpecs": {}},
           "status": {"conditions": [{"type": status, "status": "True", "reason": "x",
                                      "lastTransitionTime": at}] if status else []}}
    return job, summarize(job, [], [], datetime(2026, 5, 1, 12, tzinfo=UTC))


class FlakyDatabase:
    """Keeps the last status per uid like JobState; refuses the first `failures` claims."""

    def __init__(self, failures: int = 0, rows: dict[str, Sighting] | None = None) -> None:
        self.failures = failures
        self.state: dict[str, str] = {}
        self.transitions: list[tuple[str, str, str]] = []
        self.rows = rows or {}
        self.written: dict[str, datetime] = {}  # uid -> when its row was last written
        self.calls = 0
        self.lock = threading.Lock()

    def claim(self, sighting: Sighting, **_bound) -> Claim:
        with self.lock:
            self.calls += 1
            if self.failures:
                self.failures -= 1
                raise ConnectionError("the database is restarting")
            before = self.state.get(sighting.uid, "")
            if before == sighting.status or (not before and sighting.status == DELETED):
                return Claim()
            self.state[sighting.uid] = sighting.status
            self.transitions.append((sighting.name, before, sighting.status))
            return Claim(transition=type("T", (), {"from_status": before})(),
                         history_written=sighting.status in ("Succeeded", "Failed"))

    def known(self) -> dict[str, str]:
        with self.lock:
            return dict(self.state)

    def recorded_of_kinds(self, kinds, before: datetime) -> list[Sighting]:
        return [s for s in self.rows.values() if s.kind in kinds and
                self.written.get(s.uid, datetime.min.replace(tzinfo=UTC)) < before]


class Clock:
    """The recorder's wall clock, moved by the test."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.lock = threading.Lock()

    def __call__(self) -> datetime:
        with self.lock:
            return self.now

    def advance(self, by: timedelta) -> None:
        with self.lock:
            self.now += by


def _recorder(db: FlakyDatabase, **parts) -> TransitionRecorder:
    parts.setdefault("prune", None)
    return TransitionRecorder(db.claim, audit_seen=None, known=db.known,
                              recorded_of_kinds=db.recorded_of_kinds, **parts).start()


def test_each_new_status_is_claimed_once_however_often_it_is_seen():
    db = FlakyDatabase()
    recorder = _recorder(db)
    try:
        for _ in range(3):
            recorder.saw(*_job("a"))  # Pending, three flushes
        wait_until(lambda: recorder.idle() and db.transitions == [("a", "", "Pending")])
        calls = db.calls
        recorder.saw(*_job("a"))  # known: not handed to the database again
        assert recorder.idle() and db.calls == calls
        recorder.saw(*_job("a", "Running"))
        wait_until(lambda: recorder.idle() and db.transitions[-1] == ("a", "Pending", "Running"))
        job, summary = _job("a", "Failed", at="2026-05-01T11:30:00Z")
        recorder.saw(job, summary, "Worker 2 was OOMKilled")
        wait_until(lambda: recorder.idle() and db.transitions[-1] == ("a", "Running", "Failed"))
        stats = recorder.stats()
        assert stats["written"] == 1 and stats["queued"] == 0
        recorder.gone(summary)
        wait_until(lambda: recorder.idle() and db.transitions[-1] == ("a", "Failed", DELETED))
    finally:
        recorder.stop()


def test_a_sighting_is_claimed_after_the_push_of_its_change_had_its_turn():
    db = FlakyDatabase()
    recorder = _recorder(db, claim_after=30)
    try:
        recorder.saw(*_job("late", "Running"))
        # the thread woke for it and chose to wait its time rather than claim
        wait_until(lambda: recorder.deferred >= 1)
        assert db.calls == 0, "claimed beside the push of the same change"
        assert recorder.stats()["queued"] == 1
    finally:
        recorder.stop()
    prompt = _recorder(db, claim_after=0)
    try:
        prompt.saw(*_job("late", "Running"))
        wait_until(lambda: db.transitions == [("late", "", "Running")])
    finally:
        prompt.stop()


def test_a_status_seen_again_while_it_is_claimed_is_claimed_and_counted_once():
    db = FlakyDatabase()
    job, summary = _job("again", "Failed")
    recorder = None

    def claim(sighting, **bound):
        if db.calls == 0:  # the hub flushes the job again meanwhile: the same status
            recorder.saw(*_job("again", "Failed"))
        return db.claim(sighting, **bound)

    recorder = TransitionRecorder(claim, audit_seen=None, known=db.known,
                                  recorded_of_kinds=db.recorded_of_kinds, prune=None,
                                  claim_after=0).start()
    try:
        recorder.saw(job, summary)
        wait_until(lambda: recorder.idle() and db.transitions == [("again", "", "Failed")])
        stats = recorder.stats()
        assert (db.calls, stats["written"], stats["found"]) == (1, 1, 0), stats
    finally:
        recorder.stop()


def test_a_claim_the_database_refused_is_tried_again_with_the_latest_sighting():
    db = FlakyDatabase(failures=2)
    recorder = _recorder(db)
    try:
        recorder.saw(*_job("b", "Failed"))
        wait_until(lambda: db.transitions == [("b", "", "Failed")], 30,
                   message=lambda: str(recorder.stats()))
        stats = recorder.stats()
        assert stats["errors"] == 2 and stats["written"] == 1 and stats["queued"] == 0
        assert "restarting" in stats["last_error"]
    finally:
        recorder.stop()


def test_a_job_recorded_but_not_listed_was_deleted_while_nothing_watched():
    _job_a, kept = _job("kept", "Running")
    _job_b, vanished = _job("vanished", "Running")
    db = FlakyDatabase(rows={s.uid: Sighting.of({}, s) for s in (kept, vanished)})
    db.state = {kept.uid: "Running", vanished.uid: "Running"}
    recorder = _recorder(db)
    try:
        recorder.listed({kept.uid}, {"MPIJob"})
        wait_until(lambda: recorder.idle() and db.transitions == [
            ("vanished", "Running", DELETED)])
        # the statuses already recorded were read first: the one still there is not claimed
        recorder.saw(*_job("kept", "Running"))
        assert recorder.idle() and ("kept", "", "Running") not in db.transitions
    finally:
        recorder.stop()


def test_a_job_another_watcher_recorded_after_the_list_was_read_is_not_deleted():
    """Two watchers: this one's first list is read, then (its database locked a while) the
    other records a job created since; this one must not take it for a deleted job."""
    _job_a, old = _job("old", "Running")
    _job_b, new = _job("new", "Pending")
    clock = Clock(datetime(2026, 5, 2, 12, tzinfo=UTC))
    db = FlakyDatabase(rows={s.uid: Sighting.of({}, s) for s in (old, new)})
    db.state = {old.uid: "Running", new.uid: "Pending"}
    db.written = {old.uid: clock() - timedelta(minutes=5), new.uid: clock() + timedelta(seconds=1)}
    recorder = _recorder(db, clock=clock)
    try:
        recorder.listed(set(), {"MPIJob"})  # neither listed: "old" was deleted meanwhile
        clock.advance(timedelta(seconds=2))
        wait_until(lambda: recorder.idle() and db.transitions == [("old", "Running", DELETED)])
        assert db.state[new.uid] == "Pending"
    finally:
        recorder.stop()


def test_a_finished_job_another_watcher_recorded_is_found():
    db = FlakyDatabase()
    job, summary = _job("c", "Succeeded")
    db.state[summary.uid] = "Succeeded"  # another watcher's claim
    recorder = _recorder(db)
    try:
        recorder.saw(job, summary)
        wait_until(recorder.idle)
        assert (recorder.stats()["found"], recorder.stats()["written"]) == (1, 0)
        assert db.transitions == []
    finally:
        recorder.stop()


def test_the_rows_of_deleted_jobs_are_pruned_on_the_recorders_thread_hourly():
    db = FlakyDatabase()
    clock = Clock(datetime(2026, 5, 2, 12, tzinfo=UTC))
    started = clock()
    pruned_at: list[datetime] = []

    def prune(now: datetime) -> int:
        pruned_at.append(now)
        if len(pruned_at) == 1:
            raise ConnectionError("the database is restarting")
        return 3

    recorder = _recorder(db, prune=prune, clock=clock)
    try:
        wait_until(lambda: pruned_at == [started])  # at once, with the recorder's clock
        # a prune that failed stops neither the thread nor the claims, and is not tried
        # again before the hour is out
        clock.advance(PRUNE_EVERY - timedelta(seconds=1))
        recorder.saw(*_job("a"))
        wait_until(lambda: recorder.idle() and db.transitions == [("a", "", "Pending")])
        assert pruned_at == [started] and recorder.stats()["pruned"] == 0
        clock.advance(timedelta(seconds=1))
        wait_until(lambda: len(pruned_at) == 2)
        assert pruned_at[1] == started + PRUNE_EVERY
        wait_until(lambda: recorder.stats()["pruned"] == 3)
        assert recorder.alive
    finally:
        recorder.stop()
