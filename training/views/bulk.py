"""Several jobs at once, ticked in the job list: Suspend, Resume or Delete them after one
confirmation that names them (each made with the person's token through
training/mutations.py, audited one row per job, a result per job), or Export them as one
multi-document YAML file."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.manifests import export
from odh.training.status.lists import bulk
from training import mutations
from training.cluster import user_client
from training.projects import projects_for_user
from training.views.pages import render_page


def _chosen(request: HttpRequest) -> tuple[list[bulk.JobRef], list[str]]:
    data = request.POST if request.method == "POST" else request.GET
    jobs, unreadable = bulk.parse_refs(data.getlist("job"))
    return jobs[:bulk.MAX_JOBS], unreadable


def _visible(request: HttpRequest, client: ClusterClient) -> set[str]:
    return {p.name for p in projects_for_user(request, client)}


@require_http_methods(["GET", "POST"])
def job_bulk(request: HttpRequest) -> HttpResponse:
    """GET: the confirmation, naming every ticked job and those that will be left alone;
    POST (CSRF-checked): the action on each, and a result per job."""
    data = request.POST if request.method == "POST" else request.GET
    try:
        action = bulk.Action(data.get("action", ""))
    except ValueError:
        action = None
    jobs, unreadable = _chosen(request)
    context: dict = {"action": action, "jobs": jobs, "unreadable": unreadable,
                     "back_url": reverse("training-job-list"), "max_jobs": bulk.MAX_JOBS}
    if action is None or not jobs:
        return render(request, "training/job_bulk.html", context, status=400)
    with user_client(request) as client:
        visible = _visible(request, client)
        if request.method == "POST":
            results = mutations.change_each(request, client, action, jobs, visible)
            context.update(results=results, summary=bulk.summary(results))
            return render_page(request, "training/job_bulk.html", context, "bulk-body")
        # each job named, with why it will be left alone where it will
        context["items"] = [
            (job, "" if mutations.may_change(request, client, action, job, visible)
             else bulk.not_allowed_text(action, job, job.namespace in visible))
            for job in jobs]
        context["any_allowed"] = any(not why for _job, why in context["items"])
    return render(request, "training/job_bulk.html", context)


@require_GET
def job_bulk_export(request: HttpRequest) -> HttpResponse:
    """The ticked jobs as one YAML file, a document per job, each read with the person's
    token; a job that could not be read is named in a comment at the top, with why."""
    jobs, _unreadable = _chosen(request)
    documents, skipped = [], []
    with user_client(request) as client:
        visible = _visible(request, client)
        for job in jobs:
            if job.namespace not in visible:
                skipped.append(f"# {job.ref}: {bulk.not_exported_text(job)}")
                continue
            try:
                documents.append(export.to_yaml(export.exportable(
                    client.get_job(job.kind, job.namespace, job.name))))
            except errors.NotFound:
                skipped.append(f"# {job.ref}: {bulk.gone_text()}")
            except errors.Unauthorized:
                raise
            except errors.ClusterError as e:
                skipped.append(f"# {job.ref}: {e.message}")
    header = "".join(line.replace("\n", " ") + "\n" for line in skipped)
    body = header + "---\n".join(documents) if documents else header
    response = HttpResponse(body or "# " + _("No job was exported.") + "\n",
                            content_type="application/yaml")
    response["Content-Disposition"] = 'attachment; filename="training-jobs.yaml"'
    return response
