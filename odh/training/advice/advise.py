"""Advice from history: what similar past runs (`runs.similar_runs`) used and how they
went, and the size they suggest for the job being made.

How much history makes advice (each rule says nothing rather than guess):

- **Memory per Worker**: at least `MIN_RUNS` similar runs that either succeeded with a
  measured peak or were OOMKilled at a known limit. The suggestion is the highest
  successful peak plus `HEADROOM` (15 %), rounded up to a size people ask for (`nice_up`:
  1Gi steps under 8Gi, 2Gi under 16Gi, 4Gi under 64Gi, 16Gi under 256Gi, 64Gi beyond);
  where runs were OOMKilled at a limit at least that high (or no run succeeded), half as
  much again as the highest such limit. Offered as a change when the job asks for less,
  or for a quarter more or beyond (quota it would hold for nothing).
- **Workers**: succeeded runs grouped by Worker count, each count's median duration; only
  counts with at least `MIN_RUNS` runs are compared, and the job's own count must be one
  of them (no advice from one run of another size). The count suggested is the fastest,
  or the fewest Workers within `SAME_SPEED` (10 %) of it; offered when it is at least
  `SPEEDUP_MIN` (1.2x) faster than the job's count, or as fast with fewer Workers.
- **GPU use and OOMs** are told as they were (any number of runs), without a change.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal

from odh.training.advice.runs import PastRun, as_decimal, memory_bytes, similar_runs
from odh.training.durations import format_duration
from odh.training.i18n import _, ngettext
from odh.training.kinds import JobSpec
from odh.training.quantity import display_memory, format_memory

MIN_RUNS = 2
HEADROOM = 1.15
OOM_STEP_UP = 1.5
LOWER_FROM = 1.25  # asking this much more than the suggestion: offer to lower it
SPEEDUP_MIN = 1.2
SAME_SPEED = 1.1
LOW_GPU = 50.0  # percent: below this, the GPUs mostly waited

MEMORY_FIELD = "memory_per_worker"
WORKERS_FIELD = "workers"

_MI = 2 ** 20
_GI = 2 ** 30
_STEPS = ((_GI, 256 * _MI), (8 * _GI, _GI), (16 * _GI, 2 * _GI), (64 * _GI, 4 * _GI),
          (256 * _GI, 16 * _GI))


def nice_up(size: float) -> int:
    """`size` bytes rounded up to a size people ask for (see the module's docstring)."""
    step = next((s for bound, s in _STEPS if size <= bound), 64 * _GI)
    return max(step, math.ceil(size / step) * step)


def memory_text(size: float) -> str:
    """A measured size to read: "41Gi", "41.3Gi", "512Mi"."""
    return display_memory(as_decimal(size), ROUND_CEILING)


@dataclass(frozen=True)
class Suggestion:
    """One change advice offers: a field of the job (`MEMORY_FIELD`, `WORKERS_FIELD`) and
    its value, the button's words, and the sentence that says why."""

    field: str
    value: str | int
    label: str
    sentence: str


@dataclass(frozen=True)
class WorkerCount:
    """How the succeeded runs of one Worker count went."""

    workers: int
    runs: int
    median_seconds: float

    @property
    def median_text(self) -> str:
        return format_duration(self.median_seconds)


@dataclass(frozen=True)
class RunRow:
    """A past run as a table shows it."""

    name: str
    outcome: str
    oom_killed: bool
    workers: int
    memory: str  # "41Gi of 64Gi (64%)", "" unknown
    gpu: str  # "87%", "" unknown
    duration: str  # "1h 2m 3s", "" unknown


@dataclass(frozen=True)
class Advice:
    """What similar past runs used and how they went (`sentences`, `rows`, `by_workers`)
    and what they suggest (`suggestions`; `changes` as {field: value})."""

    runs: list[PastRun]
    sentences: list[str] = field(default_factory=list)
    suggestions: list[Suggestion] = field(default_factory=list)
    by_workers: list[WorkerCount] = field(default_factory=list)
    peak_memory_bytes: float | None = None
    gpu_utilization: float | None = None
    oom_killed: int = 0

    @property
    def changes(self) -> dict[str, str | int]:
        return {s.field: s.value for s in self.suggestions}

    @property
    def memory_per_worker(self) -> str | None:
        return next((str(s.value) for s in self.suggestions if s.field == MEMORY_FIELD), None)

    @property
    def workers(self) -> int | None:
        return next((int(s.value) for s in self.suggestions if s.field == WORKERS_FIELD), None)

    @property
    def rows(self) -> list[RunRow]:
        return [_row(r) for r in self.runs]

    def suggestion(self, field_name: str) -> Suggestion | None:
        return next((s for s in self.suggestions if s.field == field_name), None)

    def __str__(self) -> str:
        return "\n".join(self.sentences)


def _row(run: PastRun) -> RunRow:
    memory = ""
    if run.peak_memory_bytes is not None:
        memory = memory_text(run.peak_memory_bytes)
        if run.memory_limit_bytes:
            memory = _("%(peak)s of %(limit)s (%(percent)d%%)") % {
                "peak": memory, "limit": memory_text(run.memory_limit_bytes),
                "percent": round(100 * run.peak_memory_bytes / run.memory_limit_bytes)}
    return RunRow(name=run.name, outcome=run.outcome, oom_killed=run.oom_killed,
                  workers=run.workers, memory=memory,
                  gpu=f"{round(run.gpu_utilization)}%" if run.gpu_utilization is not None
                  else "",
                  duration=format_duration(run.duration_seconds)
                  if run.duration_seconds is not None else "")


def _memory(runs: list[PastRun], asked: float | None) -> tuple[list[str], Suggestion | None,
                                                                   float | None]:
    peaks = [r.peak_memory_bytes for r in runs
             if r.succeeded and r.peak_memory_bytes is not None]
    oom_limits = [r.memory_limit_bytes for r in runs if r.oom_killed and r.memory_limit_bytes]
    peak = max(peaks) if peaks else None
    if len(peaks) + len(oom_limits) < MIN_RUNS:
        return [], None, peak
    oom_limit = max(oom_limits) if oom_limits else None
    if peak is not None and (oom_limit is None or peak * HEADROOM > oom_limit):
        size = nice_up(peak * HEADROOM)
        sentence = _("Similar runs peaked at %(peak)s per Worker: %(size)s is enough.") % {
            "peak": memory_text(peak), "size": format_memory(Decimal(size))}
    else:
        assert oom_limit is not None
        size = nice_up(oom_limit * OOM_STEP_UP)
        sentence = _("Similar runs were OOMKilled at %(limit)s per Worker: ask for "
                     "%(size)s.") % {"limit": memory_text(oom_limit),
                                     "size": format_memory(Decimal(size))}
    if asked is not None and size <= asked < size * LOWER_FROM:
        return [sentence], None, peak
    value = format_memory(Decimal(size))
    return [sentence], Suggestion(MEMORY_FIELD, value, _("Use %(memory)s per Worker") % {
        "memory": value}, sentence), peak


def worker_counts(runs: list[PastRun]) -> list[WorkerCount]:
    """The succeeded runs' median duration by Worker count, fewest Workers first."""
    durations: dict[int, list[float]] = defaultdict(list)
    for run in runs:
        if run.succeeded and run.duration_seconds is not None and run.workers > 0:
            durations[run.workers].append(run.duration_seconds)
    return [WorkerCount(w, len(d), statistics.median(d)) for w, d in sorted(durations.items())]


def _workers(counts: list[WorkerCount], asked: int) -> Suggestion | None:
    compared = [c for c in counts if c.runs >= MIN_RUNS]
    now = next((c for c in compared if c.workers == asked), None)
    if now is None or len(compared) < 2:
        return None
    fastest = min(c.median_seconds for c in compared)
    pick = min((c for c in compared if c.median_seconds <= fastest * SAME_SPEED),
               key=lambda c: c.workers)
    if pick.workers == asked or pick.median_seconds <= 0:
        return None
    ratio = now.median_seconds / pick.median_seconds
    if pick.workers > asked and ratio >= SPEEDUP_MIN:
        sentence = _("%(better)d Workers finished %(ratio)sx faster than %(now)d.") % {
            "better": pick.workers, "ratio": f"{ratio:.1f}", "now": asked}
    elif pick.workers < asked:
        sentence = _("%(fewer)d Workers finished as fast as %(now)d (%(fewer_time)s against "
                     "%(now_time)s).") % {"fewer": pick.workers, "now": asked,
                                          "fewer_time": pick.median_text,
                                          "now_time": now.median_text}
    else:
        return None
    return Suggestion(WORKERS_FIELD, pick.workers, ngettext(
        "Use %(count)d Worker", "Use %(count)d Workers", pick.workers) % {
        "count": pick.workers}, sentence)


def advise(runs: list[PastRun], spec: JobSpec) -> Advice | None:
    """The advice for the job `spec` describes from the project's past `runs`; None when
    none of them is similar (`runs.is_similar`)."""
    alike = similar_runs(runs, spec)
    if not alike:
        return None
    succeeded = sum(r.succeeded for r in alike)
    sentences = [ngettext(
        "%(count)d similar run in this project: %(succeeded)d Succeeded, %(failed)d Failed.",
        "%(count)d similar runs in this project: %(succeeded)d Succeeded, %(failed)d Failed.",
        len(alike)) % {"count": len(alike), "succeeded": succeeded,
                       "failed": len(alike) - succeeded}]
    oom = sum(r.oom_killed for r in alike)
    if oom:
        sentences.append(ngettext("%(oom)d of them was OOMKilled.",
                                  "%(oom)d of them were OOMKilled.", oom) % {"oom": oom})
    said, memory, peak = _memory(alike, memory_bytes(spec.memory_per_worker))
    sentences += said
    gpus = [r.gpu_utilization for r in alike
            if r.gpu_utilization is not None and r.gpus_per_worker > 0]
    gpu = round(statistics.mean(gpus), 1) if gpus else None
    if gpu is not None:
        sentences.append(
            (_("Their GPUs were busy %(percent)d%% of the time on average: they mostly "
               "waited, more GPUs would not make it faster.") if gpu < LOW_GPU else
             _("Their GPUs were busy %(percent)d%% of the time on average."))
            % {"percent": round(gpu)})
    counts = worker_counts(alike)
    workers = _workers(counts, int(spec.workers))
    if workers is not None:
        sentences.append(workers.sentence)
    return Advice(runs=alike, sentences=sentences,
                  suggestions=[s for s in (memory, workers) if s is not None],
                  by_workers=counts, peak_memory_bytes=peak, gpu_utilization=gpu,
                  oom_killed=oom)
