"""The administrators' view of Kueue's queues at /cluster/queues/ (odh/training/queue_admin):
per ClusterQueue its quota per flavor (nominal, used, borrowed, the cohort's limits), the
admitted Workloads and the pending ones in Kueue's order with their waits and reasons.
Live: the page's socket (`queue=*`) is told when a Workload moved, and the `#queues` part
is fetched again at once (else every REFRESH_SECONDS, the fallback where the watch hub
cannot watch Workloads).

For the people who may see the cluster pages (training/views/cluster/overview.py), read with their
own token: the ClusterQueues, every Workload (one list) and each ClusterQueue's pending
list (Kueue's visibility API). The page fetches its `#queues` part again every
REFRESH_SECONDS, so an administrator watches a queue drain without reloading.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from odh.training import errors
from odh.training.overviews.queues import QueueView, queue_views
from training.cluster import user_client
from training.live.queue_subscriptions import EVERY_QUEUE
from training.live.subscriptions import socket_url
from training.permissions import cluster_admin
from training.views.cluster.overview import forbidden_page
from training.views.pages import render_page

REFRESH_SECONDS = 30


def _read(client) -> tuple[list[QueueView] | None, str]:
    """(views, problem): views None when the cluster has no Kueue; a problem in words when
    Kueue is there but this person may not read what the page needs."""
    try:
        cluster_queues = client.list_cluster_queues()
        if cluster_queues is None:
            return None, ""
        workloads = client.list_workloads()
    except errors.Forbidden:
        return [], _("You may not read Kueue's ClusterQueues and Workloads in every project: "
                     "the queues need both.")
    pending: dict[str, list[dict] | None] = {}
    for cq in cluster_queues:
        name = str((cq.get("metadata") or {}).get("name") or "")
        try:
            pending[name] = client.pending_workloads(cluster_queue=name)
        except errors.ClusterError:
            pending[name] = None  # the view says its order is unknown
    return queue_views(cluster_queues, workloads, pending), ""


@require_GET
def cluster_queues(request: HttpRequest) -> HttpResponse:
    with user_client(request) as client:
        if not cluster_admin(request, client):
            return forbidden_page(request)
        views, problem = _read(client)
    context = {"queues": views, "problem": problem, "now": datetime.now(UTC),
               "refresh": REFRESH_SECONDS, "live_url": socket_url(queues=[EVERY_QUEUE])}
    return render_page(request, "training/cluster_queues.html", context, "queues")
