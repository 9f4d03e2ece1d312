"""Every change a person makes to training jobs goes through here: create (from the wizard,
a clone or a retry, with the original suspended first where asked), suspend, resume and
delete, and the new volume claims a job is created with. One place does what each needs,
so no
path can skip it: the API server's dry run before a create (its schema and admission
checks, quota included, answer without anything being created), the audit row (and with
it the submissions counter of /metrics and the JSON log line), for every outcome.

A create goes the one way every create goes (odh.training.creating: the wizard's checks,
the quota, LimitRange and node check, the dry run, the create). Each function raises the
refusal (odh.training.creating.CreateRefused, or the cluster's ClusterError) after
auditing it; the views turn it into words for the page. An expired sign-in (401) is not
audited: nothing was attempted for a person the cluster no longer knows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.http import HttpRequest

from odh.training import creating, errors
from odh.training.cluster.access import Access
from odh.training.cluster.client import ClusterClient
from odh.training.kinds import JobKind
from odh.training.manifests.claims import ClaimNotCreated, NewClaim
from odh.training.manifests.claims import create_claims as make_claims
from odh.training.spec import JobSpec
from odh.training.status.lists import bulk
from odh.training.status.suspending import set_suspended
from training import audit
from training.permissions import person_may

log = logging.getLogger("training.mutations")


def _outcome(e: errors.ClusterError) -> str:
    return "denied" if isinstance(e, errors.Forbidden) else "failed"


def create(request: HttpRequest, client: ClusterClient, spec: JobSpec, verb: str = "create",
           detail: str = "") -> dict:
    """Create the job `spec` describes (of the kind it names) as the signed-in person
    (`verb`: create, clone or retry); the created object back. `detail` is kept in the audit
    row of a success (structured, e.g. "retry_of=<name>": the audit trail is read in every
    language)."""
    spec.created_by = request.user.get_username()
    kind = spec.kind
    try:
        # the one way to create: the checks every create gets, the dry run, the create
        created = creating.create(client, spec).object
    except errors.Unauthorized:
        raise
    except creating.CreateRefused as e:
        audit.record(request, verb, kind.kind, spec.namespace, spec.name, "failed", str(e))
        log.info("%s of %s/%s refused: %s", verb, spec.namespace, spec.name, e)
        raise
    except errors.ClusterError as e:
        audit.record(request, verb, kind.kind, spec.namespace, spec.name, _outcome(e),
                     e.message)
        log.info("%s of %s/%s refused: %s", verb, spec.namespace, spec.name, e.message)
        raise
    audit.record(request, verb, kind.kind, spec.namespace, spec.name, "success", detail)
    return created


CREATE_CLAIM = "create_claim"  # the audit verb of a new volume claim made with a job
CLAIM_KIND = "PersistentVolumeClaim"


def create_claims(request: HttpRequest, client: ClusterClient, namespace: str,
                  new: list[NewClaim], ours: list[str]) -> list[str]:
    """Create a job's new volume claims as the signed-in person, before the job
    (odh.training.manifests.claims.create_claims: those of `ours` that exist are used);
    one audit row per claim made or refused. The names made back; ClaimNotCreated raised."""
    try:
        made = make_claims(client, namespace, new, request.user.get_username(), ours)
    except ClaimNotCreated as e:
        for name in e.made:
            audit.record(request, CREATE_CLAIM, CLAIM_KIND, namespace, name, "success")
        audit.record(request, CREATE_CLAIM, CLAIM_KIND, namespace, e.claim,
                     _outcome(e.error), e.error.message)
        raise
    for name in made:
        audit.record(request, CREATE_CLAIM, CLAIM_KIND, namespace, name, "success")
    return made


def change(request: HttpRequest, verb: str, kind: JobKind, project: str, name: str,
           action: Callable[[], object], detail: str = "") -> None:
    """Make one change to an existing job (`verb`: suspend, resume, delete) with `action`,
    which calls the cluster as the person; audited whatever the outcome (`detail` kept in
    the row of a success)."""
    try:
        action()
    except errors.Unauthorized:
        raise
    except errors.Forbidden as e:
        audit.record(request, verb, kind.kind, project, name, "denied", e.message)
        e.namespace = project
        raise
    except errors.ClusterError as e:
        audit.record(request, verb, kind.kind, project, name, "failed", e.message)
        raise
    audit.record(request, verb, kind.kind, project, name, "success", detail)


BULK = "bulk"  # the audit row's detail of a change made among several at once


def change_each(request: HttpRequest, client: ClusterClient, action: bulk.Action,
                jobs: list[bulk.JobRef], visible: set[str]) -> list[bulk.Result]:
    """`action` on each of `jobs` in turn (the job list's ticks), each the way a job's own
    page makes it (`change`), with the person's token; a job in a project outside
    `visible` (the person's projects), or whose kind the person may not change there (a
    SelfSubjectAccessReview), is not sent. One audit row per job, whatever its outcome."""
    return [_change_one(request, client, action, job, visible) for job in jobs]


def may_change(request: HttpRequest, client: ClusterClient, action: bulk.Action,
               job: bulk.JobRef, visible: set[str]) -> bool:
    """May the person take `action` on `job`? (its project is theirs to see and the
    cluster lets them `update`/`delete` its kind there: the answer kept, as every other)"""
    return job.namespace in visible and person_may(
        request, client, job.namespace, Access(action.needs, job.kind.plural, job.kind.group))


def _change_one(request: HttpRequest, client: ClusterClient, action: bulk.Action,
                job: bulk.JobRef, visible: set[str]) -> bulk.Result:
    kind, project, name = job.kind, job.namespace, job.name
    seen = project in visible
    if not may_change(request, client, action, job, visible):
        audit.record(request, action.value, kind.kind, project, name, "denied",
                     f"{BULK}; may not {action.needs} {kind.plural}")
        return bulk.Result(job, bulk.Outcome.REFUSED, bulk.not_allowed_text(action, job, seen))
    done: list = []

    def act() -> None:
        if action is bulk.Action.DELETE:
            client.delete_job(kind, project, name)
        else:
            done.append(set_suspended(client, kind, project, name,
                                      action is bulk.Action.SUSPEND))
    try:
        change(request, action.value, kind, project, name, act, BULK)
    except errors.Unauthorized:
        raise
    except errors.NotFound:
        if action is bulk.Action.DELETE:
            return bulk.Result(job, bulk.Outcome.ALREADY, bulk.already_text(action))
        return bulk.Result(job, bulk.Outcome.REFUSED, bulk.gone_text())
    except errors.ClusterError as e:
        return bulk.Result(job, bulk.Outcome.REFUSED, e.message)
    if done and not done[0].changed:
        return bulk.Result(job, bulk.Outcome.ALREADY, bulk.already_text(action))
    return bulk.Result(job, bulk.Outcome.DONE, bulk.done_text(action))


@dataclass
class RetryRefused(Exception):
    """A retry that did not start: `refusal` is the create's (or the suspension's) refusal;
    `left_suspended` why the original, suspended for it, could not be resumed ("" when it
    was resumed, or never suspended)."""

    refusal: errors.ClusterError | creating.CreateRefused
    left_suspended: str = ""


def retry(request: HttpRequest, client: ClusterClient, spec: JobSpec, original: str,
          suspend_first: bool) -> dict:
    """Start `spec` as a new job, a retry of `original` in the same project: the original
    suspended first when asked (its Workers free what they hold for the new one), and
    resumed if the new one is refused after all. Each step audited; the created object
    back, or RetryRefused."""
    kind, project = spec.kind, spec.namespace

    def suspend(value: bool) -> None:
        change(request, "suspend" if value else "resume", kind, project, original,
               lambda: set_suspended(client, kind, project, original, value))

    suspended = False
    try:
        if suspend_first:
            suspend(True)
            suspended = True
        # structured, not a sentence: the audit trail is read in every language
        return create(request, client, spec, "retry", f"retry_of={original}")
    except errors.Unauthorized:
        raise
    except (errors.ClusterError, creating.CreateRefused) as e:
        left = ""
        if suspended:  # suspended for a job that was not created: back to work
            try:
                suspend(False)
            except errors.Unauthorized:
                raise
            except errors.ClusterError as resume_error:
                left = resume_error.message
        raise RetryRefused(e, left) from e
