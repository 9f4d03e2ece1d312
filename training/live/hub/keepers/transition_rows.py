"""The rows behind the transition recorder (training/live/hub/keepers/transitions.py):
a sighting of a job, and what claiming it does in the database (`JobState`,
`JobTransition`, the history record, the audit rows of jobs the dashboard did not make,
the prune of deleted jobs' rows), each a function of the ORM the recorder is given."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from odh.training.status.summary import JobStatus, JobSummary

if TYPE_CHECKING:
    from django.db.models import QuerySet

log = logging.getLogger("training.live.hub")

Obj = dict[str, Any]
DELETED = "Deleted"
# what the audit trail waits for before it says a creation or deletion was "seen": the
# dashboard writes its own row just after the cluster answered
AUDIT_GRACE = timedelta(seconds=10)
# a deleted job's JobState row outlives its deletion by this much: the watchers still
# sighting it by then find the transition to "Deleted" instead (claim_with_orm)
PRUNE_AFTER = timedelta(days=1)
# within one second (the API's timestamps), the order a job moves in
_RANK = {"Pending": 0, "Suspended": 1, "Running": 2, "Succeeded": 3, "Failed": 3, DELETED: 4}
FINISHED = {str(JobStatus.SUCCEEDED), str(JobStatus.FAILED)}


@dataclass(frozen=True)
class Sighting:
    """A job as one watcher saw it: its status and when the job says that began."""

    uid: str
    namespace: str
    kind: str
    name: str
    status: str
    since: datetime
    created_by: str = ""
    created: datetime | None = None
    headline: str = ""
    job: Obj | None = None  # the object, for the history record of a finished job
    summary: JobSummary | None = None
    # the diagnosis' scenario and culprit (whether a failure is the platform's: retries)
    scenario: str = ""
    culprit: str = ""

    @classmethod
    def of(cls, job: Obj, summary: JobSummary, headline: str = "", scenario: str = "",
           culprit: str = "") -> Sighting:
        since = summary.since or summary.created or summary.observed_at
        return cls(uid=summary.uid, namespace=summary.namespace, kind=summary.kind.kind,
                   name=summary.name, status=str(summary.status), since=since,
                   created_by=summary.created_by, created=summary.created,
                   headline=headline[:500], job=job, summary=summary, scenario=scenario,
                   culprit=culprit)

    def deleted(self, at: datetime) -> Sighting:
        return Sighting(uid=self.uid, namespace=self.namespace, kind=self.kind,
                        name=self.name, status=DELETED, since=at, created_by=self.created_by,
                        created=self.created)


@dataclass(frozen=True)
class Claim:
    """What one claim did: the transition recorded (None: another watcher had, or nothing
    moved) and whether the history record was written by it."""

    transition: Any = None
    history_written: bool = False


def _later(sighting: Sighting, status: str, since: datetime | None) -> bool:
    """Is the sighting newer than the recorded (status, since)?"""
    if since is None:
        return True
    return (sighting.since, _RANK.get(sighting.status, 0)) > (since, _RANK.get(status, 0))


def claim_with_orm(sighting: Sighting, project_uid: str = "") -> Claim:
    """Record the sighting's transition unless another watcher did (or nothing moved)."""
    from training.unlocked import unlocked

    return unlocked(lambda: _claim(sighting, project_uid))


def _claim(sighting: Sighting, project_uid: str) -> Claim:
    from django.db import IntegrityError, transaction

    from training.live.hub.keepers.retries import queue_retry
    from training.models import JobHistory, JobState, JobTransition
    from training.notifications import queue_for

    for _attempt in range(3):
        try:
            with transaction.atomic():
                state = JobState.objects.select_for_update().filter(uid=sighting.uid).first()
                if state is None:
                    if sighting.status == DELETED:
                        return Claim()  # never recorded, or pruned: nothing to say of its end
                    if JobTransition.objects.filter(uid=sighting.uid,
                                                    to_status=DELETED).exists():
                        return Claim()  # its row was pruned: deleted stays deleted
                    JobState.objects.create(
                        uid=sighting.uid, namespace=sighting.namespace, kind=sighting.kind,
                        name=sighting.name, status=sighting.status, since=sighting.since)
                    before = ""
                else:
                    if state.status in (sighting.status, DELETED) or \
                            not _later(sighting, state.status, state.since):
                        return Claim()
                    moved = JobState.objects.filter(
                        pk=state.pk, status=state.status, since=state.since).update(
                        status=sighting.status, since=sighting.since,
                        updated=datetime.now(UTC))
                    if moved != 1:
                        return Claim()
                    before = state.status
                transition = JobTransition.objects.create(
                    uid=sighting.uid, namespace=sighting.namespace, kind=sighting.kind,
                    name=sighting.name, created_by=sighting.created_by, from_status=before,
                    to_status=sighting.status, at=sighting.since,
                    job_created=sighting.created, headline=sighting.headline,
                    audited=not (before == "" or sighting.status == DELETED))
                queue_for(transition)  # its notifications, once with it
                queue_retry(transition, sighting)  # and its automatic retry, if asked for
                written = False
                if sighting.status in FINISHED and sighting.job is not None:
                    _record, written = JobHistory.record_finished(
                        sighting.job, sighting.summary, project_uid)
                return Claim(transition, written)
        except IntegrityError:
            continue  # another watcher inserted the first row meanwhile: read it again
    return Claim()


def due_for_audit(now: datetime) -> QuerySet:
    """The creations and deletions not yet told to the audit trail, past `AUDIT_GRACE`,
    first recorded first: the audit pass's query (the index jobtransition_unaudited_idx)."""
    from training.models import JobTransition

    return JobTransition.objects.filter(
        audited=False, recorded__lte=now - AUDIT_GRACE).order_by("id")


def audit_seen_with_orm(now: datetime) -> int:
    """Tell the audit trail of the creations and deletions the dashboard did not make, once
    each (the transition is marked audited by a conditional update); how many were told."""
    from django.db import transaction

    from training.models import AuditEvent, JobTransition

    told = 0
    for transition in due_for_audit(now)[:200]:
        with transaction.atomic():
            if JobTransition.objects.filter(pk=transition.pk, audited=False).update(
                    audited=True) != 1:
                continue  # another watcher told it
            deleted = transition.to_status == DELETED
            verbs = ("delete",) if deleted else ("create", "clone", "retry")
            around = transition.at if deleted else (transition.job_created or transition.at)
            done_here = AuditEvent.objects.filter(
                project=transition.namespace, kind=transition.kind, name=transition.name,
                verb__in=verbs, outcome=AuditEvent.Outcome.SUCCESS,
                created__gte=around - timedelta(minutes=5)).exists()
            if done_here:
                continue
            AuditEvent.objects.create(
                username="" if deleted else transition.created_by, groups=[],
                project=transition.namespace, kind=transition.kind, name=transition.name,
                verb=verbs[0], outcome=AuditEvent.Outcome.SEEN,
                detail=f"seen_by=watcher at={transition.at.isoformat()}")
            told += 1
    return told


def prune_with_orm(now: datetime) -> int:
    """Delete the `JobState` rows of the jobs deleted more than `PRUNE_AFTER` before `now`
    (their transitions stay); how many were deleted."""
    from training.models import JobState

    pruned, _per_model = JobState.objects.filter(
        status=DELETED, updated__lt=now - PRUNE_AFTER).delete()
    return pruned


def known_with_orm() -> dict[str, str]:
    """uid -> the status last recorded, for every job not deleted."""
    from training.models import JobState

    return dict(JobState.objects.exclude(status=DELETED).values_list("uid", "status"))


def rows_of_kinds_with_orm(kinds: Iterable[str], before: datetime) -> list[Sighting]:
    """The recorded jobs (not deleted) of these kinds whose rows were last written before
    `before`, as sightings of their last status."""
    from training.models import JobState

    return [Sighting(uid=s.uid, namespace=s.namespace, kind=s.kind, name=s.name,
                     status=s.status, since=s.since or datetime.now(UTC))
            for s in JobState.objects.exclude(status=DELETED).filter(
                kind__in=list(kinds), updated__lt=before)]


