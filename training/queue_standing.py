"""The job page's Queue card: where a job queued by Kueue stands, read with the viewer's
token (odh/training/queueing.py). The card refreshes itself over HTTP every
REFRESH_SECONDS while the job waits (`training-job-queue`), so the position moves as
the queue does; it is left out for jobs that name no queue or have finished."""

from __future__ import annotations

from django.http import HttpRequest

from odh.training import errors
from odh.training.client import ClusterClient
from odh.training.kinds import JobKind
from odh.training.queueing import QueueStanding, read_standing
from odh.training.summary import JobSummary

from .projects import projects_for_user

REFRESH_SECONDS = 10


def for_job(request: HttpRequest, client: ClusterClient, kind: JobKind, job: dict,
            summary: JobSummary) -> QueueStanding | None:
    """None: no queue, finished, or the cluster could not say (the page goes on without)."""
    if not summary.queue or summary.is_finished:
        return None
    try:
        visible = {p.name for p in projects_for_user(request, client)}
        return read_standing(client, kind, job, may_see=lambda ns: ns in visible)
    except errors.ClusterError:
        return None
