"""What a diagnosis is computed from: the job and its pods and events, and whatever else
could be read for the person asking (log tails, quotas, nodes, metrics, other jobs).

Every optional part is None when it was not read (not needed, not allowed, or not
answering); `unread` says in words what could not be read, so the diagnosis can say what
it did not see. Nothing here talks to a cluster: `gather.py` fills these in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from odh.training.diagnosis.logs import strip_rank_tag
from odh.training.logs.progress import split_timestamp
from odh.training.status.summarize import summarize
from odh.training.status.summary import JobSummary

Obj = dict[str, Any]

HANG_AFTER_SECONDS = 600.0     # no new log line for this long: "possible hang"
LOW_GPU_PERCENT = 40.0         # a running job's GPUs below this on average...
LOW_GPU_SECONDS = 600.0        # ...for this long: a performance hint
IDLE_GPU_PERCENT = 5.0         # GPUs this quiet back a hang


@dataclass
class LogTail:
    """The last lines of one container's log, with the times the runtime recorded."""

    pod: str
    lines: list[tuple[datetime | None, str]]
    previous: bool = False  # the run before the current one (a restarted container)

    @classmethod
    def from_text(cls, pod: str, text: str, previous: bool = False) -> LogTail:
        lines = []
        for raw in text.splitlines():
            at, rest = split_timestamp(raw)
            lines.append((at, rest))
        return cls(pod, lines, previous)

    @property
    def texts(self) -> list[str]:
        return [text for _at, text in self.lines]

    @property
    def clean_texts(self) -> list[str]:
        """The lines without mpirun's rank tags (`[1,0]<stderr>:`)."""
        return [strip_rank_tag(text) for text in self.texts]

    @property
    def last_time(self) -> datetime | None:
        for at, text in reversed(self.lines):
            if at is not None and text.strip():
                return at
        return None


@dataclass
class Usage:
    """What Prometheus says about the job's pods (None: no answer for that number)."""

    memory_peak: dict[str, float] = field(default_factory=dict)  # pod -> bytes, whole run
    gpu_util: float | None = None       # percent, the job's GPUs on average, recent window
    gpu_util_seconds: float = 0.0       # the window it is averaged over
    gpu_unread: bool = False  # the GPUs' use was asked and Prometheus did not answer


@dataclass(frozen=True)
class GpuHolder:
    """A running job (of those the person may see) that holds GPUs."""

    namespace: str
    name: str
    kind_slug: str
    gpus: int
    eta_seconds: float | None  # time left from its progress, when its log tells


@dataclass(frozen=True)
class SimilarRun:
    """A finished run of a similar configuration that succeeded (from the job history)."""

    name: str
    namespace: str
    uid: str
    finished: datetime | None
    differences: tuple[str, ...] = ()  # what differs from this job ("Memory per worker 64Gi")


@dataclass
class Facts:
    job: Obj
    pods: list[Obj]
    events: list[Obj]
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    summary: JobSummary | None = None
    logs: dict[str, LogTail] | None = None   # by pod name (current run, or previous)
    quotas: list[Obj] | None = None
    limit_ranges: list[Obj] | None = None
    nodes: list[Obj] | None = None
    pull_secrets: list[str] | None = None
    secret_keys: dict[str, list[str]] | None = None  # the project's Secrets: name -> keys
    network_policies: list[Obj] | None = None
    pvcs: list[Obj] | None = None
    gpu_holders: list[GpuHolder] | None = None
    hidden_gpus: int = 0                      # held by jobs the person may not see
    free_gpus: int | None = None              # on the whole cluster, now
    usage: Usage | None = None
    similar: list[SimilarRun] | None = None
    dismissed: frozenset[str] = frozenset()  # scenarios this person hid for this job
    hang_after_seconds: float = HANG_AFTER_SECONDS
    unread: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.summary is None:
            self.summary = summarize(self.job, self.pods, self.events, self.now)

    @property
    def s(self) -> JobSummary:
        assert self.summary is not None
        return self.summary

    def log_of(self, pod: str) -> LogTail | None:
        return (self.logs or {}).get(pod)
