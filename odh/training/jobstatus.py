"""The SDK's value types: `ResourceSpec` (what one pod asks for) and `JobStatus` (where a
job stands, as `MPIJob.status()` answers). Plain Python: no cluster, no kubernetes client.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from odh.training import richhtml as rich
from odh.training.durations import format_duration, format_timestamp
from odh.training.i18n import _
from odh.training.quantity import GPU_RESOURCE
from odh.training.status.summary import JobSummary, Phase

if TYPE_CHECKING:
    from odh.training.queues.standing import QueueStanding

__all__ = ["JobStatus", "Phase", "ResourceSpec", "StatusNow"]


@dataclass(frozen=True)
class ResourceSpec:
    """What one Launcher or Worker asks for: requests and limits alike (the MPI Operator's
    advice, so a pod is never throttled below what it was scheduled for). `nvidia.com/gpu`
    is set only when `gpus` > 0.

        ResourceSpec(cpu="4", memory="16Gi", gpus=2)
    """

    cpu: str = "1"
    memory: str = "2Gi"
    gpus: int = 0

    def to_dict(self) -> dict[str, dict[str, str]]:
        """The container's `resources` block:
        `{"requests": {"cpu": "4", ...}, "limits": {...}}`."""
        amounts = {"cpu": str(self.cpu), "memory": str(self.memory)}
        if self.gpus > 0:
            amounts[GPU_RESOURCE] = str(self.gpus)
        return {"requests": dict(amounts), "limits": dict(amounts)}


@dataclass(frozen=True)
class JobStatus:
    """Where a job stands: `phase` (one of the dashboard's statuses: Pending, Running,
    Succeeded, Failed, Suspended; it compares equal to those strings), its Workers by
    state, when it started and finished, and in plain words why it is where it is.

        status = job.status()
        if status.phase == "Running":
            print(status.workers_running, "Workers running for", status.duration_text)
    """

    phase: Phase
    workers_running: int
    workers_pending: int
    workers_failed: int
    start_time: datetime | None
    completion_time: datetime | None
    workers_total: int = 0
    reason: str = ""
    message: str = ""
    step: str = ""
    created_time: datetime | None = None
    observed_at: datetime = field(default_factory=lambda: datetime.now(UTC), compare=False)
    # where it stands in Kueue's queue (odh.training.queues.standing), for a job that names one
    # and has not finished: what MPIJob.status() reads; None otherwise
    queue: QueueStanding | None = field(default=None, compare=False)
    # why it is where it is, in one line: the diagnosis' headline when it has something to
    # say, else where it stands in its queue, else its step (odh.training.diagnosis.story): the line
    # the dashboard and `odh training describe` say
    headline: str = ""
    # when it was suspended (None: it is not): its run time stops there
    suspended_time: datetime | None = None

    @classmethod
    def from_summary(cls, summary: JobSummary) -> JobStatus:
        workers = [w for w in summary.workers
                   if not summary.kind.runs_mpirun or w.role == "Worker"]
        return cls(
            phase=summary.status,
            workers_running=sum(w.status == "Running" for w in workers),
            workers_pending=sum(w.status == "Pending" for w in workers),
            workers_failed=sum(w.status == "Failed" for w in workers),
            start_time=summary.started, completion_time=summary.finished,
            workers_total=summary.workers_total, reason=summary.reason,
            message=summary.message, step=str(summary.lifecycle_step),
            created_time=summary.created, observed_at=summary.observed_at,
            headline=str(summary.lifecycle_step),
            suspended_time=summary.since if summary.status == Phase.SUSPENDED else None)

    @property
    def duration(self) -> float:
        """Seconds run: start to completion or suspension, or to now while it runs (0
        before it starts)."""
        if self.start_time is None:
            return 0.0
        end = self.completion_time or self.suspended_time or datetime.now(UTC)
        return max(0.0, (end - self.start_time).total_seconds())

    @property
    def duration_text(self) -> str:
        """The duration as the dashboard writes it: "2h 15m 43s"."""
        return format_duration(self.duration)

    @property
    def is_finished(self) -> bool:
        return self.phase in (Phase.SUCCEEDED, Phase.FAILED)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: timestamps in RFC 3339, the duration in seconds."""
        def stamp(value: datetime | None) -> str | None:
            return format_timestamp(value) if value else None

        return {"phase": str(self.phase), "workersRunning": self.workers_running,
                "workersPending": self.workers_pending, "workersFailed": self.workers_failed,
                "workersTotal": self.workers_total, "startTime": stamp(self.start_time),
                "completionTime": stamp(self.completion_time),
                "durationSeconds": round(self.duration, 3), "reason": self.reason,
                "message": self.message, "step": self.step, "headline": self.headline,
                "queue": None if self.queue is None else self.queue.to_dict()}

    def html_rows(self) -> list[tuple[str, str]]:
        """(label, HTML) of what the status says beside its badge and headline: Workers,
        times, the cluster's reason, the queue (each value escaped)."""
        def stamp(value: datetime | None) -> str:
            return rich.esc(format_timestamp(value)) if value else ""

        workers = _("%(running)d of %(total)d running, %(pending)d pending, %(failed)d "
                    "failed") % {"running": self.workers_running, "total": self.workers_total,
                                 "pending": self.workers_pending, "failed": self.workers_failed}
        cause = " ".join(p for p in (self.reason, self.message) if p)
        return [(_("Workers"), rich.esc(workers)), (_("Created"), stamp(self.created_time)),
                (_("Started"), stamp(self.start_time)),
                (_("Finished"), stamp(self.completion_time)),
                (_("Duration"), rich.esc(self.duration_text) if self.start_time else ""),
                (_("Reason"), rich.esc(cause)),
                (_("Queue"), rich.esc(self.queue.sentence()) if self.queue is not None else "")]

    def _repr_html_(self) -> str:
        """The status in a notebook: its colour, symbol and word, its headline, its Workers
        and times (everything from the cluster escaped)."""
        head = rich.status_badge(self.phase)
        if self.headline:
            head += f" <span>{rich.esc(self.headline)}</span>"
        return rich.box(_("Job status"), head, rich.rows(self.html_rows()))

    def changed_from(self, other: JobStatus | None) -> bool:
        """Did anything a person watching would notice change?"""
        if other is None:
            return True
        keys = ("phase", "workers_running", "workers_pending", "workers_failed",
                "workers_total", "reason", "step", "start_time", "completion_time", "headline")
        return any(getattr(self, k) != getattr(other, k) for k in keys)


class StatusNow(JobStatus):
    """`job.status` as the examples write it, both ways: called, as the plan has it
    (`job.status().phase`), or read, as the UX analysis' UC2 has it (`job.status.phase`,
    `while job.status != "Succeeded": ...`): it compares equal to its phase's name, and each
    read of `job.status` asks the cluster again, so such a loop ends."""

    @classmethod
    def of(cls, status: JobStatus) -> StatusNow:
        return cls(**{f.name: getattr(status, f.name) for f in fields(JobStatus)})

    def __call__(self) -> StatusNow:
        return self

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.phase == other
        return JobStatus.__eq__(self, other)

    __hash__ = JobStatus.__hash__

    def __str__(self) -> str:
        return str(self.phase.value)
