"""What a finished job's Workers used, from Prometheus: the highest memory any Worker
reached (its container's working set, what the OOM killer looks at, against that
container's limit) and how busy its GPUs were on average over the run. The watcher
records it with each job's history when the job finishes (with the dashboard's service
account); the SDK's `job.recommend()` reads it for jobs still in the cluster (with the
person's credentials). The same queries as the Metrics tab's series (`promql`).

"Worker" here is every pod of the job but its Launcher: an MPIJob's `<job>-worker-N`,
the pods of the v1 kinds (whose Master trains like a Worker).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from odh.training.kinds import JobKind
from odh.training.metrics.promql import (
    GPU_UTIL,
    REAL_CONTAINERS,
    WORKING_SET,
    promql_duration,
    selector,
)
from odh.training.metrics.series import parse_vector, short_name

# The window reaches back over the whole run, and a little before its start (the first
# scrape may come before the job's status says it started); at most two weeks.
SLACK_SECONDS = 60
MAX_WINDOW_SECONDS = 14 * 24 * 3600


@dataclass(frozen=True)
class Usage:
    """A finished run's use: bytes (the highest Worker's peak working set) and percent
    (its GPUs' mean utilisation); None where Prometheus had no series."""

    peak_memory_bytes: float | None = None
    gpu_utilization: float | None = None

    @property
    def known(self) -> bool:
        return self.peak_memory_bytes is not None or self.gpu_utilization is not None


def usage_queries(namespace: str, kind: JobKind, job: str, seconds: float) -> tuple[str, str]:
    """(peak working set per container, mean GPU use per GPU) over the last `seconds`."""
    window = promql_duration(min(MAX_WINDOW_SECONDS, max(60, math.ceil(seconds) + SLACK_SECONDS)))
    memory = f"max_over_time({selector(WORKING_SET, namespace, kind, job, REAL_CONTAINERS)}" \
             f"[{window}])"
    gpus = f"avg_over_time({selector(GPU_UTIL, namespace, kind, job)}[{window}])"
    return memory, gpus


def _workers(vector: list, job: str) -> list[float]:
    return [value for labels, value in parse_vector(vector or [])
            if value is not None and math.isfinite(value)
            and short_name(str(labels.get("pod", "")), job) != "launcher"]


def read_usage(prometheus, namespace: str, kind: JobKind, job: str, started: float,
               finished: float) -> Usage:
    """The run's `Usage`, asked at its finish (`started`, `finished`: seconds since the
    epoch). Prometheus' refusals and silences are odh.training.errors, as its client raises
    them."""
    memory_q, gpu_q = usage_queries(namespace, kind, job, max(0.0, finished - started))
    peaks = _workers(prometheus.query(memory_q, namespace, at=finished), job)
    gpus = _workers(prometheus.query(gpu_q, namespace, at=finished), job)
    return Usage(peak_memory_bytes=max(peaks) if peaks else None,
                 gpu_utilization=round(sum(gpus) / len(gpus), 1) if gpus else None)
