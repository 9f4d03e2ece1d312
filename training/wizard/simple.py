"""The wizard's simple mode: only a job's name, image, command, Workers and GPUs (and its
project), on one step before the review. It is how a person's first job starts (no job
of theirs in the dashboard's history, none of theirs in the project now); "Show all the
options" leaves it for the full wizard, keeping everything typed (the draft holds it)."""

from __future__ import annotations

import logging

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.kinds import CREATED_BY_ANNOTATION, JobKind, default_kind
from training.models import JobHistory
from training.wizard.formfields import SIMPLE_KEY
from training.wizard.formfields import SIMPLE_RESOURCE_FIELDS as RESOURCE_FIELDS

__all__ = ["RESOURCE_FIELDS", "SIMPLE_KEY", "first_job", "is_simple"]

log = logging.getLogger("training.wizard")

# The project's jobs looked at; a project with more is a busy one, where the person has
# seen jobs made: the full wizard.
PAGE = 100


def is_simple(data: dict) -> bool:
    return bool(data.get(SIMPLE_KEY))


def first_job(client: ClusterClient, username: str, namespace: str, kind: JobKind) -> bool:
    """Is this the person's first job: none in the dashboard's history, none of theirs in
    the project? The simple mode is offered for the default kind's jobs only; when the
    project's jobs cannot be read, or it holds more than `PAGE` (one page is read, never
    the whole list), the full wizard (nobody is held back)."""
    if kind != default_kind() or not namespace:
        return False
    if JobHistory.objects.filter(created_by=username).exists():
        return False
    try:  # one bounded request: a busy project is not read whole for this
        jobs, more = client.list_jobs_page(kind, namespace, PAGE)
    except errors.ClusterError as e:
        log.info("cannot tell whether %s has jobs in %s: %s", username, namespace, e.message)
        return False
    theirs = any(((job.get("metadata") or {}).get("annotations") or {})
                 .get(CREATED_BY_ANNOTATION) == username for job in jobs)
    return not theirs and not more
