"""Past runs as the advice reads them, and which of them are like the job being made.

A past run comes from a finished job's history record (the dashboard's database) or from
a finished job still in the cluster (the SDK): its kind, image, command and size, how it
ended, how long it took, and what its Workers used (`odh.training.metrics.usage`).

**Similar** means: the same kind of job, the same image *repository* (the tag or digest
may differ: a rebuilt image of the same program needs about the same memory) and the same
command, word for word (a template fixes both, so runs made from one template are
similar; the same script with other arguments, e.g. another batch size, is not). The
project is the caller's to choose: the dashboard and the SDK only give runs of the
project the job is made in. Only the newest `MAX_RUNS` similar runs count.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from odh.training.kinds import JobSpec, ManifestError, kind_for_object
from odh.training.quantity import QuantityError, parse_quantity

MAX_RUNS = 20
SUCCEEDED = "Succeeded"
FAILED = "Failed"
OOM_KILLED = "OOMKilled"


@dataclass(frozen=True)
class PastRun:
    """One finished run of a job: what it asked for per Worker, how it went, what it used."""

    name: str
    kind: str  # "MPIJob"
    image: str
    command: tuple[str, ...]
    workers: int
    memory_limit_bytes: float | None  # per Worker (requests = limits); None: not set
    gpus_per_worker: int
    outcome: str  # Succeeded | Failed
    cause_reason: str = ""  # "OOMKilled": the reason of the pod that explains a failure
    duration_seconds: float | None = None
    peak_memory_bytes: float | None = None  # the highest Worker's peak working set
    gpu_utilization: float | None = None  # percent, the GPUs' mean over the run
    finished: datetime | None = None

    @property
    def succeeded(self) -> bool:
        return self.outcome == SUCCEEDED

    @property
    def oom_killed(self) -> bool:
        return self.outcome == FAILED and self.cause_reason == OOM_KILLED


def image_repository(image: str) -> str:
    """"quay.io/org/train" for "quay.io/org/train:v2" or "...@sha256:..." (a registry's
    port, "host:5000/x", is not a tag)."""
    image = image.strip().split("@", 1)[0]
    slash = image.rfind("/")
    colon = image.rfind(":")
    return image[:colon] if colon > slash else image


def _words(command: Iterable[str]) -> tuple[str, ...]:
    return tuple(word for part in command for word in str(part).split())


def is_similar(run: PastRun, spec: JobSpec) -> bool:
    """Is `run` like the job `spec` describes? (Same kind, image repository and command:
    see the module's docstring.)"""
    return (run.kind == spec.kind.kind and bool(spec.image.strip())
            and image_repository(run.image) == image_repository(spec.image)
            and _words(run.command) == _words(spec.command))


def similar_runs(runs: Iterable[PastRun], spec: JobSpec) -> list[PastRun]:
    """The newest `MAX_RUNS` runs like `spec`'s job, newest first (runs without a finish
    time last)."""
    alike = [r for r in runs if is_similar(r, spec)]
    alike.sort(key=lambda r: r.finished.timestamp() if r.finished else float("-inf"),
               reverse=True)
    return alike[:MAX_RUNS]


def memory_bytes(text: str) -> float | None:
    try:
        return float(parse_quantity(text)) if text else None
    except QuantityError:
        return None


def past_run(record: dict) -> PastRun | None:
    """A past run from a history record's fields (`odh.training.status.history.
    history_fields`, plus `peak_memory_bytes` and `gpu_utilization` where known); None
    for a record whose manifest is not of a kind the dashboard reads."""
    manifest = record.get("spec") or {}
    kind = kind_for_object(manifest) if isinstance(manifest, dict) else None
    if kind is None or not kind.creatable:
        return None
    try:
        spec = kind.read_manifest(manifest)
    except (ManifestError, ValueError, TypeError, KeyError):
        return None
    peak = record.get("peak_memory_bytes")
    gpu = record.get("gpu_utilization")
    duration = record.get("duration_seconds")
    return PastRun(
        name=str(record.get("name") or spec.name), kind=kind.kind, image=spec.image,
        command=tuple(spec.command), workers=int(spec.workers),
        memory_limit_bytes=memory_bytes(spec.memory_per_worker),
        gpus_per_worker=int(spec.gpus_per_worker), outcome=str(record.get("outcome", "")),
        cause_reason=str(record.get("cause_reason") or ""),
        duration_seconds=float(duration) if duration is not None else None,
        peak_memory_bytes=float(peak) if peak is not None else None,
        gpu_utilization=float(gpu) if gpu is not None else None,
        finished=record.get("finished"))


def as_decimal(value: float) -> Decimal:
    return Decimal(str(value))
