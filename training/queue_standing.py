"""Where jobs queued by Kueue stand, read with the viewer's token (odh/training/queues/standing.py):
the job page's Queue card, which fetches itself again over HTTP (`training-job-queue`)
whenever the page's socket is told that Kueue's Workloads moved (the watch hub watches
them: training/live/queue_subscriptions.py), and every REFRESH_SECONDS while the job waits
where no such word comes, so the position moves as the queue does (left out for jobs that
name no queue or have finished); and the job list's "Queued: 2 of 5 in gpu-queue", the
line of a row Kueue holds.

The card's expected start (odh/training/queues/start.py) needs each running job's end in
the same ClusterQueue, from its launcher's log (three reads per job): those ends are kept
ENDS_SECONDS per person, as the moment they fall, so a card refreshing every 10 s reads
each log at most every ENDS_SECONDS."""

from __future__ import annotations

import time

from django.core.cache import cache
from django.http import HttpRequest

from odh.training import errors
from odh.training.cluster.access import identity
from odh.training.cluster.client import ClusterClient
from odh.training.kinds import JobKind
from odh.training.queues.standing import QueueStanding, queued_lines
from odh.training.queues.start import EndsIn, progress_ends, read_standing
from odh.training.status.summary import JobSummary
from training import kueue_settings
from training.accounts import session
from training.projects import projects_for_user

REFRESH_SECONDS = 30
ENDS_SECONDS = 30


def remembered_ends(token: str, client: ClusterClient) -> EndsIn:
    """progress_ends, each answer kept ENDS_SECONDS for this person (see above)."""
    ends = progress_ends(client)

    def ends_in(namespace: str, kind: str, name: str) -> float | None:
        key = f"training-queue-end:{identity(token)}:{namespace}/{kind}/{name}"
        at = cache.get(key, default=False)
        if at is False:
            seconds = ends(namespace, kind, name)
            at = None if seconds is None else time.time() + seconds
            cache.set(key, at, ENDS_SECONDS)
        return None if at is None else max(0.0, at - time.time())

    return ends_in


def for_job(request: HttpRequest, client: ClusterClient, kind: JobKind, job: dict,
            summary: JobSummary) -> QueueStanding | None:
    """None: no queue, finished, or the cluster could not say (the page goes on without)."""
    if not summary.queue or summary.is_finished:
        return None
    try:
        visible = {p.name for p in projects_for_user(request, client)}
        return read_standing(client, kind, job, may_see=lambda ns: ns in visible,
                             ends_in=remembered_ends(session.token(request), client),
                             namespaces=visible, cluster_queue=kueue_settings.cluster_queue)
    except errors.ClusterError:
        return None


def positions_for_rows(client: ClusterClient, summaries: list[JobSummary]) -> dict[str, str]:
    """"Queued: 2 of 5 in gpu-queue" for the rows shown that Kueue holds, by
    "<ns>/<kind>/<name>" (odh.training.queues.standing.queued_lines, the person's token): each
    queue's pending list read once, not once per job."""
    return queued_lines(client, [(s.kind, s.namespace, s.name, s.uid, s.queue)
                                 for s in summaries if s.held_by_queue])
