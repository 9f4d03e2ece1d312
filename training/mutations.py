"""Every change a person makes to training jobs goes through here: create (from the wizard,
a clone or a retry, with the original suspended first where asked), suspend, resume and
delete. One place does what each needs, so no
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
from odh.training.cluster.client import ClusterClient
from odh.training.kinds import JobKind
from odh.training.spec import JobSpec
from odh.training.status.suspending import set_suspended
from training import audit

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


def change(request: HttpRequest, verb: str, kind: JobKind, project: str, name: str,
           action: Callable[[], object]) -> None:
    """Make one change to an existing job (`verb`: suspend, resume, delete) with `action`,
    which calls the cluster as the person; audited whatever the outcome."""
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
    audit.record(request, verb, kind.kind, project, name, "success")


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
