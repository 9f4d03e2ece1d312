"""The PromQL of a training job's charts, and the time ranges they cover.

The queries are written for OpenShift's tenancy model (the Thanos querier's port 9092:
every query carries a `namespace=<project>` parameter and prom-label-proxy pins every
selector to it) and name the namespace in their selectors too, so they mean the same
against a plain Prometheus. A job's series are found by the names its operator gives its
pods: `<job>-launcher-x7k2p` and `<job>-worker-3` for an MPIJob, `<job>-master-0`,
`<job>-worker-1`, ... for the v1 kinds (PyTorchJob, TFJob).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from odh.training.kinds import JobKind

ENGINE_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
FB_USED = "DCGM_FI_DEV_FB_USED"
FB_FREE = "DCGM_FI_DEV_FB_FREE"
CPU_SECONDS = "container_cpu_usage_seconds_total"
WORKING_SET = "container_memory_working_set_bytes"
NET_RECEIVE = "container_network_receive_bytes_total"
NET_TRANSMIT = "container_network_transmit_bytes_total"
FS_READS = "container_fs_reads_bytes_total"
FS_WRITES = "container_fs_writes_bytes_total"

# cAdvisor also reports the pod's cgroup (container="") and the pause container ("POD")
REAL_CONTAINERS = (("container", "!=", ""), ("container", "!=", "POD"))

# Steps a range may use, smallest first: round numbers people read on an axis.
NICE_STEPS = (1, 2, 3, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600)
MAX_POINTS = 400
# The shortest rate() window: several scrapes even at OpenShift's 30 s kubelet interval.
MIN_RATE_WINDOW = 120


# -- time ranges ------------------------------------------------------------------------------
def step_for(seconds: float, max_points: int = MAX_POINTS) -> int:
    """The smallest round step that keeps a range under `max_points` points."""
    for step in NICE_STEPS:
        if seconds / step <= max_points:
            return step
    return math.ceil(seconds / max_points)


@dataclass(frozen=True)
class TimeRange:
    key: str
    seconds: int

    @property
    def step(self) -> int:
        return step_for(self.seconds)

    @property
    def points(self) -> int:
        """How many points one series has over the whole range."""
        return self.seconds // self.step + 1

    @property
    def rate_window(self) -> str:
        """The window of rate(): at least two steps, so no sample falls between windows."""
        return promql_duration(max(MIN_RATE_WINDOW, 2 * self.step))


RANGES: dict[str, TimeRange] = {r.key: r for r in (
    TimeRange("15m", 15 * 60), TimeRange("1h", 3600), TimeRange("6h", 6 * 3600),
    TimeRange("24h", 24 * 3600))}
DEFAULT_RANGE = "1h"
# The whole run of a job: its key carries its length ("job:5400"), so that the points a
# page asks for later fall on the same instants (the same step) as the ones it drew.
JOB_RANGE = "job"
MIN_JOB_SECONDS = 5 * 60
MAX_JOB_SECONDS = 14 * 24 * 3600


def time_range(key: str | None) -> TimeRange:
    """The range named `key` ("15m", "1h", "6h", "24h", or a whole run "job:<seconds>");
    the default for anything else."""
    key = key or ""
    if key.startswith(JOB_RANGE + ":"):
        seconds = key.removeprefix(JOB_RANGE + ":")
        if seconds.isdecimal() and MIN_JOB_SECONDS <= int(seconds) <= MAX_JOB_SECONDS:
            return TimeRange(key, int(seconds))
    return RANGES.get(key, RANGES[DEFAULT_RANGE])


def job_time_range(started: float | None, finished: float | None, now: float
                   ) -> tuple[TimeRange, float]:
    """The range that shows a job's whole run, and the moment it ends: from its start to
    its finish (a finished job), or to now (a running one), at least five minutes (a job
    that just started), at most two weeks (the points stay few)."""
    end = finished if finished is not None else now
    length = end - started if started is not None else 0
    seconds = min(MAX_JOB_SECONDS, max(MIN_JOB_SECONDS, math.ceil(length / 60) * 60))
    rng = TimeRange(f"{JOB_RANGE}:{seconds}", seconds)
    # the last point at or after the end, so a finished job's last minute is in
    return rng, end + rng.step


def promql_duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds % 3600 == 0:
        return f"{seconds // 3600}h"
    if seconds % 60 == 0:
        return f"{seconds // 60}m"
    return f"{seconds}s"


@dataclass(frozen=True)
class Window:
    """The instants a range query evaluates: start..end every step, aligned to the step so
    that successive queries (live appends) land on the same instants."""

    start: float
    end: float
    step: int

    @property
    def empty(self) -> bool:
        return self.start > self.end


def window(rng: TimeRange, now: float, since: float | None = None) -> Window:
    """The window of `rng` ending now; with `since`, only the instants after it."""
    step = rng.step
    end = math.floor(now / step) * step
    start = end - rng.seconds
    if since is not None:
        start = max(start, math.floor(since / step) * step + step)
    return Window(float(start), float(end), step)


def iso(t: float) -> str:
    """A sample time as the series carry it: RFC 3339 UTC, milliseconds only when present."""
    d = datetime.fromtimestamp(t, UTC)
    if d.microsecond:
        return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(value: str) -> float | None:
    """Seconds since the epoch from an RFC 3339 time (or a number); None if unreadable."""
    value = (value or "").strip()
    if not value:
        return None
    try:
        number = float(value)
        return number if math.isfinite(number) else None
    except ValueError:
        pass
    try:
        d = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return (d if d.tzinfo else d.replace(tzinfo=UTC)).timestamp()


# -- selectors -----------------------------------------------------------------------------------
def regex_escape(text: str) -> str:
    """`text` matched literally by RE2 (only its metacharacters escaped: `-` stays as is)."""
    return re.sub(r"([.+*?()|\[\]{}^$\\])", r"\\\1", text)


def pod_regex(kind: JobKind, job: str) -> str:
    """A regular expression (RE2, matched whole) for the names of the job's pods."""
    return kind.pod_name_regex(regex_escape(job))


def quote(value: str) -> str:
    """A PromQL double-quoted string literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def selector(metric: str, namespace: str, kind: JobKind, job: str,
             extra: Iterable[tuple[str, str, str]] = ()) -> str:
    matchers = [("namespace", "=", namespace), ("pod", "=~", pod_regex(kind, job)), *extra]
    return metric + "{" + ",".join(f"{k}{op}{quote(v)}" for k, op, v in matchers) + "}"


@dataclass(frozen=True)
class JobQueries:
    """The PromQL of one job's charts."""

    namespace: str
    kind: JobKind
    job: str
    rng: TimeRange = field(default_factory=lambda: RANGES[DEFAULT_RANGE])

    def _sel(self, metric: str, extra: Iterable[tuple[str, str, str]] = ()) -> str:
        return selector(metric, self.namespace, self.kind, self.job, extra)

    def gpu_util(self, metric: str = ENGINE_ACTIVE) -> str:
        """One series per GPU of each pod (labels pod and gpu)."""
        return self._sel(metric)

    def gpu_memory_used(self) -> str:
        """Framebuffer in use per pod, MiB (all its GPUs together)."""
        return f"sum by (pod) ({self._sel(FB_USED)})"

    def gpu_memory_total(self) -> str:
        """Framebuffer size per pod, MiB (used + free of all its GPUs)."""
        return f"sum by (pod) ({self._sel(FB_USED)} + {self._sel(FB_FREE)})"

    def cpu(self) -> str:
        """CPU cores in use per pod."""
        return (f"sum by (pod) (rate({self._sel(CPU_SECONDS, REAL_CONTAINERS)}"
                f"[{self.rng.rate_window}]))")

    def memory(self) -> str:
        """Working-set bytes per pod (what the OOM killer looks at)."""
        return f"sum by (pod) ({self._sel(WORKING_SET, REAL_CONTAINERS)})"

    def network(self, metric: str) -> str:
        """Bytes per second each pod receives (NET_RECEIVE) or sends (NET_TRANSMIT), all
        its interfaces together. No container matcher: a pod's containers share its
        network namespace, which cAdvisor reports once, on the pod's own cgroup
        (`container=""`; the pause container "POD" with older runtimes), as the
        kubernetes-mixin dashboards read it."""
        return f"sum by (pod) (rate({self._sel(metric)}[{self.rng.rate_window}]))"

    def disk(self, metric: str) -> str:
        """Bytes per second each pod's containers read (FS_READS) or write (FS_WRITES),
        every device together."""
        return (f"sum by (pod) (rate({self._sel(metric, REAL_CONTAINERS)}"
                f"[{self.rng.rate_window}]))")

    def gpu_util_average(self, metric: str = ENGINE_ACTIVE, over: str = "5m") -> str:
        """Each GPU's average utilisation over the last `over` (instant query)."""
        return f"avg_over_time({self._sel(metric)}[{over}])"

