"""The Metrics tab's data as files: "Download as CSV" (the charts over the range shown and
the Training series; `metric=training`: the Training series alone, no Prometheus asked),
and the Training series the JSON download adds (training/views/metrics.py)."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from odh.training import errors
from odh.training.cluster.api import is_namespace_name, is_object_name
from odh.training.kinds import KINDS
from training.curves.access import job_curves
from training.views.metrics import check_pods_access, metrics_for

log = logging.getLogger("training.metrics")


def training_series(request: HttpRequest, project: str, kind: str, name: str) -> dict:
    """The job's Training series as exported (odh.training.metrics.training)."""
    from odh.training.metrics.training import export_series
    job_kind = KINDS.get(kind)
    if job_kind is None:
        return {}
    try:
        return export_series(job_curves(request, project, job_kind, name))
    except errors.ClusterError as e:
        log.info("no training series of %s/%s: %s", project, name, e.message)
        return {}


@require_GET
def job_metrics_csv(request: HttpRequest, project: str, kind: str, name: str) -> HttpResponse:
    """The Metrics tab's charts over the range shown and its Training series, as CSV
    (`series,time,value,step,epoch`, series as `<chart>/<series>`: the CLI's `odh training
    metrics -o csv`); `metric=training`: the Training series alone (no Prometheus asked)."""
    from odh.training.metrics.export import CHART_KEYS, TRAINING, as_series, csv_text

    only_training = request.GET.get("metric") == TRAINING
    data: dict = {}
    if not only_training:
        result, problem = metrics_for(request, project, kind, name)
        if problem is not None:
            message, status = problem
            return HttpResponse(message + "\n", status=status,
                                content_type="text/plain; charset=utf-8")
        data = as_series(result, list(CHART_KEYS))
    elif KINDS.get(kind) is None or not is_namespace_name(project) or \
            not is_object_name(name):
        return HttpResponse(_("There is no such job.") + "\n", status=404,
                            content_type="text/plain; charset=utf-8")
    else:
        try:
            check_pods_access(request, project)  # refused in the same words as the rest
        except errors.ClusterError as e:
            return HttpResponse(e.message + "\n", status=e.status or 503,
                                content_type="text/plain; charset=utf-8")
    data[TRAINING] = training_series(request, project, kind, name)
    response = HttpResponse(csv_text(data), content_type="text/csv; charset=utf-8")
    response["Cache-Control"] = "no-store"
    response["Content-Disposition"] = f'attachment; filename="{name}-metrics.csv"'
    return response
