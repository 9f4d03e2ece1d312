"""Clone and Retry: a new job (of a kind the wizard shows: an MPIJob, a TrainJob) from an
existing one, or from its history record when the job itself is gone (deleted, or by its
time-to-live after it finished)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from odh.training import errors
from odh.training.checks.names import fresh_name, random_suffix
from odh.training.checks.rules_job import check_name
from odh.training.cluster.client import ClusterClient, Project
from odh.training.findings import ValidationContext
from odh.training.kinds import JobKind
from odh.training.paths import get_path
from odh.training.spec import (
    JobSpec,
    ManifestError,
    clone_spec,
    read_manifest,
)
from odh.training.status.summary import JobStatus
from training import diagnoses, mutations
from training.accounts import session
from training.cluster import user_client
from training.models import JobHistory
from training.permissions import cluster_admin
from training.projects import get_job_for_user, kind_or_404, project_uid
from training.views.job.history import newest_history
from training.views.wizard.base import new_draft, only_mpijobs, step_url
from training.views.wizard.create import create_problem
from training.views.wizard.render import warn_of_unknown_fields
from training.wizard import changes, checks, drafts, formfields


def clone(request: HttpRequest, client: ClusterClient, projects: list[Project],
           ref: str) -> HttpResponse:
    parts = ref.strip("/").split("/")
    if len(parts) != 3:
        raise Http404(_("“%(ref)s” does not name a job: use <project>/<type>/<name>.")
                      % {"ref": ref})
    project, kind_slug, name = parts
    kind = kind_or_404(kind_slug)
    if not kind.wizard_ready:
        return only_mpijobs(request, kind, project, name, "clone")
    spec, from_history = get_spec_for_user(request, client, project, kind, name)
    clone = clone_spec(spec, fresh_name(name, random_suffix(), max(spec.workers, 1)))
    data = drafts.data_from_spec(clone)
    uid = str(get_path(spec.base, ["metadata", "uid"], "") or "") if not from_history else ""
    fix = diagnoses.read_fix_token(request.GET.get("fix", ""), f"{project}/{kind.slug}/{name}",
                                   uid, session.token(request)) if request.GET.get("fix") \
        else None
    if fix is not None:
        data = changes.apply_fix(data, fix.changes, fix.label, fix.fields, fix.note)
    draft = new_draft(request, data, f"clone:{project}/{kind.slug}/{name}", clone.base, kind)
    if fix is not None:
        messages.success(request, _("Cloned “%(name)s” with the fix applied: %(fix)s. The "
                                    "changed fields are marked; check them, then create the "
                                    "job.") % {"name": name, "fix": fix.label})
        warn_of_unknown_fields(request, client, draft.data, draft.base, draft.job_kind)
        return redirect(step_url(draft, formfields.step_of(fix.fields[0]) if fix.fields
                                 else "review"))
    if request.GET.get("fix"):
        messages.warning(request, _("The suggested fix could not be applied (its link is too "
                                    "old or was changed): this is a plain copy of “%(name)s”.")
                         % {"name": name})
    if from_history:
        messages.info(request, _("“%(name)s” was deleted; this copy comes from its history "
                                 "record. Change what you need, then create it.")
                      % {"name": name})
    else:
        messages.info(request, _("Cloned “%(name)s”: change what you need, then create the "
                                 "copy.") % {"name": name})
    # a job made before its CRD changed (or its history record) may have fields the
    # cluster's MPIJob API no longer has
    warn_of_unknown_fields(request, client, draft.data, draft.base, draft.job_kind)
    return redirect(step_url(draft, "configuration"))


def get_spec_for_user(request: HttpRequest, client: ClusterClient, project: str,
                      kind: JobKind, name: str) -> tuple[JobSpec, bool]:
    """The job's spec from the cluster, or (when it was deleted, e.g. by its TTL) from its
    history record: (spec, whether it came from the history). A record of the project as
    it is now only: one deleted and made again under the same name is another project,
    whose records only cluster administrators may copy."""
    try:
        return _get_live_spec_for_user(client, project, kind, name), False
    except errors.NotFound:
        # The cluster answered 404, not 403: this person may read such jobs in the project.
        record = newest_history(project, kind, name, project_uid(request, client, project))
        if record is None and cluster_admin(request, client):
            record = JobHistory.objects.filter(namespace=project, kind=kind.kind,
                                               name=name).first()
        if record is None or not record.spec:
            raise
        try:
            return read_manifest(record.spec), True
        except ManifestError as e:
            raise Http404(str(e)) from None


def _get_live_spec_for_user(client: ClusterClient, project: str, kind: JobKind,
                            name: str) -> JobSpec:
    try:
        job = client.get_job(kind, project, name)
    except errors.Forbidden as e:
        e.namespace = project
        raise
    except errors.NotFound:
        raise errors.NotFound(
            _("The %(kind)s “%(name)s” no longer exists in project “%(project)s”, and it has "
              "no history record to copy from.") % {"kind": kind.label, "name": name,
                                                      "project": project},
            status=404, namespace=project) from None
    try:
        return read_manifest(job)
    except ManifestError as e:
        raise Http404(str(e)) from None


def _retry_warning(request: HttpRequest, detail) -> dict:
    """When the job failed (or waits) because of its configuration, Retry says so and
    offers the diagnosis' fixes instead: the same configuration would fail the same way."""
    from odh.training.diagnosis import Culprit

    if detail.summary.status != JobStatus.FAILED:
        return {}
    found = diagnoses.for_detail(request, detail)
    if found is None or not found.is_problem or \
            found.culprit not in (Culprit.CONFIGURATION, Culprit.CODE):
        return {}
    links = diagnoses.suggestion_links(found, detail.summary, session.token(request))
    return {"retry_diagnosis": found, "retry_fixes": [s for s in links if s["action"] == "fix"]}


def _retry_name_problems(spec: JobSpec, name: str, new_name: str) -> list[str]:
    """What is wrong with the name typed for the retry, in words that say how to fix it."""
    retry = clone_spec(spec, new_name)
    # the job being retried is taken: "already exists in <project>: choose another name"
    context = ValidationContext(existing_names={name})
    return [finding.message for finding in check_name(retry, context)]


@require_http_methods(["GET", "POST"])
def job_retry(request: HttpRequest, project: str, kind: str, name: str) -> HttpResponse:
    job_kind = kind_or_404(kind)
    if not job_kind.wizard_ready:
        return only_mpijobs(request, job_kind, project, name, "retry")
    with user_client(request) as client:
        spec, from_history = get_spec_for_user(request, client, project, job_kind, name)
        context = {"spec": spec, "summary": checks.summary(spec), "project": project, "name": name,
                   "kind": job_kind}
        if not from_history:
            detail = get_job_for_user(request, client, project, job_kind, name)
            context.update(_retry_warning(request, detail))
            # a job still at work (its node lost, a Worker evicted): stopped first, by
            # default, so that the two do not hold the project's GPUs at once
            if detail.summary.status in (JobStatus.RUNNING, JobStatus.PENDING):
                context["original_status"] = _(str(detail.summary.status))  # "Running"
        if request.method == "GET":
            context["new_name"] = fresh_name(name, random_suffix(), max(spec.workers, 1))
            context["suspend_original"] = "original_status" in context
            return render(request, "training/job_retry.html", context)
        # what was typed comes back as typed, with what to change
        new_name = request.POST.get("new_name", "").strip()
        context["new_name"] = new_name
        suspend_first = "original_status" in context and \
            request.POST.get("suspend_original") == "on"
        context["suspend_original"] = suspend_first
        problems = _retry_name_problems(spec, name, new_name)
        if problems:
            context["name_errors"] = problems
            return render(request, "training/job_retry.html", context)
        retry = clone_spec(spec, new_name)
        try:
            mutations.retry(request, client, retry, name, suspend_first)
        except mutations.RetryRefused as refused:
            e = refused.refusal
            problem = create_problem(e, retry)
            if isinstance(e, errors.Conflict) or problem.get("step") == "configuration":
                context["name_errors"] = [problem["message"]]
            else:
                context["create_problem"] = problem
            if refused.left_suspended:
                context["original_left_suspended"] = refused.left_suspended
            return render(request, "training/job_retry.html", context)
    if suspend_first:
        messages.success(request, _("“%(name)s” was suspended and started again as "
                                    "“%(new)s”, with the same configuration.")
                         % {"name": name, "new": new_name})
    else:
        messages.success(request, _("“%(name)s” was started again as “%(new)s”, with the "
                                    "same configuration.") % {"name": name, "new": new_name})
    return redirect("training-job-detail", project, job_kind.slug, new_name)
