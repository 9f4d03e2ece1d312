"""What a job page's Overview tab shows besides what the job and its pods say: the GPU
line and each pod's CPU and memory from Prometheus (left out or "-" when it is slow or
away), the cost, the launcher's progress, whether it names outputs, and the job's
description (the annotation `opendatahub.io/description` the wizard writes; shown
escaped, as everything from the cluster)."""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest

from odh.training.kinds import JobKind
from odh.training.metrics.podnow import pod_figures
from odh.training.paths import as_dict, get_path
from odh.training.status.queries import JobDetail
from training import job_progress, prices
from training.accounts import session
from training.views.job import artifacts as job_artifacts
from training.views.metrics import tab as job_metrics

DESCRIPTION = "opendatahub.io/description"


def overview_context(request: HttpRequest, kind: JobKind, project: str, detail: JobDetail,
                     now: datetime) -> dict:
    gpu_line = job_metrics.gpu_summary(request, kind, project, detail.summary)
    usage = job_metrics.pod_usage(request, kind, project, detail.summary)  # skipped if down
    return {
        "gpu_summary": gpu_line,
        "pod_figures": pod_figures(detail.pods, usage),
        "job_cost": prices.job_cost(detail.job, detail.summary, now),
        "has_outputs": job_artifacts.names_outputs(kind, detail.job),
        # the launcher's recent epoch/step lines (one short log read; see job_progress)
        "progress": job_progress.for_overview(session.token(request), detail.summary,
                                              detail.job),
        "description": str(as_dict(get_path(detail.job, ["metadata", "annotations"])).get(
            DESCRIPTION) or "").strip(),
        "run_summary": run_summary(request, kind, project, detail),
    }


def run_summary(request: HttpRequest, kind: JobKind, project: str, detail: JobDetail
                ) -> dict | None:
    """A succeeded run's card (the UX analysis' success card): what its training ended with
    (the last values of its Training curves, when its log had some and the person may read
    it), its GPU-hours (the job history's), its duration, and how to deploy its model
    (odh.training.artifacts.serving); None for any other job."""
    from odh.training.metrics.training import final_figures
    from odh.training.status.summary import JobStatus
    from training.curves.access import curves_for_user
    from training.models import JobHistory

    summary = detail.summary
    if summary.status != JobStatus.SUCCEEDED or not summary.uid:
        return None
    record = JobHistory.objects.filter(uid=summary.uid).first()
    return {"final": final_figures(curves_for_user(request, project, summary.uid)),
            "gpu_hours": record.gpu_hours if record is not None else None,
            "duration": summary.duration_seconds(),
            "deploy": _deploy(request, kind, project, detail)}


SERVING_KEY, SERVING_TTL = "kserve-served", 300


def _deploy(request: HttpRequest, kind: JobKind, project: str, detail: JobDetail):
    from django.conf import settings
    from django.core.cache import cache

    from odh.training import errors
    from odh.training.artifacts import serving
    from odh.training.artifacts.outputs import find_outputs
    from training.cluster import user_client

    outputs = find_outputs(kind, detail.job).outputs
    if not outputs:
        return None
    installed = cache.get(SERVING_KEY)
    if installed is None and settings.ODH_DASHBOARD_URL:
        try:
            with user_client(request) as client:
                installed = client.serves(serving.GROUP, serving.VERSION)
        except errors.ClusterError:
            installed = False
        cache.set(SERVING_KEY, installed, SERVING_TTL)
    return serving.deploy(detail.summary.name, project, outputs,
                          [str(detail.job.get("spec") or "")], bool(installed),
                          settings.ODH_DASHBOARD_URL)
