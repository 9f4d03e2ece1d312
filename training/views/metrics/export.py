"""The Metrics tab's data as files: "Download as CSV" (the charts over the range shown and
the Training series; `metric=training`: the Training series alone), the Training series
the JSON download adds (training/views/metrics/tab.py), and the Training group again for a
running job's tab (`job_training_part`)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from odh.training import errors
from odh.training.cluster.api import is_namespace_name, is_object_name
from odh.training.kinds import KINDS, JobKind
from odh.training.metrics import charts as m
from odh.training.metrics.pushed import pushed_over_run
from odh.training.status.summarize import summarize
from training.curves.access import curves_context, curves_polling, job_curves
from training.views.metrics.tab import check_pods_access, metrics_for, prometheus_for

log = logging.getLogger("training.metrics")


def pushed_curves(client: m.PrometheusClient, project: str, name: str,
                  started: datetime | None, finished: datetime | None) -> dict:
    """The training curves the job pushed to Prometheus over its run (odh.training.metrics.
    pushed), {} when none (or Prometheus would not say: the log's curves stay)."""
    return pushed_over_run(client, project, name, started, finished)


def job_training(request: HttpRequest, project: str, kind: JobKind, name: str):
    """(the job's curves as its Training group charts them: the log's, with Prometheus'
    where the job pushed them; its summary; the names pushed), or (None, None, ()) when
    there is no such job. Raises the cluster's errors."""
    from odh.training.metrics.pushed import with_pushed
    reader, job = job_curves(request, project, kind, name)
    if job is None:
        return None, None, ()
    summary = summarize(job, [], None, datetime.now(UTC))
    pushed: dict = {}
    if settings.PROMETHEUS_URL:
        check_pods_access(request, project)
        with prometheus_for(request) as client:
            pushed = pushed_curves(client, project, name, summary.started or summary.created,
                                   summary.finished)
    return with_pushed(reader, pushed), summary, tuple(pushed)


def training_series(request: HttpRequest, project: str, kind: str, name: str) -> dict:
    """The job's Training series as exported (odh.training.metrics.training): as the tab
    charts them."""
    from odh.training.metrics.training import export_series
    job_kind = KINDS.get(kind)
    if job_kind is None:
        return {}
    try:
        return export_series(job_training(request, project, job_kind, name)[0])
    except errors.ClusterError as e:
        log.info("no training series of %s/%s: %s", project, name, e.message)
        return {}


@require_GET
def job_training_part(request: HttpRequest, project: str, kind: str, name: str
                      ) -> HttpResponse:
    """The Training group again, for a running job's tab (it asks every
    TRAINING_CURVES_SECONDS, with the number of points it shows: 204 while that has not
    changed, so nothing is drawn again for nothing)."""
    job_kind = KINDS.get(kind)
    if job_kind is None or not is_namespace_name(project) or not is_object_name(name):
        return HttpResponse(status=404)
    try:
        reader, summary, pushed = job_training(request, project, job_kind, name)
    except errors.ClusterError as e:
        log.info("no training curves of %s/%s: %s", project, name, e.message)
        return HttpResponse(status=204)  # the group as it is; asked again later
    if summary is None:
        return HttpResponse(status=204)
    context = curves_context(project, job_kind.slug, name, reader, pushed=pushed)
    context.update(curves_polling(project, job_kind.slug, name, summary, reader))
    if request.GET.get("points") == str(context["curves_points"]) and \
            context["curves_poll_url"]:
        return HttpResponse(status=204)
    return render(request, "training/partials/training_curves.html", context)


@require_GET
def job_metrics_csv(request: HttpRequest, project: str, kind: str, name: str) -> HttpResponse:
    """The Metrics tab's charts over the range shown and its Training series, as CSV
    (`series,time,value,step,epoch`, series as `<chart>/<series>`: the CLI's `odh training
    metrics -o csv`); `metric=training`: the Training series alone (no Prometheus asked);
    `metric=<chart>` (`cpu`, `gpu_util`...): that chart alone, as its card's link asks."""
    from odh.training.metrics.export import CHART_KEYS, TRAINING, as_series, csv_text

    metric = request.GET.get("metric", "")
    only_training = metric == TRAINING
    if metric and not only_training and metric not in CHART_KEYS:
        return HttpResponse(_("There is no chart called “%(metric)s”: use one of %(known)s.")
                            % {"metric": metric[:40], "known": ", ".join(CHART_KEYS)} + "\n",
                            status=400, content_type="text/plain; charset=utf-8")
    data: dict = {}
    if not only_training:
        result, problem = metrics_for(request, project, kind, name)
        if problem is not None:
            message, status = problem
            return HttpResponse(message + "\n", status=status,
                                content_type="text/plain; charset=utf-8")
        data = as_series(result, [metric] if metric else list(CHART_KEYS))
        if metric:  # one chart's card: its data alone
            return _csv_response(csv_text(data), f"{name}-{metric}")
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
    return _csv_response(csv_text(data), f"{name}-metrics")


def _csv_response(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Cache-Control"] = "no-store"
    response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
    return response
