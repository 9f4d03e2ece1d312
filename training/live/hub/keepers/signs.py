"""The watcher's look for signs worth telling before a job ends (odh/training/signs.py): a
job Pending past a subscriber's N minutes, a possible hang, a pod that restarted, a
container's memory over 90% of its limit for minutes, an ETA past the job's deadline.

Every `SIGNS_EVERY` seconds (time alone makes a job Pending too long, or silent) the thread
takes the hub's latest summary of each job that someone asked about (their subscriptions:
one query), and reads only what the signs asked for need, with the dashboard's own
service account: the log tail of the pod that tells progress (a hang, the ETA), the GPUs'
use and the containers' memory from Prometheus. Each sign found is claimed in the
database as a `JobSignal`, unique per (job uid, signal, occurrence): only the watcher whose
insert went in queues its notifications, in the same transaction (training/notifications/),
so two watchers or a restart never tell it twice; the occurrences this process claimed or
found claimed are remembered, so a sign that lasts costs no write at each pass. The
notification sender then delivers them like a transition's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from odh.training import signs
from odh.training.signs import Sign
from odh.training.status.summary import JobStatus, JobSummary
from training.live.hub.background import Background

log = logging.getLogger("training.live.hub")

SIGNS_EVERY = 30.0
LOG_TAIL_LINES = 200
_LOOKED_AT = (JobStatus.PENDING, JobStatus.RUNNING)


@dataclass
class Interest:
    """What the subscriptions concerning one job ask for."""

    signals: set[str] = field(default_factory=set)
    pending_minutes: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class Asked:
    """The active subscriptions that ask for signs, as the scopes they cover."""

    mine: dict[str, Interest]  # username -> their jobs
    projects: dict[str, Interest]  # namespace -> its jobs
    jobs: dict[tuple[str, str, str], Interest]  # (namespace, kind, name)

    def of(self, summary: JobSummary) -> Interest:
        found = Interest()
        for part in (self.mine.get(summary.created_by), self.projects.get(summary.namespace),
                     self.jobs.get((summary.namespace, summary.kind.kind, summary.name))):
            if part is not None:
                found.signals |= part.signals
                found.pending_minutes |= part.pending_minutes
        return found


def asked_with_orm() -> Asked:
    from training.models import NotificationSubscription

    asked = Asked({}, {}, {})
    for sub in NotificationSubscription.objects.filter(active=True).exclude(
            username="").only("username", "scope", "project", "kind", "job", "signals",
                              "pending_minutes"):
        wanted = {s for s in signs.SIGNALS if sub.wants(s)}
        if not wanted:
            continue
        Scope = NotificationSubscription.Scope
        where = (asked.mine, sub.username) if sub.scope == Scope.MINE else \
            (asked.projects, sub.project) if sub.scope == Scope.PROJECT else \
            (asked.jobs, (sub.project, sub.kind, sub.job))
        interest = where[0].setdefault(where[1], Interest())  # type: ignore[index]
        interest.signals |= wanted
        if signs.PENDING in wanted and sub.pending_minutes:
            interest.pending_minutes.add(sub.pending_minutes)
    return asked


def claim_with_orm(summary: JobSummary, sign: Sign) -> bool:
    """Record the sign's occurrence and queue its notifications, unless another watcher
    did: whether this call did."""
    from django.db import IntegrityError, transaction

    from training.models import JobSignal
    from training.notifications import queue_for_signal

    try:
        with transaction.atomic():
            row = JobSignal.objects.create(
                uid=summary.uid, namespace=summary.namespace, kind=summary.kind.kind,
                name=summary.name, created_by=summary.created_by, status=str(summary.status),
                signal=sign.signal, key=sign.key[:300], at=sign.at,
                headline=sign.headline[:500], advice=sign.advice[:1000])
            queue_for_signal(row)
    except IntegrityError:
        return False  # claimed by another watcher, or before a restart
    return True


def _utcnow() -> datetime:
    return datetime.now(UTC)


class SignWatcher(Background):
    """`jobs()`: (summary, job data) of every job the hub knows, and `client_factory()`, a
    cluster client with the dashboard's own identity (both the hub's, unless given);
    `prometheus()`: a PrometheusClient with it, or None without Prometheus; `claimed()`:
    told after each sign claimed (the notification sender's wake)."""

    name = "hub-signs"

    def __init__(self, client_factory: Callable[[], Any] | None = None, *,
                 jobs: Callable[[], Iterable[tuple[JobSummary, Any]]] | None = None,
                 prometheus: Callable[[], Any] | None = None,
                 asked: Callable[[], Asked] = asked_with_orm,
                 claim: Callable[[JobSummary, Sign], bool] = claim_with_orm,
                 every: float = SIGNS_EVERY, clock: Callable[[], datetime] = _utcnow,
                 hang_after: Callable[[], float] | None = None,
                 memory_window: Callable[[], float] | None = None,
                 claimed: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.jobs = jobs
        self.client_factory = client_factory
        self.prometheus = prometheus
        self.asked = asked
        self.claim = claim
        self.every = every
        self.clock = clock
        self.hang_after = hang_after
        # how long a container's memory must stay over 90% of its limit (tests: seconds)
        self.memory_window = memory_window or (lambda: signs.MEMORY_WINDOW_SECONDS)
        self.claimed = claimed
        self.passes = 0
        self.told = 0  # signs this process claimed
        self.errors = 0
        self.last_error = ""
        self._seen: dict[str, set[tuple[str, str]]] = {}  # uid -> (signal, key) claimed

    def stats(self) -> dict[str, Any]:
        return {"passes": self.passes, "told": self.told, "errors": self.errors,
                "last_error": self.last_error}

    def run(self) -> None:
        from django.db import close_old_connections, connection

        try:
            while not self.wait(self.every):
                close_old_connections()
                try:
                    self.look()
                except Exception as e:  # the database away: the next pass tries again
                    self.errors += 1
                    self.last_error = f"{type(e).__name__}: {e}"
                    log.warning("job signs: %s", self.last_error)
                finally:
                    close_old_connections()
        finally:
            connection.close()

    def look(self) -> int:
        """One pass: the signs found and claimed by this process."""
        from django.conf import settings
        from django.utils import translation

        self.passes += 1
        if self.jobs is None:
            return 0
        asked = self.asked()
        now = self.clock()
        told = 0
        alive: set[str] = set()
        with translation.override(settings.LANGUAGE_CODE):  # the words stored and sent
            for summary, data in self.jobs():
                if not summary.uid or summary.status not in _LOOKED_AT:
                    continue
                alive.add(summary.uid)
                interest = asked.of(summary)
                if not interest.signals:
                    continue
                try:
                    found = self.signs_of(summary, data, interest, now)
                except Exception as e:  # one job's reads must not stop the others'
                    log.info("job signs: %s/%s not looked at: %s: %s", summary.namespace,
                             summary.name, type(e).__name__, e)
                    continue
                told += self._tell(summary, found)
        for uid in set(self._seen) - alive:
            del self._seen[uid]  # memory stays bounded
        self.told += told
        return told

    def _tell(self, summary: JobSummary, found: list[Sign]) -> int:
        seen = self._seen.setdefault(summary.uid, set())
        told = 0
        for sign in found:
            if (sign.signal, sign.key) in seen or self.stopping:
                continue
            if self.claim(summary, sign):
                told += 1
                log.info("job sign: %s %s/%s %s (%s)", summary.kind.kind, summary.namespace,
                         summary.name, sign.signal, sign.key)
                if self.claimed is not None:
                    self.claimed()
            seen.add((sign.signal, sign.key))
        return told

    def signs_of(self, summary: JobSummary, data: Any, interest: Interest,
                 now: datetime) -> list[Sign]:
        from odh.training.diagnosis import Facts, diagnose

        wanted = interest.signals
        found: list[Sign] = []
        if signs.PENDING in wanted and summary.status == JobStatus.PENDING:
            diagnosis = diagnose(Facts(data.job, data.pods, data.events, now=now,
                                       summary=summary))
            found += [s for s in (signs.pending_sign(summary, diagnosis, now, minutes)
                                  for minutes in sorted(interest.pending_minutes)) if s]
        if signs.RESTART in wanted:
            found += signs.restart_signs(summary, data.job, data.pods, now)
        if summary.status != JobStatus.RUNNING or not wanted & {signs.HANG, signs.MEMORY,
                                                                 signs.DEADLINE}:
            return found
        facts = self._read(summary, data, now, wanted)
        if signs.HANG in wanted:
            found += [s for s in (signs.hang_sign(facts),) if s]
        if signs.DEADLINE in wanted:
            found += [s for s in (signs.deadline_sign(summary, data.job,
                                                       self._progress(summary, data, facts),
                                                       now),) if s]
        if signs.MEMORY in wanted:
            window = self.memory_window()
            found += signs.memory_signs(summary, data.pods, self._memory(summary, now, window),
                                        now, window)
        return found

    # -- the reads, with the dashboard's own identity ----------------------------------------
    def _read(self, summary: JobSummary, data: Any, now: datetime, wanted: set[str]):
        """The facts a hang and the ETA rest on: the progress pod's log tail, and the GPUs'
        use when a hang is asked about (what the diagnosis' own gathering reads)."""
        from odh.training.diagnosis.gather import Sources, gather

        prometheus = self.prometheus() if self.prometheus is not None and \
            signs.HANG in wanted else None
        hang_after = self.hang_after() if self.hang_after is not None else None
        try:
            with self.client_factory() as client:
                return gather(client, data.job, data.pods, data.events, now=now,
                              summary=summary, sources=Sources(
                                  prometheus=prometheus, read_nodes=False,
                                  hang_after_seconds=hang_after))
        finally:
            if prometheus is not None:
                prometheus.close()

    def _progress(self, summary: JobSummary, data: Any, facts):
        from odh.training.logs.progress import hints_from_job, parse_progress, progress_source

        if summary.reported_progress is not None:
            return summary.reported_progress
        source = progress_source(summary.replicas)
        tail = facts.log_of(getattr(source, "name", "")) if source is not None else None
        if tail is None or tail.previous:
            return None
        total, step = hints_from_job(summary.kind, data.job)
        return parse_progress(tail.lines, total_hint=total, step_hint=step)

    def _memory(self, summary: JobSummary, now: datetime,
                window: float) -> dict[tuple[str, str], float]:
        """(pod, container) -> the least working set over the window, from Prometheus."""
        from odh.training.metrics.promql import REAL_CONTAINERS, WORKING_SET, selector
        from odh.training.metrics.series import parse_vector

        prometheus = self.prometheus() if self.prometheus is not None else None
        if prometheus is None:
            return {}
        series = selector(WORKING_SET, summary.namespace, summary.kind, summary.name,
                          REAL_CONTAINERS)
        promql = f"min_over_time({series}[{max(1, int(window))}s])"
        try:
            result = prometheus.query(promql, summary.namespace, at=now.timestamp())
        finally:
            prometheus.close()
        return {(str(labels.get("pod", "")), str(labels.get("container", ""))): value
                for labels, value in parse_vector(result or [])}


def prometheus_with_service_account():
    """A PrometheusClient with the dashboard's own token, or None without Prometheus."""
    from django.conf import settings

    from training.cluster import cluster_config, prometheus_tls
    from training.diagnoses import PROMETHEUS_TIMEOUT

    if not settings.PROMETHEUS_URL:
        return None
    from odh.training.metrics.prometheus import PrometheusClient

    ca_file, verify = prometheus_tls()
    return PrometheusClient(settings.PROMETHEUS_URL, cluster_config().service_account_token,
                            ca_file, timeout=PROMETHEUS_TIMEOUT, verify=verify)
