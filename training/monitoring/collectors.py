"""What /metrics says about the watch hub and the job history, read at scrape time, and
the registry it all goes in (training/monitoring/exposition.py lists every name and its source)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, disable_created_metrics, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.utils import floatToGoString

from odh.training.diagnosis import Facts, diagnose
from odh.training.overviews import jobmetrics
from odh.training.status.queries import job_events

if TYPE_CHECKING:
    from training.live.hub.hub import Hub

log = logging.getLogger("training.monitoring.exposition")

PREFIX = "mpijob_dashboard_"
# The Prometheus text format, version 0.0.4 (what every Prometheus scrapes)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

REGISTRY = CollectorRegistry()
disable_created_metrics()  # no `_created` series next to every counter and histogram


def exposition() -> bytes:
    """Every metric, in the Prometheus text format."""
    return generate_latest(REGISTRY)


# -- the watch hub's numbers ----------------------------------------------------------------------
_hub_override: Hub | None = None


def use_hub(hub: Hub | None) -> None:
    """Report this hub's numbers (runwatcher's); None: the embedded hub, if it runs."""
    global _hub_override
    _hub_override = hub


_elector: Any = None  # runwatcher's LeaseElector, when replicas elect the active one


def use_elector(elector: Any) -> None:
    global _elector
    _elector = elector


def current_elector() -> Any:
    return _elector


def current_hub() -> Hub | None:
    if _hub_override is not None:
        return _hub_override
    from training.live.hub import get_hub
    return get_hub()


def _gauge(name: str, doc: str, labels: list[str],
           values: Iterable[tuple[Iterable[str], float]]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(PREFIX + name, doc, labels=labels)
    for label_values, value in values:
        family.add_metric(list(label_values), value)
    return family


class HubCollector:
    """Jobs, workers, waits and quotas from the hub's index; the watches' counters."""

    def __init__(self, hub: Callable[[], Hub | None] = current_hub) -> None:
        self.hub = hub

    def collect(self) -> Iterable[Metric]:
        elector = current_elector()
        if elector is not None:
            yield _gauge("watcher_leader", "1 in the runwatcher replica that holds the Lease "
                         "(the active one), 0 in those standing by.", [],
                         [((), 1.0 if elector.leading.is_set() else 0.0)])
        hub = self.hub()
        if hub is None or not hub.running:
            return
        ready = hub.ready.is_set()
        yield _gauge("hub_ready", "1 once the watch hub has listed everything and follows "
                     "changes.", [], [((), 1.0 if ready else 0.0)])
        reconnects = CounterMetricFamily(
            PREFIX + "watch_reconnects",
            "Watches the hub had to open again: expired (410 Gone, listed again) or error "
            "(connection lost or an error status).", labels=["resource", "reason"])
        relists = CounterMetricFamily(PREFIX + "watch_relists",
                                      "Lists made again after the first, per watch.",
                                      labels=["resource"])
        for w in list(hub.watches):
            resource = w.resource.plural
            reconnects.add_metric([resource, "expired"], w.expired)
            reconnects.add_metric([resource, "error"], w.errors)
            relists.add_metric([resource], w.relists)
        yield reconnects
        yield relists
        renders = CounterMetricFamily(PREFIX + "hub_renders", "Live pushes the watch hub "
                                      "rendered (one per message and viewer language).")
        renders.add_metric([], hub.renders)
        yield renders
        if hub.transitions is not None:
            yield _gauge("job_history_queued", "Job transitions (with the history records "
                         "of finished jobs) waiting to be recorded (the database is away).",
                         [], [((), float(hub.transitions.stats()["queued"]))])
        if not ready:  # half-listed numbers would look like real ones
            return
        items = list(hub.summaries.items())
        summaries = [s for _key, s in items]
        yield _gauge("jobs", "Training jobs that exist now, by project, type and status.",
                     ["project", "type", "status"],
                     sorted(jobmetrics.job_counts(summaries).items()))
        yield _gauge("workers", "Worker pods of the jobs that exist now: active, pending "
                     "or failed.", ["project", "type", "state"],
                     sorted(jobmetrics.worker_counts(summaries).items()))
        pending, parts = [], {}
        for key, summary in items:
            if str(summary.status) != "Pending":
                continue
            data = hub.index.job_data(key)
            if data is not None:
                pending.append((data.job, summary))
                parts[summary.uid] = (data.pods, job_events(summary.kind, data.job, data.pods,
                                                            data.events))

        def diagnosis_of(job: dict, summary):  # from its pods and events, as elsewhere
            pods, events = parts.get(summary.uid, ([], []))
            return diagnose(Facts(job, pods, events, now=summary.observed_at, summary=summary))
        now = datetime.now(UTC)
        yield _gauge("job_pending_seconds", "Seconds each Pending job has waited since it "
                     "was created or resumed, and why (quota, insufficient_resources, "
                     "queued, configuration, other).", ["project", "type", "name", "reason"],
                     (((p.project, p.type, p.name, p.reason), p.seconds)
                      for p in jobmetrics.pending_jobs(pending, now, diagnosis_of)))
        used, hard, ratio = [], [], []
        for quota in hub.index.all_quotas():
            project = str((quota.get("metadata") or {}).get("namespace") or "")
            for sample in jobmetrics.quota_samples(quota):
                labels = (project, sample.quota, sample.resource)
                used.append((labels, sample.used))
                hard.append((labels, sample.hard))
                if sample.ratio is not None:
                    ratio.append((labels, sample.ratio))
        quota_labels = ["project", "quota", "resource"]
        yield _gauge("quota_used", "Each ResourceQuota's status.used (CPU in cores, memory "
                     "in bytes).", quota_labels, used)
        yield _gauge("quota_hard", "Each ResourceQuota's spec.hard (CPU in cores, memory in "
                     "bytes).", quota_labels, hard)
        yield _gauge("quota_used_ratio", "used / hard per ResourceQuota resource (left out "
                     "where hard is 0).", quota_labels, ratio)


# -- the job history's numbers --------------------------------------------------------------------


class HistoryCollector:
    """Failures and run times of finished jobs, counted in the job history table."""

    def collect(self) -> Iterable[Metric]:
        try:
            failures, durations = self._read()
        except Exception as e:  # no database now: the rest of the scrape still answers
            log.warning("metrics: cannot read the job history: %s", e)
            return
        family = CounterMetricFamily(
            PREFIX + "job_failures", "Jobs that ended Failed, once per job uid (from the job "
            "history), by reason.", labels=["project", "type", "reason"])
        for labels, count in sorted(failures.items()):
            family.add_metric(list(labels), count)
        yield family
        histogram = HistogramMetricFamily(
            PREFIX + "job_duration_seconds", "Run time of finished jobs (from the job "
            "history).", labels=["project", "type", "outcome"])
        for labels, (buckets, count, total) in sorted(durations.items()):
            histogram.add_metric(list(labels), [
                *((floatToGoString(le), n) for le, n in zip(jobmetrics.DURATION_BUCKETS,
                                                            buckets, strict=True)),
                ("+Inf", count)], sum_value=total)
        yield histogram

    @staticmethod
    def _read() -> tuple[dict, dict]:
        from django.db.models import Case, Count, Q, Sum, Value, When

        from training.models import JobHistory

        hint = Case(*(When(message__contains=word, then=Value(word))
                      for word in jobmetrics.MESSAGE_HINTS), default=Value(""))
        failures: dict[tuple[str, str, str], int] = {}
        rows = (JobHistory.objects.filter(outcome=JobHistory.Outcome.FAILED)
                .annotate(hint=hint)
                .values("namespace", "kind", "reason", "cause_reason", "hint")
                .annotate(n=Count("id")).order_by())
        for row in rows:
            reason = jobmetrics.failure_reason(row["reason"], row["hint"], row["cause_reason"])
            key = (row["namespace"], row["kind"], reason)
            failures[key] = failures.get(key, 0) + row["n"]
        buckets = {f"le{i}": Count("id", filter=Q(duration_seconds__lte=le))
                   for i, le in enumerate(jobmetrics.DURATION_BUCKETS)}
        durations: dict[tuple[str, str, str], tuple[list[int], int, float]] = {}
        rows = (JobHistory.objects.filter(duration_seconds__isnull=False)
                .values("namespace", "kind", "outcome")
                .annotate(count=Count("id"), total=Sum("duration_seconds"), **buckets)
                .order_by())
        for row in rows:
            durations[(row["namespace"], row["kind"], row["outcome"])] = (
                [row[f"le{i}"] for i in range(len(jobmetrics.DURATION_BUCKETS))],
                row["count"], float(row["total"] or 0.0))
        return failures, durations
