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
from training.views import artifacts as job_artifacts
from training.views import metrics as job_metrics

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
    }
