"""A job's chart series as data to take away: what the SDK's `get_metrics()` returns and
`odh training metrics` prints, read from the same Prometheus queries as the Metrics tab.

The data is a dict by chart, named as the Metrics tab names them (`gpu_util`,
`gpu_memory`, `cpu`, `memory`, `network_receive`, `network_transmit`, `disk_read`,
`disk_write`), of dicts by series ("launcher", "worker-0",
"worker-0 GPU 0"), of points `{"time": "2025-01-01T12:00:00Z", "value": 87.0}`; gaps (no
sample, NaN) are left out. As CSV: one row per point, `series,time,value`, the series
named `<chart>/<series>` ("cpu/worker-0")."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable
from datetime import UTC, datetime

from odh.training import errors
from odh.training.i18n import _
from odh.training.kinds import JobKind
from odh.training.metrics.charts import CHART_KEYS, JobMetrics, job_metrics
from odh.training.metrics.promql import TimeRange, iso, job_time_range, parse_iso

PROMETHEUS_ENV = "ODH_PROMETHEUS_URL"
CSV_HEADER = ("series", "time", "value")
Points = list[dict]
SeriesByChart = dict[str, dict[str, Points]]


def chart_names(names: Iterable[str] | str | None) -> list[str]:
    """The charts asked for, in the Metrics tab's order (every one for None); ValueError
    naming the known ones for any other name."""
    if names is None:
        return list(CHART_KEYS)
    wanted = [names] if isinstance(names, str) else list(names)
    unknown = [n for n in wanted if n not in CHART_KEYS]
    if unknown:
        raise ValueError(_("Unknown metric %(names)s: use %(known)s.")
                         % {"names": ", ".join(map(str, unknown)),
                            "known": ", ".join(CHART_KEYS)})
    return [k for k in CHART_KEYS if k in wanted]


def instant(value: datetime | float | str | None, what: str) -> float | None:
    """Seconds since the epoch from a datetime (naive means UTC), a number or an ISO 8601
    text; ValueError saying how to write it."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    t = parse_iso(str(value)) if not isinstance(value, int | float) else float(value)
    if t is None:
        raise ValueError(_("%(what)s must be a time such as 2025-01-31T12:00:00Z.")
                         % {"what": what})
    return t


def as_series(metrics: JobMetrics, names: list[str]) -> SeriesByChart:
    out: SeriesByChart = {}
    for key in names:
        chart = metrics.charts.get(key)
        out[key] = {s.name: [{"time": iso(t), "value": v} for t, v in zip(s.t, s.y, strict=True)
                             if v is not None]
                    for s in (chart.series if chart else [])}
    return out


def _number(value: float) -> str:
    """Every digit kept (never 1.29555e+08 for a memory size): 129554601, 24.8964."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def csv_text(data: SeriesByChart) -> str:
    """The series as CSV: a header row, then `<chart>/<series>,<ISO 8601 time>,<value>`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for chart, by_name in data.items():
        for name, points in by_name.items():
            for point in points:
                writer.writerow((f"{chart}/{name}", point["time"], _number(point["value"])))
    return buffer.getvalue()


def prometheus_url(url: str | None) -> str:
    """The Prometheus to ask: `url`, else $ODH_PROMETHEUS_URL; ClusterUnavailable saying
    how to name one when neither does."""
    url = (url or os.environ.get(PROMETHEUS_ENV, "")).strip()
    if not url:
        raise errors.ClusterUnavailable(_(
            "No Prometheus to read metrics from: set ODH_PROMETHEUS_URL to the cluster's "
            "Prometheus query API (on OpenShift, the Thanos querier), or pass its URL."))
    return url


def read_series(client, kind: JobKind, namespace: str, name: str, *,
                names: Iterable[str] | str | None = None,
                start: datetime | float | str | None = None,
                end: datetime | float | str | None = None,
                prometheus: str | None = None) -> SeriesByChart:
    """The job's series, read as the person `client` (a TrainingClient) signs in: between
    `start` and `end`, by default the job's whole run (from its start to its finish, or to
    now while it runs), as the Metrics tab shows it."""
    charts = chart_names(names)
    begin, until = instant(start, "start"), instant(end, "end")
    url = prometheus_url(prometheus)
    now = datetime.now(UTC).timestamp()
    # read first: a job that is not there (or not yours to see) says so, as
    # `describe` would, before Prometheus is asked anything about it
    summary = client.summary(name, namespace, kind)
    if begin is None or until is None:
        started = summary.started or summary.created
        whole, whole_end = job_time_range(started.timestamp() if started else None,
                                          summary.finished.timestamp()
                                          if summary.finished else None, now)
        until = min(whole_end, now) if until is None else until
        begin = until - whole.seconds if begin is None else begin
    until = min(until, now)
    if begin >= until:
        raise ValueError(_("start must come before end."))
    rng = TimeRange("export", max(60, int(until - begin)))
    with client.prometheus(url) as prom:
        metrics = job_metrics(prom, namespace, kind, name, rng, now=until)
    return as_series(metrics, charts)
