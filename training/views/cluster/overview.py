"""The admin overview at /cluster/: capacity, quota use per project, waiting jobs.

Only for people the cluster says may list ResourceQuotas in every namespace (a
SelfSubjectAccessReview made with their token); everyone else gets the 403 page. Where the
watch hub runs in this process and the person may list pods and every job kind in every
project, the jobs, their pods and the quotas come from its index (summarized once per
change, not per visit: training/live/hub/snapshots.py `hub_cluster_state`) and only nodes,
other pods and Kueue's queues are read with their token; else every read is made with
their own token. The numbers come from `odh.training.overviews.cluster`.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from odh.training.cluster.access import Access
from odh.training.kinds import JobKind
from odh.training.overviews import cluster as capacity
from odh.training.quantity import GPU_RESOURCE
from odh.training.queues.standing import queued_lines
from training.cluster import user_client
from training.live.cluster_subscriptions import SOCKET_URL
from training.live.hub import snapshots as hub_snapshots
from training.models import JobHistory
from training.permissions import EVERYWHERE, LIST_PODS_EVERYWHERE, cluster_admin, person_may
from training.projects import served_kinds
from training.views.cluster import costs
from training.views.pages import render_page


def forbidden_page(request: HttpRequest) -> HttpResponse:
    return render(request, "training/errors/403.html", {
        "explanation": _("The cluster pages are for cluster administrators: people whom the "
                         "cluster allows to list resource quotas in every project. Ask an "
                         "OpenShift administrator if you need them."),
        "request_id": getattr(request, "request_id", "-")}, status=403)


WAITING_SHOWN = 100


def _list_everywhere(kind: JobKind) -> Access:
    return Access("list", kind.plural, kind.group)


def _history_records(now: datetime) -> list[capacity.HistoryRecord]:
    since = now - capacity.SUCCESS_WINDOW
    rows = JobHistory.objects.filter(finished__gte=since, finished__lte=now).values_list(
        "uid", "kind", "outcome", "finished")
    return [capacity.HistoryRecord(*row) for row in rows]


def _chart_data(result: capacity.Overview) -> dict:
    """What static/js/cluster.js draws (the same numbers are in the tables)."""
    models = result.capacity.gpu_models
    resources = [(GPU_RESOURCE, _("GPUs")), ("cpu", _("CPUs")), ("memory", _("Memory")),
                 ("pods", _("Pods")), (capacity.MPIJOB_COUNT, _("MPIJobs"))]
    series = []
    for key, title in resources:
        lines = [p.quota_for(key) for p in result.projects]
        if any(lines):
            series.append({"name": title,
                           "percent": [q.percent if q else None for q in lines],
                           "numbers": [q.numbers if q else "" for q in lines]})
    return {
        "gpu": {"models": [m.label for m in models],
                "used": [float(m.requested) for m in models],
                "free": [float(m.free) for m in models],
                "total": [float(m.allocatable) for m in models],
                "usedName": _("In use"), "freeName": _("Free"), "axis": _("GPUs")},
        "quota": {"projects": [p.namespace for p in result.projects], "series": series,
                  "axis": _("Quota used (%)"), "threshold": 90,
                  "thresholdName": _("90%: flagged")},
    }


@require_GET
def cluster_overview(request: HttpRequest) -> HttpResponse:
    with user_client(request) as client:
        if not cluster_admin(request, client):
            return forbidden_page(request)
        kinds = served_kinds(client)
        now = datetime.now(UTC)
        state = None
        if all(person_may(request, client, EVERYWHERE, access)
               for access in (LIST_PODS_EVERYWHERE, *(_list_everywhere(k) for k in kinds))):
            state = hub_snapshots.hub_cluster_state(client, kinds, now)  # the hub's index
        if state is None:
            state = capacity.read_cluster(client, kinds, now)
        # where the jobs Kueue holds stand, as their pages and rows say it
        state.queued = queued_lines(client, [(s.kind, s.namespace, s.name, s.uid, s.queue)
                                             for _job, s in state.jobs if s.held_by_queue])
    result = capacity.overview(state, _history_records(state.observed_at))
    period = costs.period_of(request, state.observed_at)
    context = {**costs.cost_context(period, costs.chargeback(period), ("project", "person"),
                                    reverse("training-cluster-overview"),
                                    reverse("training-cluster-chargeback"),
                                    reverse("training-cluster-prices"),
                                    costs.running_now(state.jobs, state.observed_at)),
               "overview": result, "chart_data": _chart_data(result),
               # the longest waiting; with thousands waiting the rest are counted
               "waiting_shown": f":{WAITING_SHOWN}",
               "waiting_more": max(0, len(result.waiting) - WAITING_SHOWN),
               "now": state.observed_at, "statuses": capacity.STATUSES,
               "live_url": SOCKET_URL}
    return render_page(request, "training/cluster_overview.html", context, "cluster-numbers")
