"""A job's Artifacts tab: its output directories listed as the person (a short-lived pod of
theirs: odh.training.artifacts.lister), one file downloaded, the newest checkpoint named, and
"Resume from this checkpoint" on a failed or preempted run whose template says how
(docs/artifacts.md)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from odh.training.artifacts.lister import ArtifactsRefused, ListerSettings, download
from odh.training.artifacts.listing import UnsafePath, human_size
from odh.training.artifacts.outputs import find_outputs
from odh.training.artifacts.reading import Artifacts, read_artifacts
from odh.training.artifacts.resume import (
    checkpoint_path,
    resumable,
    resume_changes,
    resume_way,
)
from odh.training.cluster.access import identity
from odh.training.cluster.client import ClusterClient
from odh.training.diagnosis import JobFix
from odh.training.kinds import JobKind
from odh.training.spec import ManifestError, read_manifest
from odh.training.status.queries import JobDetail
from training import diagnoses
from training.accounts import session
from training.cluster import user_client
from training.projects import get_job_for_user, kind_or_404

# how long a listing is kept for the same person and job: a finished job's files no longer
# change; a running job's do
FINISHED_CACHE_SECONDS = 300
RUNNING_CACHE_SECONDS = 20


def lister_settings() -> ListerSettings:
    return ListerSettings(image=settings.ARTIFACTS_IMAGE,
                          timeout=float(settings.ARTIFACTS_POD_TIMEOUT_SECONDS),
                          download_limit=settings.ARTIFACTS_DOWNLOAD_LIMIT_BYTES)


def artifacts_for(request: HttpRequest, client: ClusterClient, detail: JobDetail
                  ) -> Artifacts:
    """The job's artifacts read as this person, kept a little while (each read is a pod)."""
    summary = detail.summary
    key = f"artifacts:{identity(session.token(request))}:{summary.uid}"
    found = cache.get(key)
    if isinstance(found, Artifacts):
        return found
    found = read_artifacts(client, summary.kind, detail.job, lister_settings())
    # a refusal that may pass (the pod did not start) is asked again at once
    if found.refusal is None or found.refusal.reason == "forbidden":
        cache.set(key, found, FINISHED_CACHE_SECONDS if summary.is_finished
                  else RUNNING_CACHE_SECONDS)
    return found


def names_outputs(kind: JobKind, job: dict) -> bool:
    """Whether the job names output directories (the Overview then fetches what is there)."""
    return bool(find_outputs(kind, job).outputs)


def resume_url(request: HttpRequest, detail: JobDetail, artifacts: Artifacts) -> str:
    """The clone that resumes from the newest checkpoint, or "" when there is none to offer:
    the run did not fail, has no checkpoint, or its template declares no way to resume."""
    summary, newest = detail.summary, artifacts.newest_checkpoint
    if newest is None or not summary.kind.wizard_ready or not resumable(summary, detail.events):
        return ""
    try:
        spec = read_manifest(detail.job)
    except ManifestError:
        return ""
    way = resume_way(spec)
    if way is None:
        return ""
    _index, output, checkpoint = newest
    path = checkpoint_path(output, checkpoint.path)
    fix = JobFix(_("Resume from %(checkpoint)s") % {"checkpoint": checkpoint.path},
                 resume_changes(spec, way, path),
                 note=_("%(way)s set to %(path)s, the newest checkpoint of the failed run.")
                 % {"way": way.text, "path": path})
    ref = f"{summary.namespace}/{summary.kind.slug}/{summary.name}"
    return reverse("training-job-new") + "?" + urlencode(
        {"clone": ref, "fix": diagnoses.fix_token(fix, summary, session.token(request))})


def artifacts_context(request: HttpRequest, client: ClusterClient, detail: JobDetail) -> dict:
    """What training/tabs/artifacts.html (and its partials) shows."""
    artifacts = artifacts_for(request, client, detail)
    newest = artifacts.newest_checkpoint
    shown = None
    if newest is not None:
        _index, output, checkpoint = newest
        shown = {"name": checkpoint.path, "step": checkpoint.step,
                 "size": checkpoint.entry.size, "modified": checkpoint.entry.modified,
                 "path": checkpoint_path(output, checkpoint.path), "claim": output.claim}
    from training.views.job.tensorboard import tensorboard_context  # it imports this module

    return {"artifacts": artifacts, "newest": shown,
            "tb": tensorboard_context(request, detail),
            "has_logdirs": any(item.logdirs for item in artifacts.listings),
            "resume_url": resume_url(request, detail, artifacts),
            "resumable": resumable(detail.summary, detail.events),
            "resume_way": resume_way_text(detail),
            "download_limit": settings.ARTIFACTS_DOWNLOAD_LIMIT_BYTES,
            "download_limit_text": human_size(settings.ARTIFACTS_DOWNLOAD_LIMIT_BYTES)}


@require_GET
def job_artifacts_summary(request: HttpRequest, project: str, kind: str, name: str
                          ) -> HttpResponse:
    """The Overview's line of what a finished run left (fetched after the page: a pod)."""
    job_kind = kind_or_404(kind)
    with user_client(request) as client:
        detail = get_job_for_user(request, client, project, job_kind, name)
        context = {"summary": detail.summary, "project": project,
                   "now": datetime.now(UTC), **artifacts_context(request, client, detail)}
    return render(request, "training/tabs/artifacts.html#artifacts-summary", context)


def resume_way_text(detail: JobDetail) -> str:
    """The flag or variable the template resumes with ("" when it declares none)."""
    try:
        way = resume_way(read_manifest(detail.job))
    except ManifestError:
        return ""
    return way.text if way else ""


def _safe_filename(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "download"


@require_GET
def job_artifact_download(request: HttpRequest, project: str, kind: str, name: str
                          ) -> HttpResponse:
    """One file of an output directory (`output`: its index, `path`: inside it)."""
    job_kind = kind_or_404(kind)
    back = reverse("training-job-detail", args=[project, job_kind.slug, name]) + \
        "?tab=artifacts"
    with user_client(request) as client:
        detail = get_job_for_user(request, client, project, job_kind, name)
        outputs = find_outputs(job_kind, detail.job).outputs
        index = request.GET.get("output", "0")
        if not index.isdigit() or int(index) >= len(outputs):
            messages.error(request, _("This job has no such output directory: choose a file "
                                      "from the list."))
            return redirect(back)
        try:
            got = download(client, project, name, outputs[int(index)],
                           request.GET.get("path", ""), lister_settings())
        except (ArtifactsRefused, UnsafePath) as refused:
            messages.error(request, str(refused))
            return redirect(back)
    response = HttpResponse(got.content, content_type="application/octet-stream")
    response["Content-Disposition"] = f'attachment; filename="{_safe_filename(got.name)}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
