"""The watch hub's reader of training curves: each job's lead log (the Launcher's, rank
0's: `odh.training.logs.progress.progress_source`) read as the job runs, its loss,
accuracy, throughput... parsed once (odh/training/logs/curves.py) and kept with the job
(training.curves.models.TrainingCurves), so a finished or deleted job keeps its curves.

Why it reads the log's new lines every few seconds rather than following it: the hub
follows logs only while someone watches a pod's Logs tab (training/live/hub/logs.py); a
stream held open for every running job, for as long as it runs, would cost the API
server (and the kubelets behind it) one connection per running job of the whole cluster,
whether anyone looks or not. A read of what came since the last one (`sinceSeconds`, from
a minute before the newest line read, the lines read already left out by their
timestamps) costs one short request per running job every `TRAINING_CURVES_SECONDS` (15 s
by default), and each line is parsed once. When the job ends, its log is read one last
time (to its end) and the row is marked finished; a job that ended while no watcher ran is
read when the hub starts and finds it, if its Launcher's log is still there. What a
deleted pod took with it cannot be read: the curves are those read until then.

The hub hands every job it flushes to `saw()` (cheap: no I/O); the reads and the writes
happen on the keeper's own thread, with the dashboard's service account, like the
evidence keeper's (training/live/hub/keepers/evidence.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.logs.curves import CurveReader
from odh.training.logs.progress import progress_source
from odh.training.manifests.metric_patterns import job_patterns
from odh.training.status.summary import JobStatus, JobSummary
from training.live.hub.background import Background

log = logging.getLogger("training.live.hub")

Obj = dict[str, Any]
LIMIT_BYTES = 4 * 1024 * 1024  # one read at most; what follows is read next time
ENDED = (JobStatus.SUCCEEDED, JobStatus.FAILED)
STARTED = ("Running", "Succeeded", "Failed")  # a pod whose container has a log


@dataclass
class _Job:
    uid: str
    namespace: str
    kind: str
    name: str
    pod: str
    ended: bool
    due: float = 0.0  # monotonic time of its next read
    patterns: tuple[str, ...] = ()  # its own log patterns (manifests/metric_patterns.py)


class CurveKeeper(Background):
    name = "hub-curves"

    def __init__(self, client_factory: Callable[[], ClusterClient], every: float = 15.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.client_factory = client_factory
        self.every = every
        self.clock = clock
        self.reads = 0
        self.errors = 0
        self._jobs: dict[str, _Job] = {}
        self._done: set[str] = set()  # uids whose log was read to the end
        self._busy = False

    def idle(self) -> bool:
        """Nothing to read now (every job it follows is waiting for its next turn)."""
        now = self.clock()
        with self._cond:
            return not self._busy and all(j.due > now for j in self._jobs.values())

    def stats(self) -> dict[str, int]:
        with self._cond:
            return {"following": len(self._jobs), "reads": self.reads, "errors": self.errors}

    # -- from the hub ---------------------------------------------------------------------------
    def saw(self, job: Obj, summary: JobSummary) -> None:
        """The hub flushed this job: follow its lead log while it runs, read it to its end
        once when it ended."""
        uid = summary.uid
        if not uid or uid in self._done or summary.status not in (JobStatus.RUNNING, *ENDED):
            return
        source = progress_source(summary.replicas)
        if source is None or getattr(source, "status", "") not in STARTED:
            return
        ended = summary.status in ENDED
        with self._cond:
            known = self._jobs.get(uid)
            if known is not None and known.ended == ended and known.pod == source.name:
                return
            self._jobs[uid] = _Job(uid, summary.namespace, summary.kind.kind, summary.name,
                                   source.name, ended,
                                   due=self.clock() if ended or known is None else known.due,
                                   patterns=job_patterns(job))
            self._cond.notify()

    def gone(self, uid: str) -> None:
        """The job was deleted: what its log said until then stays."""
        with self._cond:
            self._jobs.pop(uid, None)

    # -- the keeper's thread ---------------------------------------------------------------------
    def run(self) -> None:
        from django.db import close_old_connections, connection

        try:
            while not self.stopping:
                now = self.clock()
                with self._cond:
                    due = [j for j in self._jobs.values() if j.due <= now]
                    self._busy = bool(due)
                    if not due:
                        soonest = min((j.due for j in self._jobs.values()), default=now + 1.0)
                        self._cond.wait(max(0.05, min(1.0, soonest - now)))
                        continue
                for job in due:
                    if self.stopping:
                        break
                    close_old_connections()
                    try:
                        self.read(job)
                    except Exception as e:  # the database away: next time
                        self.errors += 1
                        log.warning("curves: could not read %s/%s: %s", job.namespace,
                                    job.name, e)
                    finally:
                        close_old_connections()
                    with self._cond:
                        if self._jobs.get(job.uid) is job:
                            if job.uid in self._done:
                                del self._jobs[job.uid]
                            else:
                                job.due = self.clock() + self.every
        finally:
            connection.close()

    def read(self, job: _Job) -> None:
        """Read what the job's lead log says since the last read, keep its points."""
        from training.curves.models import TrainingCurves

        row = TrainingCurves.objects.filter(job_uid=job.uid).first()
        if row is not None and row.finished:
            self._done.add(job.uid)
            return
        reader = CurveReader(row.state if row is not None else None, patterns=job.patterns)
        since = reader.since_seconds(datetime.now(UTC))
        complete = True
        try:
            with self.client_factory() as client:
                text = client.read_log(job.namespace, job.pod, tail_lines=None,
                                       timestamps=True, limit_bytes=LIMIT_BYTES,
                                       since_seconds=since)
            self.reads += 1
            added = reader.feed_log(str(text), cut=text.cut)
            complete = not text.cut
        except errors.NotFound:  # the pod is gone: what was read is what there is
            added = 0
        except errors.ClusterError as e:  # not readable now: try again next time
            log.info("curves: no log of %s/%s (%s)", job.namespace, job.pod, e.message)
            if not job.ended:
                return
            added = 0
        finished = job.ended and complete
        if row is not None and not added and finished == row.finished and \
                reader.read_to == CurveReader(row.state).read_to:
            return  # nothing new: nothing written
        if row is None:
            if not added and not finished:
                return  # nothing yet: no row until there is
            row = TrainingCurves(job_uid=job.uid, namespace=job.namespace, kind=job.kind,
                                 name=job.name)
        row.pod, row.state, row.finished = job.pod, reader.state(), finished
        row.points = sum(len(s.points) for s in reader.series.values())
        row.save()
        if finished:
            self._done.add(job.uid)
