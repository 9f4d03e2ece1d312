"""How a pod's metrics behave over its life: the value model behind metrics_series.py.

- Training starts when the kubelet's workload says so (the moment the launcher or the
  PyTorch/TF coordinator began its first epoch, workloads.training_started_at), else at the
  launcher's startedAt (MPI workers) or the pod's own. An MPI worker (`job-role=worker`)
  trains from then while its job's launcher runs; other pods while they run. While
  training GPU use is 80-98 %, the engine 0.9x of that, the framebuffer 55-90 % full and
  CPU near the container's request; before and after (workers waiting for the launcher,
  idle pods) GPU use is 0-3 %, the framebuffer empty and CPU near zero.
- Failure times follow workloads/training.py: in a training job they count from the
  start of training, `min(failure-after-seconds, run-seconds) / speed` later; in other
  pods from the container's start, `failure-after-seconds / speed` later (speed: the clock's
  when the pod first ran, 1 for a scenario's warped past).
- `simcluster.io/failure: hang`: in a training job the first collective never completes,
  so GPU use and CPU stay idle from the start of training; in other pods they drop at the
  failure time. The framebuffer stays full: the process holds its memory.
- `simcluster.io/failure: oom` on worker N (`replica-index`; a bare pod itself), or any
  container that ended `OOMKilled`: the working set climbs from the training level to the
  memory limit and reaches it by the failure time, so the last scrape before the kill reads
  the limit (the failure time is the container's `finishedAt` once it was OOMKilled, else
  the predicted time above).
- `simcluster.io/failure: cuda-oom`: the GPU framebuffer of the rank that runs out of memory
  (MPI: worker N; PyTorchJob/TFJob: the master; a bare pod itself) climbs from the training
  level to 98.5-99.5 % of the card by the failure time, in every training run (each run of
  the launcher fails the same way; a finished run's end is its failure time).
- `simcluster.io/gpu-utilization: "<percent>"`: while training, GPU use hovers within a few
  percent of that value (deterministic noise, clamped to 0-100) instead of 80-98 %; the
  engine-active ratio follows it (0.9x).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from simcluster.monitoring.metrics_history import (
    REPLICA_TYPE,
    ContainerRecord,
    PodRecord,
    Run,
    seed_of,
)

SCRAPE_INTERVAL = 15.0  # nominal seconds
MIN_SCRAPE_INTERVAL = 0.2
GIB = 1024 ** 3
MIB = 1024 ** 2


# -- deterministic noise -------------------------------------------------------------------
def _mix(x: int) -> int:
    """splitmix64: a fast integer hash."""
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


def unit(seed: int, k: int = 0) -> float:
    """A deterministic number in [0, 1) for (seed, k)."""
    return _mix(seed ^ _mix(k & 0xFFFFFFFFFFFFFFFF)) / 2.0 ** 64


def tick(t: float) -> int:
    """A sample time as an integer key (milliseconds) for the noise of that sample."""
    return round(t * 1000)


def noise(seed: int, t: float) -> float:
    """Deterministic noise in [-1, 1) for a sample time."""
    return unit(seed, tick(t)) * 2 - 1


def overlaps(runs: list[tuple[float, float | None]], lo: float, hi: float) -> bool:
    """Whether a target that ran `runs` may have a sample in [lo, hi]."""
    return any(s <= hi and (e is None or e + SCRAPE_INTERVAL > lo) for s, e in runs)


def spans(runs: list[Run]) -> list[tuple[float, float | None]]:
    return [(r.start, r.end) for r in runs]


def scrape_interval(speed: float) -> float:
    """Scrapes come every 15 nominal seconds: at speed 50 a 90-second job still draws a
    curve (never more often than every MIN_SCRAPE_INTERVAL real seconds)."""
    return max(MIN_SCRAPE_INTERVAL, SCRAPE_INTERVAL / (speed or 1.0))


class PodModel:
    """A pod's activity over time: when it trains, hangs or heads for an OOM."""

    def __init__(self, pod: PodRecord, launcher_runs: list[Run] | None) -> None:
        self.pod = pod
        if pod.role == "worker":  # an MPI worker trains while its launcher runs
            runs = launcher_runs or []
        else:
            runs = next((c.runs for c in pod.containers.values() if c.runs), [])
        self.windows: list[tuple[float, float]] = [
            (r.start, math.inf if r.end is None else r.end) for r in runs]
        self.t0 = pod.training_start
        if self.t0 is None and self.windows:
            self.t0 = self.windows[0][0]
        b = pod.behaviour
        speed = pod.speed or 1.0
        # in a training job failures count from the start of training (capped at the run's
        # length) and a hang stops the first collective; elsewhere from the container start
        after = min(b.failure_at, b.run_seconds) / speed if pod.job else b.failure_at / speed
        self.hang_at = math.inf
        if b.failure == "hang" and self.t0 is not None:
            self.hang_at = self.t0 if pod.job else self.t0 + after
        kind = pod.labels.get(REPLICA_TYPE, pod.role).lower()
        target = not pod.job or (kind == "worker" and pod.replica_index == b.failure_worker)
        self.oom_at = self.t0 + after \
            if b.failure == "oom" and target and self.t0 is not None else None
        self.after = after
        self.util_level = b.gpu_utilization
        gpu_target = not pod.job or (pod.role == "worker" and pod.replica_index ==
                                     b.failure_worker) or pod.role == "master"
        self.fb_climbs = b.failure == "cuda-oom" and gpu_target and self.t0 is not None

    def training(self, t: float) -> bool:
        return t < self.hang_at and self.started_training(t)

    def started_training(self, t: float) -> bool:
        return self.t0 is not None and t >= self.t0 and any(s <= t < e for s, e in self.windows)

    def cpu_level(self, c: ContainerRecord, t: float) -> float:
        u = unit(self.pod.seed, 11)
        if self.pod.role == "launcher":
            return 0.05 + 0.1 * u
        if self.training(t):
            cores = c.requests.get("cpu") or c.limits.get("cpu") or 1.0
            return cores * (0.65 + 0.25 * u)
        return 0.004 + 0.006 * u

    def counter(self, seed: int, start: float, t: float,
                level: Callable[[float], float]) -> float:
        """A counter from `start` to t: the integral of a positive rate that wobbles (by at
        most a fifth) around `level`, which may change only where training starts, stops
        or hangs."""
        p1, p2 = unit(seed, 1) * 2 * math.pi, unit(seed, 2) * 2 * math.pi
        w1, w2 = 2 * math.pi / 97, 2 * math.pi / 23
        cuts = sorted({start, t} | {x for s, e in self.windows for x in (s, e, self.hang_at)
                                    if start < x < t})
        total = 0.0
        for a, b in itertools.pairwise(cuts):
            total += level((a + b) / 2) * (
                (b - a) + 0.12 / w1 * (math.cos(w1 * a + p1) - math.cos(w1 * b + p1))
                + 0.08 / w2 * (math.cos(w2 * a + p2) - math.cos(w2 * b + p2)))
        return total

    def cpu_seconds(self, c: ContainerRecord, run: Run, t: float) -> float:
        """The integral of a positive, wobbling CPU rate over the run, up to t."""
        seed = self.pod.seed ^ seed_of(c.name)
        return round(self.counter(seed, run.start, t, lambda m: self.cpu_level(c, m)), 6)

    def memory(self, c: ContainerRecord, run: Run, t: float) -> float:
        cap = c.limits.get("memory") or (c.requests.get("memory", 0) * 1.25) or 4 * GIB
        seed = self.pod.seed ^ seed_of(c.name)
        u = unit(seed, 3)
        jitter = noise(seed, t) * 0.005 * cap
        if self.pod.role == "launcher":
            return float(round(min(cap * 0.5, (48 + 96 * u) * MIB) + jitter / 10))
        base = cap * (0.35 + 0.25 * u)
        if run.reason == "OOMKilled":
            oom: float | None = run.end
        elif self.oom_at is not None and run is c.runs[0] and self.oom_at > run.start and \
                c is next(iter(self.pod.containers.values())):
            oom = self.oom_at
        else:
            oom = None
        ramp_from = max(run.start, self.t0 if self.t0 is not None else run.start)
        if oom is not None and t >= ramp_from:
            # the last scrape before the kill already reads the limit
            full = oom - scrape_interval(self.pod.speed)
            if full <= ramp_from:
                full = oom
            if t >= full:
                return float(round(cap))
            frac = (t - ramp_from) / (full - ramp_from)
            return float(round(min(cap, base + (cap - base) * frac ** 2 + jitter * (1 - frac))))
        if self.started_training(t):
            elapsed = (t - max(run.start, self.t0 or run.start)) * (self.pod.speed or 1.0)
            growth = cap * 0.08 * (1 - math.exp(-elapsed / 120))
            return float(round(min(cap * 0.97, base + growth + jitter)))
        return float(round(cap * (0.04 + 0.03 * u) + jitter / 4))

    def gpu_util(self, seed: int, t: float) -> float:
        if self.training(t):
            if self.util_level is not None:
                wobble = 6 * unit(seed, tick(t)) - 3
                return float(round(min(100.0, max(0.0, self.util_level + wobble))))
            return float(round(80 + 18 * unit(seed, tick(t))))
        if self.started_training(t):  # hung: the process holds the GPU but does nothing
            return 0.0
        return float(round(3 * unit(seed, tick(t) ^ 0x5555)))

    def engine_active(self, seed: int, t: float) -> float:
        util = self.gpu_util(seed, t)
        return round(min(1.0, util / 100 * (0.9 + 0.08 * unit(seed ^ 7, tick(t)))), 6)

    def fb_used(self, seed: int, total: float, t: float) -> float:
        if not self.started_training(t):
            return 0.0
        frac = 0.55 + 0.35 * unit(seed, 5)
        if self.fb_climbs:
            frac = self._towards_oom(seed, frac, t)
        return float(round(min(total, total * frac + noise(seed ^ 9, t) * total * 0.004)))

    def _towards_oom(self, seed: int, frac: float, t: float) -> float:
        """The framebuffer share at t of a rank that runs out of GPU memory in every run."""
        assert self.t0 is not None
        first = self.windows[0][0]
        window = next(((s, e) for s, e in self.windows if s <= t < e), None)
        if window is None:
            return frac
        start, end = window
        begin = self.t0 if start == first else start + (self.t0 - first)
        oom = end if end != math.inf else begin + self.after
        full = oom - scrape_interval(self.pod.speed)
        peak = 0.985 + 0.01 * unit(seed, 6)
        if full <= begin or t >= full:
            return peak if t >= begin else frac
        x = max(0.0, (t - begin) / (full - begin))
        return frac + (peak - frac) * x ** 2
