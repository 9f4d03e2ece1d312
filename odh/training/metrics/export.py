"""A job's chart series as data to take away: what the SDK's `get_metrics()` returns and
`odh training metrics` prints, read from the same Prometheus queries as the Metrics tab,
and the training curves of its Training group.

The data is a dict by chart, named as the Metrics tab names them (`gpu_util`,
`gpu_memory`, `cpu`, `memory`, `network_receive`, `network_transmit`, `disk_read`,
`disk_write`, `training`), of dicts by series ("launcher", "worker-0",
"worker-0 GPU 0"; for `training` the metric as its log names it, "loss", "accuracy",
"img/sec", and "loss@epoch" for the end-of-epoch summaries), of points `{"time":
"2025-01-01T12:00:00Z", "value": 87.0}` (a training point adds its `step` and `epoch`, and
its time may be None); gaps (no sample, NaN) are left out. As CSV: one row per point,
`series,time,value,step,epoch`, the series named `<chart>/<series>` ("cpu/worker-0",
"training/loss"), step and epoch empty for Prometheus' series.

Training curves come from the job's lead log (the Launcher's, rank 0's), read here with
the person's own credentials and parsed as the dashboard's watcher parses it
(odh/training/logs/curves.py): the same numbers while the log is there. A job that is
deleted takes its log with it: its curves are then only in the dashboard (the Metrics
tab's downloads), which kept them. `training` alone needs no Prometheus; where one is
named (or $ODH_PROMETHEUS_URL), the curves the job pushed to it (a Pushgateway:
odh.training.metrics.pushed) take the place of the log's of the same name, as on the
tab."""

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
from odh.training.metrics.training import TRAINING, export_series

PROMETHEUS_ENV = "ODH_PROMETHEUS_URL"
CSV_HEADER = ("series", "time", "value", "step", "epoch")
EXPORT_KEYS = (*CHART_KEYS, TRAINING)
LOG_LIMIT_BYTES = 32 * 1024 * 1024  # the lead log read for its curves, at most
Points = list[dict]
SeriesByChart = dict[str, dict[str, Points]]


def chart_names(names: Iterable[str] | str | None) -> list[str]:
    """The charts asked for, in the Metrics tab's order (every one for None); ValueError
    naming the known ones for any other name."""
    if names is None:
        return list(EXPORT_KEYS)
    wanted = [names] if isinstance(names, str) else list(names)
    unknown = [n for n in wanted if n not in EXPORT_KEYS]
    if unknown:
        raise ValueError(_("Unknown metric %(names)s: use %(known)s.")
                         % {"names": ", ".join(map(str, unknown)),
                            "known": ", ".join(EXPORT_KEYS)})
    return [k for k in EXPORT_KEYS if k in wanted]


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


def _cell(value: float | None) -> str:
    return "" if value is None else _number(value)


def csv_text(data: SeriesByChart) -> str:
    """The series as CSV: a header row, then `<chart>/<series>,<ISO 8601 time>,<value>,
    <step>,<epoch>` (the last two for training points only)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for chart, by_name in data.items():
        for name, points in by_name.items():
            for point in points:
                writer.writerow((f"{chart}/{name}", point["time"] or "",
                                 _number(point["value"]), _cell(point.get("step")),
                                 _cell(point.get("epoch"))))
    return buffer.getvalue()


def read_training(client, kind: JobKind, namespace: str, name: str,
                  summary=None, prometheus: str = "") -> dict[str, Points]:
    """The job's training curves from its lead log, read as the person `client` (a
    TrainingClient) signs in, with those it pushed to the Prometheus at `prometheus` in
    place of the log's of the same name (odh.training.metrics.pushed); {} when there are
    none (yet)."""
    from odh.training.logs.curves import read_curves
    from odh.training.logs.progress import progress_source
    from odh.training.manifests.metric_patterns import job_patterns
    from odh.training.metrics.pushed import pushed_over_run, with_pushed

    summary = summary or client.summary(name, namespace, kind)
    patterns = job_patterns(client.cluster.get_job(kind, namespace, name))
    source = progress_source(summary.replicas)
    reader = None
    if source is not None and getattr(source, "exists", False):
        try:
            text = client.cluster.read_log(namespace, source.name, tail_lines=None,
                                           timestamps=True, limit_bytes=LOG_LIMIT_BYTES)
            reader = read_curves(str(text).splitlines(), patterns)
        except errors.ClusterError as e:
            if e.status != 400:  # 400: its container has not started: no log yet
                raise
    if prometheus:
        with client.prometheus(prometheus) as prom:
            reader = with_pushed(reader, pushed_over_run(
                prom, namespace, name, summary.started or summary.created, summary.finished))
    return export_series(reader)


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
    asks_prometheus = any(c != TRAINING for c in charts)
    # the training curves alone need none, but read those the job pushed where one is named
    url = prometheus_url(prometheus) if asks_prometheus else \
        (prometheus or os.environ.get(PROMETHEUS_ENV, "")).strip()
    now = datetime.now(UTC).timestamp()
    # read first: a job that is not there (or not yours to see) says so, as
    # `describe` would, before Prometheus is asked anything about it
    summary = client.summary(name, namespace, kind)
    out: SeriesByChart = {}
    if asks_prometheus:
        out.update(_prometheus_series(client, kind, namespace, name, summary, charts, begin,
                                      until, now, url))
    if TRAINING in charts:
        out[TRAINING] = in_range(read_training(client, kind, namespace, name, summary, url),
                                 begin, until)
    return out


def in_range(series: dict[str, Points], begin: float | None,
             until: float | None) -> dict[str, Points]:
    """Training points logged between `begin` and `until` (all of them when neither is
    given; a point without a time only then)."""
    if begin is None and until is None:
        return series

    def inside(point: dict) -> bool:
        t = parse_iso(point["time"]) if point.get("time") else None
        return t is not None and (begin is None or t >= begin) and \
            (until is None or t <= until)
    return {name: [p for p in points if inside(p)] for name, points in series.items()}


def _prometheus_series(client, kind: JobKind, namespace: str, name: str, summary,
                       charts: list[str], begin: float | None, until: float | None,
                       now: float, url: str) -> SeriesByChart:
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
    return as_series(metrics, [c for c in charts if c != TRAINING])
