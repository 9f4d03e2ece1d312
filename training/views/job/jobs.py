"""The job detail page with its actions (the list: views/job_list.py)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.kinds import JobKind
from odh.training.manifests import export
from odh.training.status import event_timeline
from odh.training.status.suspending import FINISHED, Suspension, set_suspended
from training import diagnoses, mutations, permissions, queue_standing
from training.accounts import session
from training.cluster import user_client
from training.live import pushes as live
from training.projects import (
    get_job_for_user,
    job_missing,
    kind_or_404,
    projects_for_user,
)
from training.views.job import artifacts as job_artifacts
from training.views.job import logs as job_logs
from training.views.job import overview
from training.views.job import retries as job_retries
from training.views.metrics import tab as job_metrics
from training.views.pages import render_page

log = logging.getLogger("training.jobs")

# the order of the tabs on the page; metrics: views/metrics.py; artifacts: views/artifacts.py
TABS = ("overview", "topology", "logs", "metrics", "artifacts", "events", "configuration")
PROJECT_KEY = "project"  # the session key of the project filter (the list, the wizard)


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
