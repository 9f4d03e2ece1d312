"""The job history, written by the watch hub: one record per job uid when a job finishes.

The hub's flusher computes every changed job's summary; when a job is Succeeded or
Failed it hands the job and its summary to `HistoryWriter.submit()`. The writer's own
thread stores the record with `JobHistory.record_finished` (idempotent per uid: when two
watchers, or two processes, see the same job finish, the database keeps the first record
and the other finds it), so a slow or locked database never delays live updates.

What the hub lists when it starts counts too: jobs that finished while no watcher ran get
their record then. A record that cannot be written (the database is away) is tried again
with back-off (1 s doubling to 60 s) for as long as the job is known; if the process
stops first, the next watcher to start writes it from its first list.

The thread uses Django's ORM the way a request would: its own connection (Django keeps
one per thread), `close_old_connections()` around each batch so that a connection past
CONN_MAX_AGE or broken by a database restart is replaced, and closed when it stops.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from odh.training.status.summary import JobSummary

log = logging.getLogger("training.live.hub")

Obj = dict[str, Any]
RETRY_SECONDS = (1.0, 60.0)


def record_with_orm(job: Obj, summary: JobSummary, project_uid: str = "") -> bool:
    """Write the record if it is not there yet; whether this call wrote it."""
    from training.models import JobHistory

    _record, created = JobHistory.record_finished(job, summary, project_uid)
    return created


class HistoryWriter:
    """`project_uid(namespace)` tells the uid of the project a record belongs to (the
    records are bound to it: training.models.JobHistory.of_project)."""

    def __init__(self, record: Callable[..., bool] = record_with_orm,
                 project_uid: Callable[[str], str] | None = None) -> None:
        self.record = record
        self.project_uid = project_uid
        self.written = 0  # records this process wrote
        self.found = 0  # records already there (another watcher's, or an earlier run's)
        self.errors = 0
        self.last_error = ""
        self._queue: dict[str, tuple[Obj, JobSummary]] = {}  # uid -> the latest seen
        self._done: set[str] = set()  # uids whose record exists
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._retry_at = 0.0
        self._delay = 0.0
        self._thread: threading.Thread | None = None

    # -- life ---------------------------------------------------------------------------------
    def start(self) -> HistoryWriter:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True, name="hub-history")
            self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def stats(self) -> dict[str, Any]:
        with self._cond:
            queued = len(self._queue)
        return {"written": self.written, "found": self.found, "queued": queued,
                "errors": self.errors, "last_error": self.last_error}

    # -- from the hub -----------------------------------------------------------------------------
    def submit(self, job: Obj, summary: JobSummary) -> None:
        """A finished job the hub saw: record it unless that was done already."""
        uid = summary.uid
        if not uid or not summary.is_finished:
            return
        with self._cond:
            if uid in self._done:
                return
            self._queue[uid] = (job, summary)
            self._cond.notify()

    def forget(self, uid: str) -> None:
        """The job is gone: stop remembering that its record exists (memory stays bounded;
        should it come back, record_once finds the record)."""
        with self._cond:
            self._done.discard(uid)

    def idle(self) -> bool:
        """Nothing left to write (tests)."""
        with self._cond:
            return not self._queue

    # -- the writer thread ------------------------------------------------------------------------
    def _run(self) -> None:
        from django.db import close_old_connections, connection

        try:
            while not self._stop.is_set():
                with self._cond:
                    wait = self._retry_at - time.monotonic()
                    if not self._queue or wait > 0:
                        self._cond.wait(max(0.01, wait) if self._queue else 1.0)
                        continue
                    batch = list(self._queue.items())
                close_old_connections()
                try:
                    self._write(batch)
                finally:
                    close_old_connections()
        finally:
            connection.close()

    def _write(self, batch: list[tuple[str, tuple[Obj, JobSummary]]]) -> None:
        for uid, item in batch:
            if self._stop.is_set():
                return
            job, summary = item
            try:
                bound = {"project_uid": self.project_uid(summary.namespace)} \
                    if self.project_uid is not None else {}
                created = self.record(job, summary, **bound)
            except ValueError as e:  # not recordable (no uid, not finished): drop it
                log.warning("job history: not recording %s/%s: %s", summary.namespace,
                            summary.name, e)
                self._settle(uid, item, done=False)
                continue
            except Exception as e:  # the database is away or refused: try again later
                self.errors += 1
                self.last_error = f"{type(e).__name__}: {e}"
                self._delay = min(max(self._delay * 2, RETRY_SECONDS[0]), RETRY_SECONDS[1])
                self._retry_at = time.monotonic() + self._delay
                level = logging.WARNING if self._delay <= RETRY_SECONDS[0] else logging.DEBUG
                log.log(level, "job history: cannot write the record of %s/%s (%s); "
                        "trying again in %.0fs", summary.namespace, summary.name,
                        self.last_error, self._delay)
                return
            self._delay = 0.0
            if created:
                self.written += 1
                log.info("job history: recorded %s %s/%s (%s)", summary.kind.kind,
                         summary.namespace, summary.name, summary.status)
            else:
                self.found += 1
            self._settle(uid, item, done=True)

    def _settle(self, uid: str, item: tuple[Obj, JobSummary], done: bool) -> None:
        with self._cond:
            # recorded (or found): a newer sighting queued meanwhile would change nothing,
            # the record is written once; not recordable: a newer one may be
            if done or self._queue.get(uid) is item:
                self._queue.pop(uid, None)
            if done:
                self._done.add(uid)
