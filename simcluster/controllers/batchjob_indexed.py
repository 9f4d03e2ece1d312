"""Indexed Jobs (`completionMode: Indexed`) in the batch/v1 Job controller, as in 1.31.

Each pod gets a completion index in 0..completions-1 that no active pod holds and that
has not succeeded yet (lowest first): it is named `<job>-<index>-<random5>`, annotated and
labelled `batch.kubernetes.io/job-completion-index`, given the hostname `<job>-<index>`
(unless the template sets one) and the `JOB_COMPLETION_INDEX` environment variable. A
pod that succeeds adds its index to `status.completedIndexes` ("0-2,4").
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

INDEX_KEY = "batch.kubernetes.io/job-completion-index"
INDEX_ENV = {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
    "fieldPath": f"metadata.annotations['{INDEX_KEY}']"}}}


def indexed(job: Obj) -> bool:
    return (job.get("spec") or {}).get("completionMode") == "Indexed"


def pod_index(pod: Obj) -> int | None:
    value = (pod["metadata"].get("annotations") or {}).get(INDEX_KEY, "")
    return int(value) if value.isdigit() else None


def parse(intervals: str | None) -> set[int]:
    out: set[int] = set()
    for part in (intervals or "").split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            out.update(range(int(lo), int(hi or lo) + 1))
    return out


def format_intervals(indexes: set[int]) -> str:
    parts: list[str] = []
    for i in sorted(indexes):
        if parts and int(parts[-1].rpartition("-")[2]) == i - 1:
            lo = parts[-1].partition("-")[0]
            parts[-1] = f"{lo}-{i}"
        else:
            parts.append(str(i))
    return ",".join(parts)


def mark_completed(job: Obj, status: Obj, pod: Obj) -> bool:
    """Record a succeeded pod's index; False when it had already completed (not counted
    again)."""
    index = pod_index(pod)
    if not indexed(job) or index is None:
        return True
    done = parse(status.get("completedIndexes"))
    if index in done:
        return False
    done.add(index)
    status["completedIndexes"] = format_intervals(done)
    return True


def free_indexes(job: Obj, status: Obj, active: list[Obj], completions: int,
                 count: int) -> list[int | None]:
    """The indexes of the next `count` pods (None for each in a NonIndexed Job)."""
    if not indexed(job):
        return [None] * count
    taken = parse(status.get("completedIndexes")) | {
        i for i in (pod_index(p) for p in active) if i is not None}
    return [i for i in range(completions) if i not in taken][:count]


def apply_index(meta: Obj, spec: Obj, job_name: str, index: int) -> None:
    meta["generateName"] = f"{job_name}-{index}-"
    meta["annotations"] = {**(meta.get("annotations") or {}), INDEX_KEY: str(index)}
    meta["labels"] = {**(meta.get("labels") or {}), INDEX_KEY: str(index)}
    if not spec.get("hostname"):
        spec["hostname"] = f"{job_name}-{index}"
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                c["env"] = list(c.get("env") or []) + [dict(INDEX_ENV)]
