"""A project's own page, /projects/<project>/: its quota's use, its jobs by status, who and
what uses it most, GPU-hours and cost over a period. Read with the person's own token:
whoever may list the project's jobs sees it (not only administrators)."""

from __future__ import annotations

from datetime import UTC, datetime

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from odh.training import errors
from odh.training.cluster.access import Access
from odh.training.cluster.api import is_namespace_name
from odh.training.overviews.projects import jobs_by_status, quota_parts
from odh.training.status import queries
from odh.training.status.summary import JobStatus
from training.cluster import user_client
from training.models import JobHistory
from training.permissions import cluster_admin, person_may
from training.projects import project_uid, served_kinds
from training.views.cluster import costs
from training.views.pages import render_page

TOP = 10


def _refused(request: HttpRequest, project: str) -> HttpResponse:
    return render(request, "training/errors/403.html", {
        "explanation": _("You may not list the training jobs of project %(project)s, so its "
                         "page is not shown. Ask one of its administrators to add you to "
                         "it.") % {"project": project},
        "request_id": getattr(request, "request_id", "-")}, status=403)


def _gpus_now(summaries, key) -> list[tuple[str, int]]:
    """GPUs the running jobs hold, by `key` (person or job), most first."""
    totals: dict[str, int] = {}
    for s in summaries:
        if s.status == JobStatus.RUNNING and s.gpus:
            totals[key(s)] = totals.get(key(s), 0) + s.gpus
    return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]


@require_GET
def project_page(request: HttpRequest, project: str) -> HttpResponse:
    if not is_namespace_name(project):
        raise Http404(project)
    with user_client(request) as client:
        kinds = [k for k in served_kinds(client)
                 if person_may(request, client, project, Access("list", k.plural, k.group))]
        if not kinds:
            return _refused(request, project)
        listing = queries.list_summaries(client, [project], kinds)
        try:
            quotas = client.list_quotas(project)
        except errors.Forbidden:
            quotas = None
        try:
            pods = client.list_pods(project)
        except errors.Forbidden:
            pods = []
        uid = project_uid(request, client, project)
        # the quota is changed on the cluster pages, by their people only (quota_admin.py)
        changes_quota = cluster_admin(request, client)
    now = datetime.now(UTC)
    summaries = listing.summaries
    period = costs.period_of(request, now)
    records = JobHistory.of_project(project, uid).filter(kind__in=[k.kind for k in kinds])
    charges = costs.chargeback(period, records)
    context = {
        "project": project, "now": now,
        "quotas": quota_parts(quotas, pods) if quotas is not None else None,
        "quota_names": sorted({str((q.get("metadata") or {}).get("name") or "")
                               for q in quotas or []}) if changes_quota else [],
        "by_status": jobs_by_status(summaries), "jobs": len(summaries),
        "gpus_now": [
            {"id": "person", "caption": _("GPUs in use now, by person"), "column": _("Person"),
             "rows": _gpus_now(summaries, lambda s: s.created_by or "-")},
            {"id": "job", "caption": _("GPUs in use now, by job"), "column": _("Job"),
             "rows": _gpus_now(summaries, lambda s: s.name)}],
        "jobs_url": f"{reverse('training-job-list')}?project={project}",
        **costs.cost_context(period, charges, ("person", "job"),
                             reverse("training-project", args=[project]),
                             running=costs.running_now(
                                 [(listing.objects[(s.namespace, s.kind.slug, s.name)][0], s)
                                  for s in summaries
                                  if (s.namespace, s.kind.slug, s.name) in listing.objects],
                                 now)),
    }
    return render_page(request, "training/project_page.html", context, "project-numbers")
