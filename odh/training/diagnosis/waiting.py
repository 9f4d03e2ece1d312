"""Pending and Suspended jobs: why they wait and for how long, as the diagnosis tells it
(odh.training.diagnosis.story), for the administrator's waiting table and /metrics."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from odh.training.diagnosis import Diagnosis, Facts, diagnose
from odh.training.diagnosis.common import short_of_gpus
from odh.training.diagnosis.story import QUEUED, STARTING, SUSPENDED, Story, tell
from odh.training.durations import format_duration
from odh.training.i18n import LazyText, _
from odh.training.kinds import QUEUE_LABEL
from odh.training.paths import get_path
from odh.training.status.summary import JobStatus, JobSummary

Obj = dict[str, Any]
# (job, summary) -> its diagnosis, made from what the caller has of it (pods, events, nodes)
DiagnosisOf = Callable[[Obj, JobSummary], Diagnosis | None]

TOLD = 100  # the longest waiting jobs get their story told (a diagnosis each)


class WaitReason:
    QUOTA = "quota"
    GPUS = "gpus"
    RESOURCES = "resources"
    QUEUED = QUEUED
    SUSPENDED = SUSPENDED
    STARTING = STARTING
    PROBLEM = "problem"  # the diagnosis names something that keeps it from starting


def wait_reason_title(reason: str) -> str:
    return {
        WaitReason.QUOTA: _("Quota exceeded"),
        WaitReason.GPUS: _("Not enough GPUs"),
        WaitReason.RESOURCES: _("Not enough CPU or memory"),
        WaitReason.QUEUED: _("Queued"),
        WaitReason.SUSPENDED: _("Suspended"),
        WaitReason.STARTING: _("Starting"),
    }.get(reason, "")


@dataclass
class WaitingJob:
    summary: JobSummary
    story: Story | None  # None: past the TOLD longest waiting, not diagnosed
    queue: str
    waited_seconds: float

    @property
    def reason(self) -> str:
        return wait_reason(self.summary, self.story)

    @property
    def title(self) -> str | LazyText:
        return self.story.title if self.story is not None else wait_reason_title(self.reason)

    @property
    def detail(self) -> str | LazyText:
        return self.story.line if self.story is not None else self.summary.lifecycle_step

    @property
    def waited(self) -> str:
        return format_duration(self.waited_seconds)


def _queue(job: Obj) -> str:
    return str(get_path(job, ["metadata", "labels", QUEUE_LABEL], "") or "")


def objects_only(job: Obj, summary: JobSummary) -> Diagnosis | None:
    """The diagnosis of what the summary itself says (no pods, events or nodes at hand)."""
    return diagnose(Facts(job, [], [], now=summary.observed_at, summary=summary))


def wait_reason(summary: JobSummary, story: Story | None) -> str:
    """A WaitReason for the job's story (from its status alone without one)."""
    if story is None:
        if summary.held_by_queue:
            return WaitReason.QUEUED
        return WaitReason.SUSPENDED if summary.status == JobStatus.SUSPENDED \
            else WaitReason.STARTING
    if story.scenario == "quota":
        return WaitReason.QUOTA
    if story.scenario == "waiting-for-capacity":
        return WaitReason.GPUS if short_of_gpus(summary.replicas) else WaitReason.RESOURCES
    if story.scenario in (QUEUED, SUSPENDED, STARTING):
        return story.scenario
    return WaitReason.PROBLEM if story.is_problem else WaitReason.STARTING


def waiting_jobs(jobs: Iterable[tuple[Obj, JobSummary]], now: datetime,
                 diagnosis_of: DiagnosisOf | None = objects_only,
                 told: int = TOLD, queued: dict[str, str] | None = None) -> list[WaitingJob]:
    """Jobs that are Pending or Suspended, longest waiting first; the first `told` with
    their story (`diagnosis_of` each; `queued`: where those Kueue holds stand, by
    "<ns>/<kind slug>/<name>"), the rest with their status alone."""
    queued = queued or {}
    waiting = []
    for job, summary in jobs:
        if summary.status not in (JobStatus.PENDING, JobStatus.SUSPENDED):
            continue
        since = summary.created
        if summary.status == JobStatus.SUSPENDED and summary.since is not None:
            since = summary.since
        waited = max(0.0, (now - since).total_seconds()) if since else 0.0
        waiting.append((job, WaitingJob(summary, None, _queue(job), waited)))
    waiting.sort(key=lambda w: (-w[1].waited_seconds, w[1].summary.namespace,
                                w[1].summary.name))
    for job, entry in waiting[:told]:
        s = entry.summary
        entry.story = tell(s, diagnosis_of(job, s) if diagnosis_of is not None else None,
                           queued.get(f"{s.namespace}/{s.kind.slug}/{s.name}"))
    return [entry for _job, entry in waiting]
