"""The documented annotations that ask simcluster for a job's behaviour.

There is no hidden magic: a job without these annotations succeeds after a realistic run.
Annotations go on the training job (MPIJob, PyTorchJob, TFJob) or on a bare Pod; a pod
inherits them from its owners (Pod -> launcher Job -> MPIJob), the closest owner winning.

| annotation | meaning |
|---|---|
| `simcluster.io/run-seconds` | training time of the launcher/master at speed 1 (default 90) |
| `simcluster.io/epochs` | epochs the training logs walk through (default 10) |
| `simcluster.io/failure` | `oom`, `image-pull`, `mpi-connection-refused`, `hang`, `evict`,
  `exit-code`, `cuda-oom`, `command-not-found`, `not-executable`, `segfault`, `node-lost`,
  `restart-once` |
| `simcluster.io/failure-worker` | index of the worker the failure hits (default 0) |
| `simcluster.io/failure-after-seconds` | when it hits, after training starts (default 60% of run) |
| `simcluster.io/exit-code` | the launcher's exit code for `exit-code` (default 1) |
| `simcluster.io/image-pull-error` | what a failing pull says: `not-found` (default),
  `unauthorized`, `unreachable` |
| `simcluster.io/gpu-utilization` | GPU use while training, percent 0-100 (default: 80-98) |

Limits of the simulation: at most MAX_EPOCHS epochs (a larger value is clamped) and at most
MAX_REPLICAS pods per replica type of a training job. `annotation_warnings` says what a
job's annotations ask for that simcluster does not do; the training-job controllers record
it as Warning events on the job.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

Obj = dict[str, Any]

PREFIX = "simcluster.io/"
RUN_SECONDS = PREFIX + "run-seconds"
EPOCHS = PREFIX + "epochs"
FAILURE = PREFIX + "failure"
FAILURE_WORKER = PREFIX + "failure-worker"
FAILURE_AFTER = PREFIX + "failure-after-seconds"
EXIT_CODE = PREFIX + "exit-code"
IMAGE_PULL_ERROR = PREFIX + "image-pull-error"
GPU_UTILIZATION = PREFIX + "gpu-utilization"

FAILURES = ("oom", "image-pull", "mpi-connection-refused", "hang", "evict", "exit-code",
            "cuda-oom", "command-not-found", "not-executable", "segfault", "node-lost",
            "restart-once")
PULL_ERRORS = ("not-found", "unauthorized", "unreachable")
DEFAULT_RUN_SECONDS = 90.0
DEFAULT_EPOCHS = 10
MAX_EPOCHS = 1000  # larger values are clamped (two log lines per epoch)
MAX_REPLICAS = 1000  # pods per replica type that the training-job controllers create
KNOWN = {RUN_SECONDS: "number", EPOCHS: "integer", FAILURE: "failure",
         FAILURE_WORKER: "integer", FAILURE_AFTER: "number", EXIT_CODE: "integer",
         IMAGE_PULL_ERROR: "pull-error", GPU_UTILIZATION: "percent"}
DEFAULTS = {RUN_SECONDS: "90", EPOCHS: str(DEFAULT_EPOCHS), FAILURE_WORKER: "0",
            FAILURE_AFTER: "60% of run-seconds", EXIT_CODE: "1", IMAGE_PULL_ERROR: "not-found",
            GPU_UTILIZATION: "80-98 while training"}
UNKNOWN_REASON = "UnknownSimclusterAnnotation"
INVALID_REASON = "InvalidSimclusterAnnotation"


@dataclass(frozen=True)
class Behaviour:
    run_seconds: float = DEFAULT_RUN_SECONDS
    epochs: int = DEFAULT_EPOCHS
    failure: str = ""
    failure_worker: int = 0
    failure_after: float | None = None
    exit_code: int = 1
    pull_error: str = "not-found"
    gpu_utilization: float | None = None  # percent while training; None: the busy default

    @property
    def failure_at(self) -> float:
        """Seconds after training starts when the failure hits."""
        if self.failure_after is not None:
            return self.failure_after
        return self.run_seconds * 0.6


def _num(value: str | None, default: float, cast=float) -> Any:
    if value is None:
        return default
    try:
        n = cast(value)
    except (TypeError, ValueError, OverflowError):
        return default
    return n if n >= 0 and math.isfinite(n) else default


def owner_chain(cluster: Cluster, obj: Obj, depth: int = 3) -> list[Obj]:
    """The object and its controlling owners, closest first."""
    chain = [obj]
    current = obj
    ns = obj.get("metadata", {}).get("namespace", "")
    for _ in range(depth):
        refs = current.get("metadata", {}).get("ownerReferences") or []
        ref = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
        if ref is None:
            break
        rt = cluster.registry.by_kind(ref.get("apiVersion", ""), ref.get("kind", ""))
        if rt is None:
            break
        owner = cluster.store.get_raw(rt, ns, ref.get("name", ""))
        if owner is None:
            break
        chain.append(owner)
        current = owner
    return chain


def annotations_for(cluster: Cluster, obj: Obj) -> dict[str, str]:
    merged: dict[str, str] = {}
    for o in reversed(owner_chain(cluster, obj)):
        for k, v in (o.get("metadata", {}).get("annotations") or {}).items():
            if k.startswith(PREFIX):
                merged[k] = str(v)
    return merged


def behaviour_for(cluster: Cluster, obj: Obj) -> Behaviour:
    a = annotations_for(cluster, obj)
    failure = a.get(FAILURE, "")
    if failure not in FAILURES:
        failure = ""
    after = a.get(FAILURE_AFTER)
    return Behaviour(
        run_seconds=_num(a.get(RUN_SECONDS), DEFAULT_RUN_SECONDS),
        epochs=max(1, min(MAX_EPOCHS, _num(a.get(EPOCHS), DEFAULT_EPOCHS, int))),
        failure=failure,
        failure_worker=_num(a.get(FAILURE_WORKER), 0, int),
        failure_after=_num(after, 0.0) if after is not None else None,
        exit_code=max(1, min(255, _num(a.get(EXIT_CODE), 1, int))),
        pull_error=a.get(IMAGE_PULL_ERROR) if a.get(IMAGE_PULL_ERROR) in PULL_ERRORS
        else "not-found",
        gpu_utilization=_percent(a.get(GPU_UTILIZATION)),
    )


def _percent(value: str | None) -> float | None:
    n = _num(value, None)
    return float(n) if n is not None and n <= 100 else None


def annotation_warnings(obj: Obj) -> list[tuple[str, str]]:
    """(reason, message) for each `simcluster.io/` annotation of `obj` that simcluster does
    not carry out as written: an unknown name or failure, a value that is not a number
    (the default is used), more epochs than MAX_EPOCHS (clamped)."""
    out: list[tuple[str, str]] = []
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    for key in sorted(annotations):
        if not key.startswith(PREFIX):
            continue
        value = str(annotations[key])
        kind = KNOWN.get(key)
        if kind is None:
            out.append((UNKNOWN_REASON, f"unknown annotation {key} is ignored; simcluster "
                        f"knows {', '.join(sorted(KNOWN))}"))
        elif kind == "failure":
            if value and value not in FAILURES:
                out.append((UNKNOWN_REASON, f'{key}: "{value}" is not a failure simcluster '
                            f"simulates, so the job runs without one; valid values: "
                            f"{', '.join(FAILURES)}"))
        elif kind == "pull-error":
            if value not in PULL_ERRORS:
                out.append((INVALID_REASON, f'{key}: "{value}" is not one of '
                            f"{', '.join(PULL_ERRORS)}; using the default ({DEFAULTS[key]})"))
        elif kind == "percent":
            if _percent(value) is None:
                out.append((INVALID_REASON, f'{key}: "{value}" is not a percentage from 0 to '
                            f"100; using the default ({DEFAULTS[key]})"))
        elif _num(value, None, int if kind == "integer" else float) is None:
            out.append((INVALID_REASON, f'{key}: "{value}" is not a non-negative '
                        f"{'whole ' if kind == 'integer' else ''}number; using the default "
                        f"({DEFAULTS[key]})"))
        elif key == EPOCHS and int(value) > MAX_EPOCHS:
            out.append((INVALID_REASON, f"{key}: {value} is more than simcluster simulates; "
                        f"using {MAX_EPOCHS} epochs"))
    return out


def replicas_warning(kind: str, rtype: str, replicas: int) -> str:
    """The message for a replica count above MAX_REPLICAS."""
    return (f"simcluster creates at most {MAX_REPLICAS} {rtype} pods per {kind}: "
            f"{rtype.lower()}s {MAX_REPLICAS}..{replicas - 1} of {replicas} are not created")
