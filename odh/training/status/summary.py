"""The shapes of a job's status summary (computed in status.py, phrased in lifecycle.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

from odh.training.i18n import LazyText
from odh.training.kinds import JobKind
from odh.training.logs.progress import Progress
from odh.training.status.pods import ReplicaState


class Phase(StrEnum):
    """The dashboard's status of a job (the SDK calls it `Phase`; its `JobStatus` is the
    status value of odh.training.jobstatus)."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    SUSPENDED = "Suspended"


JobStatus = Phase  # the name the dashboard's own modules use


@dataclass
class Condition:
    type: str
    status: str
    reason: str
    message: str
    last_transition: datetime | None

    @property
    def is_true(self) -> bool:
        return self.status == "True"


@dataclass
class JobSummary:
    kind: JobKind
    name: str
    namespace: str
    uid: str
    status: JobStatus
    reason: str
    message: str
    since: datetime | None
    created: datetime | None
    started: datetime | None
    finished: datetime | None
    lifecycle_step: str | LazyText  # translated when shown (odh.training.status.lifecycle)
    launcher: ReplicaState | None
    workers: list[ReplicaState]
    ready: int
    total: int
    workers_ready: int
    workers_total: int
    restarts: int
    gpus: int
    created_by: str
    conditions: list[Condition]
    observed_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    queue: str = ""  # the Kueue LocalQueue it names (label kueue.x-k8s.io/queue-name)
    # Kueue holds it suspended until its ClusterQueue admits it (it names a queue and its
    # spec says suspend): Pending to its owner, "Queued" everywhere
    held_by_queue: bool = False
    # how far training has got as the job reports it of itself (a TrainJob's
    # status.trainerStatus); None: read from its log, if at all (odh.training.logs.progress)
    reported_progress: Progress | None = None
    # the object its kind leaves its layout to (a TrainJob's runtime), as it was read: what
    # a summary made again of the same job is given (`summarize(..., layout=...)`)
    layout: dict | None = field(default=None, compare=False, repr=False)

    @property
    def replicas(self) -> list[ReplicaState]:
        """Launcher first, then every other pod."""
        return ([self.launcher] if self.launcher else []) + self.workers

    @property
    def problems(self) -> list[ReplicaState]:
        return [r for r in self.replicas if r.problem]

    @property
    def is_finished(self) -> bool:
        return self.status in (JobStatus.SUCCEEDED, JobStatus.FAILED)

    @property
    def stopped(self) -> datetime | None:
        """When its run time stopped: it finished, or was suspended (a resumed job starts
        counting again from its new start); None while it runs or waits."""
        if self.finished is not None:
            return self.finished
        return self.since if self.status == Phase.SUSPENDED else None

    def duration_seconds(self, now: datetime | None = None) -> float:
        """Run time: start to finish or suspension (or to now); from creation if it never
        started."""
        start = self.started or self.created
        if start is None:
            return 0.0
        end = self.stopped or now or self.observed_at
        return max(0.0, (end - start).total_seconds())

    def time_in_state_seconds(self, now: datetime | None = None) -> float:
        since = self.since or self.created
        if since is None:
            return 0.0
        return max(0.0, ((now or self.observed_at) - since).total_seconds())
