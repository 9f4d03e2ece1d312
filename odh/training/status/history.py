"""What a finished job leaves behind: the fields of its history record.

The watch hub writes one record per job uid when it sees a job succeed or fail (the
dashboard keeps them in its database); success rates, comparisons and clone-from-history
read them after the job itself is gone.
"""

from __future__ import annotations

from typing import Any

from odh.training.kinds import CREATED_BY_ANNOTATION
from odh.training.manifests.export import exportable
from odh.training.paths import as_dict, get_path
from odh.training.status.lifecycle import failure_cause, failure_replica
from odh.training.status.summary import JobStatus, JobSummary


def history_fields(job: dict, summary: JobSummary) -> dict[str, Any]:
    """The record of a finished job: its manifest without status, the outcome and why,
    when it ran, for how long, and GPUs x hours (the GPUs it asked for, over its run).

    Why is the operator's reason and message and, for a failed job, the diagnosis: the pod
    that best explains the failure, in words (`cause`, "Worker 2 was OOMKilled") and as
    that pod's reason (`cause_reason`, "OOMKilled"), which the operator's reason often
    hides (MPIJob: "BackoffLimitExceeded/Error", the Launcher's exit after a Worker died).
    """
    if not summary.is_finished:
        raise ValueError(f"{summary.kind.kind} {summary.namespace}/{summary.name} has not "
                         f"finished: it is {summary.status}")
    started = summary.started or summary.created
    finished = summary.finished
    duration = max(0.0, (finished - started).total_seconds()) if started and finished else None
    annotations = as_dict(get_path(job, ["metadata", "annotations"]))
    culprit = failure_replica(summary) if summary.status == JobStatus.FAILED else None
    return {
        "uid": summary.uid, "namespace": summary.namespace, "kind": summary.kind.kind,
        "name": summary.name,
        "created_by": summary.created_by or str(annotations.get(CREATED_BY_ANNOTATION, "")),
        "spec": exportable(job), "outcome": str(summary.status), "reason": summary.reason,
        "message": summary.message,
        "cause": str(failure_cause(summary) or "") if culprit is not None else "",
        "cause_reason": culprit.reason if culprit is not None else "",
        "started": started, "finished": finished,
        "duration_seconds": duration,
        "gpu_hours": round(summary.gpus * (duration or 0.0) / 3600.0, 4),
    }
