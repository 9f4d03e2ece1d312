"""The unified job list: every training job kind in the person's projects, with its
filters (listing.JobFilters: all in the address), live rows, and each row's menu."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from django.conf import settings
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from odh.training import errors
from odh.training.cluster.client import Project
from odh.training.durations import format_timestamp
from odh.training.kinds import JobKind
from odh.training.status.lists import listing
from odh.training.status.summarize import JobStatus
from training import diagnoses, job_progress, permissions, prices, queue_standing
from training.accounts import session
from training.cluster import user_client
from training.live import subscriptions
from training.projects import (
    can_list_everywhere,
    list_jobs_for_user,
    menu_projects,
    projects_for_user,
    served_kinds,
)
from training.views.job.jobs import PROJECT_KEY
from training.views.pages import render_page


# -- helpers ------------------------------------------------------------------------------------
def _forbidden_project(project: str) -> errors.Forbidden:
    return errors.Forbidden(
        _("You do not have access to the project “%(project)s”.") % {"project": project},
        status=403, namespace=project)


def _selected_project(request: HttpRequest, projects: list[Project]) -> str:
    """The project filter: from the URL if given (and remembered), else the session's."""
    names = {p.name for p in projects}
    if "project" in request.GET:
        chosen = request.GET.get("project", "").strip()
        if chosen and chosen not in names:
            raise _forbidden_project(chosen)
        request.session[PROJECT_KEY] = chosen
        return chosen
    remembered = request.session.get(PROJECT_KEY, "")
    return remembered if remembered in names else ""


def _filter_chips(request: HttpRequest, filters: listing.JobFilters,
                  kinds: list[JobKind]) -> list[dict]:
    """The active filters as chips ("Status: Failed"), each with the address without it
    (the page reset; the project set to all, or the session would bring it back)."""
    labels = {k.slug: k.label for k in kinds}
    shown = [("project", _("Project"), filters.project),
             ("type", _("Type"), labels.get(filters.type, filters.type)),
             ("status", _("Status"), _(filters.status) if filters.status else ""),
             ("q", _("Name"), filters.q),
             (listing.USER, _("Created by"), filters.user),
             (listing.CREATED_FROM, _("Created from"),
              "" if filters.problem(listing.CREATED_FROM) else filters.created_from),
             (listing.CREATED_TO, _("Created to"),
              "" if filters.problem(listing.CREATED_TO) else filters.created_to),
             (listing.LABELS, _("Labels"),
              "" if filters.problem(listing.LABELS) else filters.labels)]
    chips = []
    for param, category, value in shown:
        if not value:
            continue
        kept = {k: v for k, v in request.GET.items() if k not in (param, "page")}
        if param == "project":
            kept["project"] = ""
        chips.append({"category": category, "value": value,
                      "url": "?" + urlencode(kept)})
    return chips


# -- list ------------------------------------------------------------------------------------------
@require_GET
def job_list(request: HttpRequest) -> HttpResponse:
    with user_client(request) as client:
        projects = projects_for_user(request, client)
        selected = _selected_project(request, projects)
        kinds = served_kinds(client)
        namespaces: list[str] | None = [selected] if selected else [p.name for p in projects]
        if not selected and can_list_everywhere(request, client):
            namespaces = None  # one cluster-wide list per kind instead of one per project
        listed_at = datetime.now(UTC)  # a job created from now on may be missing: see live.js
        # a kind (or pods) refused cluster-wide is listed in the person's projects instead
        result = list_jobs_for_user(request, client, namespaces, kinds, projects)
        # Create, Clone and Retry only where the person may create MPIJobs
        creatable = permissions.may_create_in(request, client, [p.name for p in projects])
        filters = replace(listing.JobFilters.from_query(request.GET), project=selected)
        rows = listing.apply(result.summaries, filters, listing.labels_from(result.objects))
        page = Paginator(rows, settings.JOBS_PER_PAGE).get_page(request.GET.get("page"))
        # each row's menu: the actions the person may take on it, and its tabs
        menus = permissions.row_actions(request, client, list(page.object_list))
        # the waiting rows shown that name a Kueue queue: their place in it
        queued = queue_standing.positions_for_rows(client, list(page.object_list))
        # the events that say why a row fails or waits, where the hub keeps them
        known_events = diagnoses.indexed_row_events(list(page.object_list),
                                                    result.indexed_events)
    chips = _filter_chips(request, filters, kinds)
    field_labels = {listing.CREATED_FROM: _("Created from"), listing.CREATED_TO: _("Created to"),
                    listing.LABELS: _("Labels")}
    # running jobs on this page only, in parallel, bounded (see job_progress)
    progress = job_progress.for_rows(session.token(request), page.object_list)
    # why the rows shown fail or wait: the job page's diagnosis, bounded the same way
    found = diagnoses.for_rows(session.token(request), list(page.object_list), result.objects,
                               diagnoses.dismissed_all(request), known_events)
    context = {
        "page": page,
        "filters": filters,
        "kinds": kinds,
        "statuses": list(JobStatus),
        "projects": menu_projects(projects, keep=selected),
        "selected_project": selected,
        "total": len(result.summaries),
        "forbidden_namespaces": result.forbidden_namespaces,
        "forbidden_kinds": [k.label for k in result.forbidden_kinds],
        "pods_forbidden": result.pods_forbidden,
        "now": datetime.now(UTC),
        "listed_at": format_timestamp(listed_at),
        # the live socket follows every project shown or filtered for: a new job shows up
        "live_namespaces": subscriptions.list_namespaces(
            [selected] if selected else [p.name for p in projects],
            [job.namespace for job in page.object_list], result.forbidden_namespaces),
        "progress": progress,
        "diagnoses": found,
        "queued": queued,
        "creatable_projects": creatable,
        "row_menus": menus,
        "filter_chips": chips,
        # the filters that could not be read (not applied), each saying how to write it
        "filter_problems": [{"param": param, "label": field_labels.get(param, param),
                             "text": text} for param, text in filters.problems],
        "invalid_filters": [param for param, _text in filters.problems],
        # the creators of the jobs listed, offered by the "Created by" field
        "creators": sorted({s.created_by for s in result.summaries if s.created_by}),
        # the cost column, where prices are set
        "row_costs": prices.row_costs(list(page.object_list), result.objects, listed_at),
    }
    return render_page(request, "training/job_list.html", context, "job-table")
