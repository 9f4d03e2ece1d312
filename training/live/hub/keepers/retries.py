"""Automatic retries of failed jobs (MPIJob-033), the watcher's part: decided once, started
once (the wish, the decision and the clone are odh/training/manifests/retries.py and
odh/training/diagnosis/retryable.py).

- Decided: `queue_retry(transition, sighting)` runs in the database transaction that
  records a job's transition to Failed (training/live/hub/keepers/transitions.py), with the
  diagnosis the hub made of the same objects: a `JobRetry` row when the job asked for
  retries, has retries left and failed as it asked (the platform's failures, or all). The
  unique constraints (first job's uid and attempt; the failed job's uid) make a second row
  impossible, whichever watcher recorded the transition and whenever.
- Started: by `RetryStarter`, in the process that runs the hub (runwatcher, or the
  embedded hub), never in a web request, once the row is `due` (the back-off:
  `RETRY_BACKOFF_SECONDS * 2^(attempt-1)` after the failure). Each attempt is claimed
  first (`claimed_until`, a conditional update: only the watcher whose update changed the
  row starts it); a watcher killed between the create and the row's update leaves the
  claim to expire, and the next finds the job there (409 Conflict): started, not twice.
- Whose identity: the person who created the first job is not signed in when it fails,
  so the watcher creates the retry with its own service account (deploy/base/
  rbac-watcher.yaml grants create on the job kinds for this alone), records that person as
  the retry's creator (its `opendatahub.io/username` annotation, as for any job) and
  writes the audit row in their name with `by=watcher`. Before that, a SubjectAccessReview
  (made with the same account, as notifications do) asks whether that person, with the
  groups the audit trail last saw them with, may still create jobs of the kind in the
  project: if not, nothing is created and the row says why. The retry goes through the
  one create path (odh.training.creating: validation, quota and LimitRange check, the
  create), so a retry the project has no room for is refused like any other job.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext as _

from odh.training import creating, errors
from odh.training.diagnosis.retryable import decide
from odh.training.manifests.retries import (
    backoff_seconds,
    job_policy,
    lineage_of,
    retry_name,
    retry_spec,
)
from odh.training.spec import ManifestError
from training.live.hub.background import Background

if TYPE_CHECKING:
    from odh.training.cluster.client import ClusterClient
    from odh.training.kinds import JobKind
    from training.live.hub.keepers.transitions import Sighting

log = logging.getLogger("training.live.hub")

POLL_SECONDS = 1.0
CLAIM_SECONDS = 120  # longer than one create may take; a killed watcher's claim expires


def _utcnow() -> datetime:
    return datetime.now(UTC)


def queue_retry(transition: Any, sighting: Sighting) -> Any:
    """The retry a failure asks for (in the transaction recording it), or None."""
    from training.models import JobRetry

    job = sighting.job
    if transition.to_status != "Failed" or not job:
        return None
    policy = job_policy(job)
    lineage = lineage_of(job)
    decision = decide(policy, lineage.attempt, sighting.scenario, sighting.culprit)
    log.info("automatic retry of %s/%s (%s, %s): %s", sighting.namespace, sighting.name,
             sighting.scenario or "undiagnosed", policy, decision.why)
    if not decision.retry or not lineage.first_uid:
        return None
    workers = 1
    try:
        workers = max(retry_spec(job, decision.attempt).workers, 1)
    except (ManifestError, ValueError) as e:
        log.warning("automatic retry of %s/%s: cannot read it (%s)", sighting.namespace,
                    sighting.name, e)
        return None
    wait = timedelta(seconds=backoff_seconds(decision.attempt,
                                             float(settings.RETRY_BACKOFF_SECONDS)))
    retry, _created = JobRetry.objects.get_or_create(
        original_uid=lineage.first_uid, attempt=decision.attempt, defaults={
            "retries": policy.retries, "namespace": sighting.namespace,
            "kind": sighting.kind, "original": lineage.first, "failed": sighting.name,
            "failed_uid": sighting.uid,
            "name": retry_name(lineage.first, decision.attempt, workers),
            "created_by": transition.created_by, "scenario": sighting.scenario,
            "headline": sighting.headline[:500], "spec": job,
            "due": max(sighting.since, _utcnow()) + wait})
    return retry


# -- claiming and starting -----------------------------------------------------------------------
def claim_due(limit: int, now: datetime | None = None) -> list[tuple[int, datetime]]:
    """Claim up to `limit` retries due now: (id, the claim's end) of those this caller won."""
    from django.db.models import Q

    from training.models import JobRetry
    from training.unlocked import unlocked

    now = now or _utcnow()
    until = now + timedelta(seconds=CLAIM_SECONDS)
    due = JobRetry.objects.filter(state=JobRetry.State.WAITING, due__lte=now).filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)).order_by(
        "due", "id").values_list("id", "claimed_until")[:limit]
    won = []
    for pk, claimed in due:
        moved = unlocked(lambda pk=pk, claimed=claimed: JobRetry.objects.filter(
            pk=pk, state=JobRetry.State.WAITING, claimed_until=claimed).update(
            claimed_until=until))
        if moved == 1:
            won.append((pk, until))
    return won


def _groups_of(username: str) -> list[str]:
    """The person's groups as the audit trail last saw them (SubjectAccessReviews need
    them: a project shared with a group)."""
    from training.models import AuditEvent

    found = AuditEvent.objects.filter(username=username).exclude(
        detail__contains="by=watcher").order_by("-id").values_list("groups", flat=True).first()
    return list(found or [])


def start(pk: int, claim: datetime, client_factory: Callable[[], ClusterClient], *,
          clock: Callable[[], datetime] = _utcnow) -> str:
    """Start one claimed retry; its state after."""
    from training.models import AuditEvent, JobRetry
    from training.unlocked import unlocked

    retry = JobRetry.objects.filter(pk=pk).first()
    if retry is None:
        return "gone"

    def finish(state: str, error: str = "") -> str:
        def write() -> None:
            with transaction.atomic():
                if not JobRetry.objects.filter(pk=pk, claimed_until=claim).update(
                        state=state, claimed_until=None, last_error=error[:1000],
                        started=clock() if state == JobRetry.State.STARTED else None):
                    return  # the claim expired and another watcher has it
                AuditEvent.objects.create(
                    username=retry.created_by, groups=[], project=retry.namespace,
                    kind=retry.kind, name=retry.name, verb="retry",
                    outcome="success" if state == JobRetry.State.STARTED else "failed",
                    detail=f"retry_of={retry.failed} attempt={retry.attempt} by=watcher"
                           + (f" {error}" if error else ""))
        unlocked(write)
        log.info("automatic retry %s/%s (attempt %d of %s): %s %s", retry.namespace,
                 retry.name, retry.attempt, retry.original, state, error)
        return state

    with translation.override(settings.LANGUAGE_CODE):  # the refusals' words
        return _start(retry, client_factory, finish)


def _start(retry: Any, client_factory: Callable[[], ClusterClient],
           finish: Callable[..., str]) -> str:
    from training.models import JobRetry

    try:
        spec = retry_spec(retry.spec, retry.attempt)
    except (ManifestError, ValueError) as e:
        return finish(JobRetry.State.REFUSED, str(e))
    spec.name = retry.name
    with client_factory() as client:
        kind = spec.kind
        if not retry.created_by or not client.subject_may(
                retry.created_by, _groups_of(retry.created_by), "create", kind.plural,
                kind.group, namespace=retry.namespace):
            return finish(JobRetry.State.REFUSED, _(
                "%(user)s may no longer create %(kind)s jobs in project %(project)s, so the "
                "job was not retried.") % {"user": retry.created_by or "?", "kind": kind.kind,
                                           "project": retry.namespace})
        if _made_already(client, retry, kind):
            # this watcher (or another) created it, and was stopped before it said so
            return finish(JobRetry.State.STARTED)
        try:
            creating.create(client, spec, created_by=retry.created_by)
        except errors.Conflict:  # made meanwhile: by a watcher whose claim had expired
            if _made_already(client, retry, kind):
                return finish(JobRetry.State.STARTED)
            raise
        except creating.CreateRefused as e:
            return finish(JobRetry.State.REFUSED, str(e))
        except errors.ClusterError as e:
            if 400 <= e.status < 500 and e.status not in (408, 429):
                return finish(JobRetry.State.REFUSED, e.message)
            raise  # the cluster away: the claim expires and it is tried again
    return finish(JobRetry.State.STARTED)


def _made_already(client: ClusterClient, retry: Any, kind: JobKind) -> bool:
    """Is the retry there already, as a watcher made it (the same first job and attempt)?
    A job of that name that is not this retry is refused by the create as any name taken."""
    try:
        job = client.get_job(kind, retry.namespace, retry.name)
    except errors.NotFound:
        return False
    lineage = lineage_of(job)
    return (lineage.first_uid, lineage.attempt) == (retry.original_uid, retry.attempt)


class RetryStarter(Background):
    """Starts the retries due, one at a time (they are rare), in the hub's process."""

    name = "hub-retries"

    def __init__(self, client_factory: Callable[[], ClusterClient] | None = None, *,
                 claim_due: Callable[[int], list[tuple[int, datetime]]] = claim_due,
                 poll: float = POLL_SECONDS) -> None:
        super().__init__()
        self.client_factory = client_factory
        self.claim_due = claim_due
        self.poll = poll
        self.outcomes: dict[str, int] = {}
        self.errors = 0
        self.last_error = ""

    def stats(self) -> dict[str, Any]:
        return {"outcomes": dict(self.outcomes), "errors": self.errors,
                "last_error": self.last_error}

    def wake(self) -> None:
        with self._cond:
            self._cond.notify()

    def run(self) -> None:
        from django.db import close_old_connections, connection

        try:
            while not self.stopping:
                close_old_connections()
                try:
                    for pk, claim in self.claim_due(4):
                        if self.stopping or self.client_factory is None:
                            break
                        outcome = start(pk, claim, self.client_factory)
                        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
                except Exception as e:  # the database or the cluster away: next poll
                    self.errors += 1
                    self.last_error = f"{type(e).__name__}: {e}"
                    log.warning("automatic retries: %s", self.last_error)
                finally:
                    close_old_connections()
                with self._cond:
                    self._cond.wait(self.poll)
        finally:
            connection.close()
