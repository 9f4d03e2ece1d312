"""The watch hub's recorder of what finished jobs used: when the transition recorder has
written a job's history record (training/live/hub/keepers/transitions.py), this thread asks
Prometheus, with the dashboard's service account, for the highest peak memory of its
Workers and its GPUs' mean use over the run (odh/training/metrics/usage.py, the Metrics
tab's series) and writes them on the record, where the wizard's advice from history reads
them. Off the recorder's thread: a slow Prometheus delays no transition.

Written once, by the watcher that wrote the record. Prometheus that does not answer is
asked again (`ATTEMPTS`, `RETRY_SECONDS` apart); without a Prometheus (no
PROMETHEUS_URL) nothing is asked and the record keeps no use, which the advice takes as
unknown.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from odh.training import errors
from odh.training.metrics.usage import Usage, read_usage
from training.live.hub.background import Background
from training.live.hub.keepers.transitions import Sighting

log = logging.getLogger("training.live.hub")

QUEUE_MAX = 1000
ATTEMPTS = 3
RETRY_SECONDS = 5.0


def write_with_orm(uid: str, usage: Usage) -> None:
    from training.models import JobHistory
    from training.unlocked import unlocked

    unlocked(lambda: JobHistory.objects.filter(uid=uid).update(
        peak_memory_bytes=usage.peak_memory_bytes, gpu_utilization=usage.gpu_utilization))


def _prometheus():
    from training.live.hub.keepers.signs import prometheus_with_service_account

    return prometheus_with_service_account()


class UsageRecorder(Background):
    name = "hub-usage"

    def __init__(self, prometheus: Callable[[], Any] = _prometheus,
                 write: Callable[[str, Usage], None] = write_with_orm,
                 retry_seconds: float = RETRY_SECONDS) -> None:
        super().__init__()
        self.prometheus = prometheus
        self.write = write
        self.retry_seconds = retry_seconds
        self.recorded = 0
        self.errors = 0
        self._queue: deque[tuple[Sighting, int]] = deque(maxlen=QUEUE_MAX)

    def stats(self) -> dict[str, int]:
        with self._cond:
            return {"recorded": self.recorded, "queued": len(self._queue),
                    "errors": self.errors}

    def finished(self, sighting: Sighting) -> None:
        """A job whose history record was just written (the transition recorder's thread)."""
        if sighting.summary is None:
            return
        with self._cond:
            self._queue.append((sighting, 1))
            self._cond.notify()

    def idle(self) -> bool:
        with self._cond:
            return not self._queue

    def run(self) -> None:
        from django.db import close_old_connections, connection

        try:
            while not self.stopping:
                with self._cond:
                    if not self._queue:
                        self._cond.wait(1.0)
                        continue
                    sighting, attempt = self._queue.popleft()
                close_old_connections()
                try:
                    self._record(sighting, attempt)
                finally:
                    close_old_connections()
        finally:
            connection.close()

    def _record(self, sighting: Sighting, attempt: int) -> None:
        summary = sighting.summary
        started = summary.started or summary.created if summary is not None else None
        finished = summary.finished if summary is not None else None
        if summary is None or started is None or finished is None:
            return
        prometheus = self.prometheus()
        if prometheus is None:
            return
        try:
            usage = read_usage(prometheus, sighting.namespace, summary.kind, sighting.name,
                               started.timestamp(), finished.timestamp())
            if usage.known:
                self.write(sighting.uid, usage)
                self.recorded += 1
        except errors.ClusterError as e:
            self.errors += 1
            log.info("job usage: cannot read %s/%s from Prometheus (%s)%s", sighting.namespace,
                     sighting.name, e.message,
                     "; trying again" if attempt < ATTEMPTS else "")
            if attempt < ATTEMPTS and not self.wait(self.retry_seconds):
                with self._cond:
                    self._queue.append((sighting, attempt + 1))
        except Exception as e:  # the database away: the record keeps no use
            self.errors += 1
            log.warning("job usage: cannot record %s/%s (%s: %s)", sighting.namespace,
                        sighting.name, type(e).__name__, e)
        finally:
            prometheus.close()
