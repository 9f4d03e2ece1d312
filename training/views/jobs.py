"""The unified job list and the job detail page with its actions."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from odh.training import errors
from odh.training.cluster.client import ClusterClient, Project
from odh.training.durations import format_timestamp
from odh.training.kinds import JobKind
from odh.training.manifests import export
from odh.training.status import event_timeline, listing
from odh.training.status.summarize import JobStatus
from odh.training.status.suspending import FINISHED, Suspension, set_suspended
from training import diagnoses, job_progress, mutations, permissions, prices, queue_standing
from training.accounts import session
from training.cluster import user_client
from training.live import pushes as live
from training.live import subscriptions
from training.projects import (
    can_list_everywhere,
    get_job_for_user,
    job_missing,
    kind_or_404,
    list_jobs_for_user,
    menu_projects,
    projects_for_user,
    served_kinds,
)
from training.views import artifacts as job_artifacts
from training.views import logs as job_logs
from training.views import metrics as job_metrics
from training.views import overview
from training.views import retries as job_retries
from training.views.pages import render_page

log = logging.getLogger("training.jobs")

# the order of the tabs on the page; metrics: views/metrics.py; artifacts: views/artifacts.py
TABS = ("overview", "topology", "logs", "metrics", "artifacts", "events", "configuration")
PROJECT_KEY = "project"


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
        # each row's menu: the actions the person may take on it (views/jobs.py row menu)
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


# -- detail ----------------------------------------------------------------------------------------
@require_GET
def job_detail(request: HttpRequest, project: str, kind: str, name: str) -> HttpResponse:
    job_kind = kind_or_404(kind)
    tab = request.GET.get("tab", "overview")
    if tab not in TABS:
        tab = "overview"
    with user_client(request) as client:
        detail = get_job_for_user(request, client, project, job_kind, name)
        context: dict = {"detail": detail, "summary": detail.summary, "tab": tab,
                         "tabs": TABS, "project": project,
                         "now": datetime.now(UTC),
                         # the actions offered: those the person may take
                         "may": permissions.job_actions(request, client, project, job_kind)}
        if tab == "logs":
            context.update(job_logs.logs_context(request, client, detail))
        if tab == "artifacts":  # read as this person, with a short-lived pod of theirs
            context.update(job_artifacts.artifacts_context(request, client, detail))
    if tab == "events":
        wanted = request.GET.get("type", "")
        context["event_type"] = wanted if wanted in ("Normal", "Warning") else ""
        context["events"] = [e for e in detail.events
                             if not context["event_type"] or e.get("type") == wanted]
        context["timeline"] = event_timeline.of_type(
            live.timeline_of(job_kind, detail.job, detail.pods, detail.events),
            context["event_type"])
    if tab == "configuration":
        shown = export.without_managed_fields(detail.job)
        context["job_yaml"] = export.to_yaml(shown)
        context["job_json"] = export.to_json(shown)
    if tab == "metrics":
        context.update(job_metrics.metrics_context(request, job_kind, project, name,
                                                   detail.summary))
    if tab in ("overview", "topology"):  # why it fails or waits, read as this person
        diagnosis = diagnoses.for_detail(request, detail)
        context.update(diagnoses.card_context(diagnosis, detail, session.token(request)))
        context.update(job_retries.retries_context(  # "Retry 1 of 2 of bert-a"
            detail.job, project, job_kind))
        if tab == "overview":  # where it stands in Kueue's queue, if it names one
            context["queue"] = queue_standing.for_job(request, client, job_kind, detail.job,
                                                      detail.summary)
            context["queue_refresh"] = queue_standing.REFRESH_SECONDS
    if tab == "overview":  # Prometheus' figures (left out when it is slow or away) and more
        context.update(overview.overview_context(request, job_kind, project, detail,
                                                 context["now"]))
    return render_page(request, "training/job_detail.html", context, "tab-content")


@require_GET
def job_queue(request: HttpRequest, project: str, kind: str, name: str) -> HttpResponse:
    """The Overview's Queue card alone, as the card fetches it again while the job waits."""
    job_kind = kind_or_404(kind)
    with user_client(request) as client:
        detail = get_job_for_user(request, client, project, job_kind, name)
        standing = queue_standing.for_job(request, client, job_kind, detail.job,
                                          detail.summary)
    return render(request, "training/tabs/overview.html#queue",
                  {"queue": standing, "summary": detail.summary, "project": project,
                   "queue_refresh": queue_standing.REFRESH_SECONDS})


@require_GET
def job_export(request: HttpRequest, project: str, kind: str, name: str) -> HttpResponse:
    job_kind = kind_or_404(kind)
    fmt = request.GET.get("format", "yaml")
    if fmt not in ("yaml", "json"):
        fmt = "yaml"
    with user_client(request) as client:
        try:
            job = client.get_job(job_kind, project, name)
        except errors.NotFound:
            raise job_missing(job_kind, project, name) from None
    manifest = export.exportable(job)
    if fmt == "json":
        response = HttpResponse(export.to_json(manifest), content_type="application/json")
    else:
        response = HttpResponse(export.to_yaml(manifest), content_type="application/yaml")
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


# -- actions --------------------------------------------------------------------------------------
def _detail_url(project: str, kind: JobKind, name: str) -> str:
    return reverse("training-job-detail", args=[project, kind.slug, name])


def _change_job(request: HttpRequest, client: ClusterClient, verb: str, kind: JobKind,
                project: str, name: str, action) -> HttpResponse | None:
    """One change to one job (training/mutations.py): None when the cluster made it; the
    job's page with the cluster's reason when it turned the change down (it conflicts or is
    invalid); the "no longer exists" page when the job is gone, or is in a project this
    person cannot see (asked of nobody, audited nowhere: a URL anyone can type is not an
    action on someone's project)."""
    if project not in {p.name for p in projects_for_user(request, client)}:
        raise job_missing(kind, project, name)
    try:
        mutations.change(request, verb, kind, project, name, action)
    except errors.NotFound:
        raise job_missing(kind, project, name) from None
    except errors.QuotaExceeded:
        raise
    except errors.Forbidden as e:  # the project is theirs to see, not to change
        return render(request, "training/errors/403.html", {
            "project": project, "read_only": True, "message": e.message,
            "back_url": _detail_url(project, kind, name)}, status=403)
    except (errors.Conflict, errors.Invalid) as e:
        messages.error(request, e.message if e.reason == FINISHED else
                       _("The cluster did not accept this change: %(reason)s")
                       % {"reason": e.message})
        return redirect(_detail_url(project, kind, name))
    return None


@require_http_methods(["GET", "POST"])
def job_delete(request: HttpRequest, project: str, kind: str, name: str) -> HttpResponse:
    job_kind = kind_or_404(kind)
    with user_client(request) as client:
        if request.method == "GET":
            detail = get_job_for_user(request, client, project, job_kind, name)
            return render(request, "training/job_delete.html", {
                "summary": detail.summary, "project": project})
        refused = _change_job(request, client, "delete", job_kind, project, name,
                              lambda: client.delete_job(job_kind, project, name))
        if refused is not None:
            return refused
    messages.success(request, _("The %(type)s “%(name)s” is being deleted.")
                     % {"type": job_kind.label, "name": name})
    return redirect("training-job-list")


def _set_suspended(request: HttpRequest, project: str, kind: str, name: str,
                   suspend: bool) -> HttpResponse:
    job_kind = kind_or_404(kind)
    done: list[Suspension] = []
    with user_client(request) as client:
        refused = _change_job(request, client, "suspend" if suspend else "resume", job_kind,
                              project, name, lambda: done.append(
                                  set_suspended(client, job_kind, project, name, suspend)))
        if refused is not None:
            return refused
    if done and not done[0].changed:  # nothing was sent: say so, not that it was done
        messages.info(request, (_("“%(name)s” is already suspended.") if suspend else
                                _("“%(name)s” is not suspended.")) % {"name": name})
    elif suspend:
        messages.success(request, _("“%(name)s” is suspended: its Workers are stopped until "
                                    "you resume it.") % {"name": name})
    else:
        messages.success(request, _("“%(name)s” is resuming.") % {"name": name})
    # from the list's row menu: back to the list as it was (an address of this site only)
    back = request.POST.get("next", "")
    if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                                require_https=request.is_secure()):
        return redirect(back)
    return redirect(_detail_url(project, job_kind, name))


@require_POST
def job_suspend(request: HttpRequest, project: str, kind: str, name: str) -> HttpResponse:
    return _set_suspended(request, project, kind, name, True)


@require_POST
def job_resume(request: HttpRequest, project: str, kind: str, name: str) -> HttpResponse:
    return _set_suspended(request, project, kind, name, False)
