"""A training job's GPU, CPU, memory, network and disk series from the cluster's
Prometheus query API.

On OpenShift that API is the Thanos querier of cluster monitoring. Its *tenancy* port
(9092) is what a person without cluster-wide rights may use: every query carries a
`namespace=<project>` parameter, kube-rbac-proxy checks that the token may `get pods`
there, and prom-label-proxy pins every selector to that namespace. The queries here are
written for that model (and name the namespace in their selectors too, so they mean the
same against a plain Prometheus), and are made with the person's own token.

A job's series are found by the names its operator gives its pods:
`<job>-launcher-x7k2p` and `<job>-worker-3` for an MPIJob, `<job>-master-0`,
`<job>-worker-1`, ... for the v1 kinds (PyTorchJob, TFJob).

Series come back as plain data the dashboard, the SDK and the CLI can all use::

    {"name": "worker-2 GPU 0", "pod": "bert-worker-2", "x": ["2025-01-01T12:00:00Z", ...],
     "y": [87.0, ...]}

The parts: `odh.training.metrics.promql` (time ranges, windows, the queries),
`odh.training.metrics.prometheus` (the HTTP API client), `odh.training.metrics.series`
(answers as series), `odh.training.metrics.units` (values as text); this module puts them
together into a job's charts and its one-line GPU summary, and re-exports their names.

GPU utilisation prefers `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (a 0-1 ratio of time the graphics
engine was busy, the better measure) and falls back to `DCGM_FI_DEV_GPU_UTIL` (percent)
when the exporter does not collect profiling metrics; both come back as percent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from odh.training.i18n import _, ngettext
from odh.training.kinds import JobKind
from odh.training.metrics.prometheus import PrometheusClient
from odh.training.metrics.promql import (
    CPU_SECONDS,
    DEFAULT_RANGE,
    ENGINE_ACTIVE,
    FB_FREE,
    FB_USED,
    FS_READS,
    FS_WRITES,
    GPU_UTIL,
    JOB_RANGE,
    MAX_POINTS,
    MIN_RATE_WINDOW,
    NET_RECEIVE,
    NET_TRANSMIT,
    NICE_STEPS,
    RANGES,
    REAL_CONTAINERS,
    WORKING_SET,
    JobQueries,
    TimeRange,
    Window,
    iso,
    job_time_range,
    parse_iso,
    pod_regex,
    promql_duration,
    quote,
    regex_escape,
    selector,
    step_for,
    time_range,
    window,
)
from odh.training.metrics.series import Series, gpu_scale, parse_matrix, parse_vector, short_name
from odh.training.metrics.units import (
    BYTES,
    CORES,
    GIB,
    MIB,
    PERCENT,
    RATE,
    format_value,
    unit_labels,
)

__all__ = [
    "CHART_KEYS",
    "CPU_SECONDS",
    "DEFAULT_RANGE",
    "ENGINE_ACTIVE",
    "FB_FREE",
    "FB_USED",
    "FS_READS",
    "FS_WRITES",
    "GIB",
    "GPU_UTIL",
    "IO_KEYS",
    "JOB_RANGE",
    "MAX_POINTS",
    "MIB",
    "MIN_RATE_WINDOW",
    "NET_RECEIVE",
    "NET_TRANSMIT",
    "NICE_STEPS",
    "RANGES",
    "REAL_CONTAINERS",
    "UNITS",
    "WORKING_SET",
    "Chart",
    "JobMetrics",
    "JobQueries",
    "PrometheusClient",
    "Series",
    "TimeRange",
    "Window",
    "chart_titles",
    "format_value",
    "gpu_scale",
    "gpu_summary",
    "gpu_util_series",
    "iso",
    "job_metrics",
    "job_time_range",
    "parse_iso",
    "parse_matrix",
    "parse_vector",
    "pod_regex",
    "promql_duration",
    "quote",
    "regex_escape",
    "selector",
    "short_name",
    "step_for",
    "summary_text",
    "time_range",
    "unit_labels",
    "window",
]


# -- a job's charts --------------------------------------------------------------------------------
# network and disk I/O: each the rate of one cAdvisor counter, per pod
IO_METRICS = {"network_receive": NET_RECEIVE, "network_transmit": NET_TRANSMIT,
              "disk_read": FS_READS, "disk_write": FS_WRITES}
IO_KEYS = tuple(IO_METRICS)
CHART_KEYS = ("gpu_util", "gpu_memory", "cpu", "memory", *IO_KEYS)
UNITS = {"gpu_util": PERCENT, "gpu_memory": BYTES, "cpu": CORES, "memory": BYTES,
         **dict.fromkeys(IO_KEYS, RATE)}


def chart_titles() -> dict[str, str]:
    return {"gpu_util": _("GPU utilisation per GPU"), "gpu_memory": _("GPU memory per worker"),
            "cpu": _("CPU per pod"), "memory": _("Memory per pod"),
            "network_receive": _("Network received per pod"),
            "network_transmit": _("Network sent per pod"),
            "disk_read": _("Disk reads per pod"), "disk_write": _("Disk writes per pod")}


@dataclass
class Chart:
    key: str
    title: str
    unit: str
    series: list[Series]
    capacity: dict[str, float] = field(default_factory=dict)  # per pod (GPU memory)

    def as_dict(self) -> dict:
        out: dict[str, Any] = {"key": self.key, "title": self.title, "unit": self.unit,
                               "series": [s.as_dict() for s in self.series]}
        if self.key == "gpu_memory":
            out["capacity"] = {s.name: self.capacity.get(s.pod) for s in self.series}
        return out


@dataclass
class JobMetrics:
    range: TimeRange
    window: Window
    gpu_metric: str  # the DCGM field the GPU chart shows ("" when neither had data)
    charts: dict[str, Chart]

    @property
    def has_data(self) -> bool:
        return any(c.series for c in self.charts.values())

    def shown(self) -> list[str]:
        """The charts to draw, in order: every resource chart (an empty one says why), and
        a network or disk chart only with series. A cluster whose Prometheus has no
        container_network_* or container_fs_* series for the job (cAdvisor not scraped
        for them, or dropped by relabelling) gets no empty chart there but one sentence
        (`io_missing`), and nothing at all while no chart has data (a job yet to run)."""
        return [k for k in CHART_KEYS if k in self.charts
                and (k not in IO_KEYS or self.charts[k].series)]

    @property
    def io_missing(self) -> bool:
        """No network or disk series, though Prometheus has the pods' CPU or memory."""
        return not any(self.charts[k].series for k in IO_KEYS if k in self.charts) and \
            any(self.charts[k].series for k in ("cpu", "memory") if k in self.charts)

    def as_dict(self) -> dict:
        return {"range": self.range.key, "step": self.window.step,
                "seconds": self.range.seconds, "points": self.range.points,
                "start": iso(self.window.start), "end": iso(self.window.end),
                "gpu_metric": self.gpu_metric,
                "charts": {k: self.charts[k].as_dict() for k in CHART_KEYS if k in self.charts}}


def gpu_util_series(client: PrometheusClient, q: JobQueries, w: Window,
                    after: float | None = None) -> tuple[str, list[Series]]:
    """GPU utilisation per GPU in percent: ENGINE_ACTIVE if the exporter has it, else
    GPU_UTIL. Returns the metric used ("" if neither answered) and the series."""
    for metric in (ENGINE_ACTIVE, GPU_UTIL):
        result = client.query_range(q.gpu_util(metric), q.namespace, w.start, w.end, w.step)
        if result:
            return metric, parse_matrix(result, q.job, gpu_scale(metric), gpu=True,
                                        after=after)
    return "", []


def job_metrics(client: PrometheusClient, namespace: str, kind: JobKind, job: str,
                rng: TimeRange, now: float | None = None,
                since: float | None = None) -> JobMetrics:
    """The charts of a job over `rng` (only points after `since`, if given)."""
    now = datetime.now(UTC).timestamp() if now is None else now
    w = window(rng, now, since)
    q = JobQueries(namespace, kind, job, rng)
    titles = chart_titles()
    charts = {k: Chart(k, titles[k], UNITS[k], []) for k in CHART_KEYS}
    if w.empty:
        return JobMetrics(rng, w, "", charts)
    after = since

    def series(promql: str, scale: float = 1.0) -> list[Series]:
        return parse_matrix(client.query_range(promql, namespace, w.start, w.end, w.step),
                            job, scale, after=after)

    gpu_metric, charts["gpu_util"].series = gpu_util_series(client, q, w, after)
    if gpu_metric:
        charts["gpu_memory"].series = series(q.gpu_memory_used(), MIB)
        if charts["gpu_memory"].series:
            for total in series(q.gpu_memory_total(), MIB):
                if total.maximum is not None:
                    charts["gpu_memory"].capacity[total.pod] = total.maximum
    charts["cpu"].series = series(q.cpu())
    charts["memory"].series = series(q.memory())
    for key, metric in IO_METRICS.items():
        charts[key].series = series(q.network(metric) if key.startswith("network")
                                    else q.disk(metric))
    return JobMetrics(rng, w, gpu_metric, charts)


# -- the one-line summary --------------------------------------------------------------------------
def summary_text(percent: float, workers: int) -> str:
    """"GPU 87% avg across 8 workers"."""
    return ngettext("GPU %(percent)d%% avg across %(count)d worker",
                    "GPU %(percent)d%% avg across %(count)d workers", workers) % {
        "percent": round(percent), "count": workers}


def gpu_summary(client: PrometheusClient, namespace: str, kind: JobKind, job: str,
                over: str = "5m", now: float | None = None) -> str:
    """"GPU 87% avg across 8 workers": the job's GPUs over the last `over`; "" without data.

    Raises odh.training.errors when Prometheus cannot be asked.
    """
    q = JobQueries(namespace, kind, job)
    for metric in (ENGINE_ACTIVE, GPU_UTIL):
        samples = parse_vector(client.query(q.gpu_util_average(metric, over), namespace, now),
                               gpu_scale(metric))
        if samples:
            pods = {labels.get("pod", "") for labels, _value in samples}
            average = sum(v for _labels, v in samples) / len(samples)
            return summary_text(average, len(pods))
    return ""
