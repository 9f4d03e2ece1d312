"""A finished job's history record, and what the "no longer exists" page offers from it.

The record's page is at /jobs/<project>/<type>/<name>/history/<uid>/: the job's own
address (JOB in training/urls.py) plus the uid of the run it records. One job name has as
many records as runs under that name (a uid each), so the uid picks the run; the project
and type in the address are what access is decided on *before* the database is read (a
record of a project one may not see is 403 whether it exists or not), and the breadcrumb,
Clone and Retry read the job's name from it like every other job page.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from odh.training import errors
from odh.training.cluster.access import Access
from odh.training.cluster.api import is_namespace_name
from odh.training.cluster.client import ClusterClient
from odh.training.kinds import KINDS, JobKind
from odh.training.spec import ManifestError, read_manifest
from training.cluster import user_client
from training.curves.access import curves_context, curves_for_user
from training.models import JobHistory
from training.permissions import person_may
from training.projects import kind_or_404, project_uid
from training.views.job.retries import retries_context
from training.wizard import checks


def newest_history(project: str, kind: JobKind, name: str,
                   project_uid: str | None) -> JobHistory | None:
    """The newest record of a job name in the project as it is now (`project_uid`): the
    one clone-from-history copies."""
    return JobHistory.of_project(project, project_uid).filter(kind=kind.kind,
                                                               name=name).first()


def bound_to_this_project(request: HttpRequest, client: ClusterClient,
                          record: JobHistory) -> bool:
    """Is the record of the project of that name as it is now? (Records written before
    project uids were kept are taken as its.) A record of a project deleted and made again
    is shown to cluster administrators only."""
    if not record.project_uid:
        return True
    if record.project_uid == project_uid(request, client, record.namespace):
        return True
    from training.permissions import cluster_admin
    return cluster_admin(request, client)


def get_history_for_user(request: HttpRequest, client: ClusterClient, project: str,
                          kind: JobKind, name: str, uid: str) -> JobHistory:
    """The record, if the cluster lets this person get that type of job in the project (a
    SelfSubjectAccessReview with their token), else PermissionDenied."""
    if not is_namespace_name(project):
        raise PermissionDenied
    access = Access("get", kind.plural, kind.group)
    if not person_may(request, client, project, access):
        raise PermissionDenied
    record = JobHistory.objects.filter(namespace=project, kind=kind.kind, name=name,
                                       uid=uid).first()
    if record is None:
        raise Http404(_("The %(type)s “%(name)s” in project “%(project)s” has no history "
                        "record “%(uid)s”.") % {"type": kind.label, "name": name,
                                                "project": project, "uid": uid})
    if not bound_to_this_project(request, client, record):
        raise PermissionDenied
    return record


def _live_uid(client: ClusterClient, kind: JobKind, project: str, name: str) -> str | None:
    """The uid of the job of that name in the cluster now, or None if there is none."""
    try:
        job = client.get_job(kind, project, name)
    except errors.NotFound:
        return None
    return str((job.get("metadata") or {}).get("uid") or "")


def _configuration(record: JobHistory, kind: JobKind) -> dict:
    """What the stored manifest asked for, in the product's words."""
    if kind.creatable:
        try:
            spec = read_manifest(record.spec)
        except ManifestError:
            return {}
        return {"spec": spec, "summary": checks.summary(spec)}
    replica_specs = ((record.spec or {}).get("spec") or {}).get(kind.replica_specs_field) or {}
    if not isinstance(replica_specs, dict):
        return {}
    return {"replicas": [{"role": role, "count": (specs or {}).get("replicas", 1)}
                         for role, specs in replica_specs.items()]}


@require_GET
def job_history(request: HttpRequest, project: str, kind: str, name: str,
                uid: str) -> HttpResponse:
    job_kind = kind_or_404(kind)
    with user_client(request) as client:
        record = get_history_for_user(request, client, project, job_kind, name, uid)
        live_uid = _live_uid(client, job_kind, project, name)
        newest = newest_history(project, job_kind, name, project_uid(request, client, project))
    # Clone and Retry copy the job as it is now, or (once it is gone) its newest record:
    # offered only when that is this run
    this_run = live_uid == record.uid if live_uid is not None else newest == record
    context = {
        "record": record, "kind": job_kind, "project": project, "name": name,
        "job_exists": live_uid is not None, "same_job": live_uid == record.uid,
        "newest": newest, "copyable": job_kind.wizard_ready and this_run,
        **_configuration(record, job_kind),
        # its Training curves, kept by the watcher with the run (by uid): there after the
        # job is deleted (the CSV link reads the job in the cluster: only while it is there)
        **curves_context(project, job_kind.slug, name,
                         curves_for_user(request, project, record.uid),
                         csv=live_uid == record.uid),
        # the record's manifest has no uid (it is re-appliable): the record's is the job's
        **retries_context({**record.spec, "metadata": {
            **(record.spec.get("metadata") or {}), "uid": record.uid}}, project, job_kind),
    }
    return render(request, "training/job_history.html", context)


def missing_job_history(request: HttpRequest) -> dict:
    """Context for the "this job no longer exists" page of a job's address: the newest
    history record of that project/type/name, if there is one. The cluster has just said
    the job is not there (a 404, not a 403, so this person may get that type of job in the
    project; the record's page asks again); the project's uid comes from this person's
    list of projects, cached in the session."""
    match = getattr(request, "resolver_match", None)
    kwargs = match.kwargs if match is not None else {}
    kind = KINDS.get(str(kwargs.get("kind", "")))
    project, name = kwargs.get("project"), kwargs.get("name")
    if kind is None or not project or not name:
        return {}
    try:
        with user_client(request) as client:
            uid = project_uid(request, client, project)
    except errors.ClusterError:
        return {}  # the page says the job is gone; the record can wait for the next visit
    record = newest_history(project, kind, name, uid)
    if record is None:
        return {}
    return {"history": record, "history_kind": kind, "history_clone": kind.wizard_ready}
