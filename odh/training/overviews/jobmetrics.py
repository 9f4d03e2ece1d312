"""The numbers the dashboard's `/metrics` reports about training jobs, as plain values.

No Prometheus client here: the dashboard (training/monitoring/exposition.py) turns these into metric
families. The label values are bounded on purpose (a time series per value): statuses,
worker states, wait reasons and failure reasons come from the short lists below, never
from free text.

- `job_counts(summaries)`: jobs by (project, type, status), every status of a
  (project, type) that has jobs, zeros included;
- `worker_counts(summaries)`: their worker pods by (project, type, state), state one of
  active, pending, failed;
- `pending_jobs(items, now)`: each Pending job's wait so far and why it waits;
- `quota_samples(quota)`: a ResourceQuota's hard and used amounts, in base units;
- `failure_reason(reason, message, cause_reason)`: a finished job's failure, as one label
  value.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from odh.training.diagnosis.story import tell
from odh.training.diagnosis.waiting import DiagnosisOf, WaitReason, objects_only, wait_reason
from odh.training.manifests.totals import amount
from odh.training.paths import as_dict, get_path
from odh.training.status.pods import NOT_CREATED, PROBLEM_REASONS, PULL_REASONS
from odh.training.status.summary import JobStatus, JobSummary

Obj = dict[str, Any]

STATUSES = tuple(s.value for s in JobStatus)  # Pending Running Succeeded Failed Suspended
WORKER_STATES = ("active", "pending", "failed")
PENDING_REASONS = ("quota", "insufficient_resources", "queued", "configuration", "other")
# Run times of finished jobs: a minute to a week.
DURATION_BUCKETS = (60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0, 86400.0,
                    172800.0, 604800.0)

_WAIT_LABELS = {WaitReason.QUOTA: "quota", WaitReason.GPUS: "insufficient_resources",
                WaitReason.RESOURCES: "insufficient_resources", WaitReason.QUEUED: "queued",
                WaitReason.PROBLEM: "configuration"}

# Failure reasons kept as they are; anything else is "Error" (a generic operator reason such
# as MPIJobFailed or PyTorchJobFailed) or "Other".
KNOWN_FAILURES = frozenset(PROBLEM_REASONS - PULL_REASONS) | {
    "ImagePullBackOff", "BackoffLimitExceeded", "DeadlineExceeded", "PodFailurePolicy",
    "MaxFailedIndexesExceeded", "Evicted", "OOMKilled", "Error"}
# Words in a failure's message that name it better than a generic reason.
MESSAGE_HINTS = ("OOMKilled", "Evicted", "ImagePullBackOff", "ErrImagePull", "DeadlineExceeded")


def _type(summary: JobSummary) -> str:
    return summary.kind.kind


def job_counts(summaries: Iterable[JobSummary]) -> dict[tuple[str, str, str], int]:
    """{(project, type, status): jobs}; each (project, type) seen gets every status."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for s in summaries:
        counts[(s.namespace, _type(s), str(s.status))] += 1
    for project, kind in {(p, k) for p, k, _ in counts}:
        for status in STATUSES:
            counts.setdefault((project, kind, status), 0)
    return dict(counts)


def worker_state(status: str, reason: str) -> str | None:
    """active, pending or failed for a worker pod's shown status (None: not counted)."""
    if reason == NOT_CREATED:
        return None  # the job expects it, the operator has not created it
    if status == "Running":
        return "active"
    if status == "Pending":
        return "pending"
    if status in ("Failed", "Unknown"):
        return "failed"
    return None  # Succeeded, Terminating


def worker_counts(summaries: Iterable[JobSummary]) -> dict[tuple[str, str, str], int]:
    """{(project, type, state): worker pods} over every pod but the MPIJob launcher."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for s in summaries:
        key = (s.namespace, _type(s))
        for state in WORKER_STATES:
            counts.setdefault((*key, state), 0)
        for replica in s.workers:
            state = worker_state(replica.status, replica.reason)
            if state is not None:
                counts[(*key, state)] += 1
    return dict(counts)


def pending_since(summary: JobSummary) -> datetime | None:
    """When a Pending job started waiting: its creation, or its last resume."""
    since = summary.created
    for c in summary.conditions:
        if c.type == "Suspended" and not c.is_true and c.last_transition is not None \
                and (since is None or c.last_transition > since):
            since = c.last_transition
    return since


def pending_reason(job: Obj, summary: JobSummary,
                   diagnosis_of: DiagnosisOf = objects_only) -> str:
    """quota, insufficient_resources, queued, configuration (the diagnosis finds something
    that keeps it from starting as it is: never fits, refused, a missing volume...) or
    other: the job's story (odh.training.diagnosis.story), in a bounded label."""
    story = tell(summary, diagnosis_of(job, summary))
    return _WAIT_LABELS.get(wait_reason(summary, story), "other")


@dataclass(frozen=True)
class PendingJob:
    project: str
    type: str
    name: str
    reason: str
    seconds: float


def pending_jobs(items: Iterable[tuple[Obj, JobSummary]], now: datetime,
                 diagnosis_of: DiagnosisOf = objects_only) -> list[PendingJob]:
    """Every Pending job (not Suspended ones: they wait on purpose), how long it has waited
    and why (`diagnosis_of` each: what the caller knows of its pods and events)."""
    found = []
    for job, s in items:
        if s.status != JobStatus.PENDING:
            continue
        since = pending_since(s)
        seconds = max(0.0, (now - since).total_seconds()) if since else 0.0
        found.append(PendingJob(s.namespace, _type(s), s.name,
                                pending_reason(job, s, diagnosis_of), seconds))
    return found


@dataclass(frozen=True)
class QuotaSample:
    quota: str
    resource: str
    hard: float
    used: float

    @property
    def ratio(self) -> float | None:
        return self.used / self.hard if self.hard else None


def quota_samples(quota: Obj) -> list[QuotaSample]:
    """Each resource of a ResourceQuota: hard (spec) and used (status), as plain numbers
    (CPU in cores, memory in bytes, counts as counts)."""
    name = str(get_path(quota, ["metadata", "name"], "") or "")
    used = as_dict(get_path(quota, ["status", "used"]))
    samples = []
    for resource, hard in sorted(as_dict(get_path(quota, ["spec", "hard"])).items()):
        samples.append(QuotaSample(name, str(resource), float(amount(hard)),
                                   float(amount(used.get(resource, "0")))))
    return samples


def failure_reason(reason: str, message: str = "", cause_reason: str = "") -> str:
    """A failed job's reason as one of a bounded set of label values.

    The operators' reasons: MPIJob (v0.8.2) `BackoffLimitExceeded/<the failed launcher
    pod's reason>`, `MPIJobEvicted`, `DeadlineExceeded`, `MPIJobFailed`; the v1 kinds
    `<Kind>Failed`. `cause_reason` is the reason of the pod the dashboard found to explain
    the failure (odh.training.status.lifecycle.failure_replica: "OOMKilled" when Worker 2 ran out
    of memory, where the operator says BackoffLimitExceeded/Error). A specific reason is
    preferred to a generic one: the cause's first, then the operator's, then one the
    message names (OOMKilled...).
    """
    base, _, detail = (reason or "").partition("/")
    for candidate in (cause_reason, detail, base):
        normalized = _known(candidate)
        if normalized and normalized not in ("Error", "BackoffLimitExceeded"):
            return normalized
    for word in MESSAGE_HINTS:
        if word in (message or ""):
            return _known(word) or word
    for candidate in (detail, base, cause_reason):
        normalized = _known(candidate)
        if normalized:
            return normalized
    if not base:
        return "Unknown"
    if base.endswith("Failed"):
        return "Error"  # MPIJobFailed, PyTorchJobFailed...: the operator says no more
    return "Other"


def _known(reason: str) -> str:
    if not reason:
        return ""
    if reason in PULL_REASONS:
        return "ImagePullBackOff"
    if reason.endswith("Evicted"):  # MPIJobEvicted
        return "Evicted"
    return reason if reason in KNOWN_FAILURES else ""
