"""The comparison page's Training charts (training/views/metrics/compare.py): the same training
curves of every run compared, overlaid on shared axes (odh.training.metrics.training.
compare_curves), each run's as its Metrics tab charts them."""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import HttpRequest

from odh.training import errors
from odh.training.logs.curves import CurveReader
from odh.training.metrics.pushed import with_pushed
from odh.training.metrics.training import compare_curves
from training.curves.access import curves_for_user

log = logging.getLogger("training.compare")


def run_curves(request: HttpRequest, column) -> CurveReader | None:
    """The run's training curves as its Metrics tab charts them: the log's, kept by the
    watcher (shown to whoever may read its logs), with Prometheus' where the job pushed
    them."""
    from training.views.metrics.export import pushed_curves
    from training.views.metrics.tab import check_pods_access, prometheus_for
    reader = curves_for_user(request, column.namespace, column.uid)
    if not settings.PROMETHEUS_URL or column.started is None:
        return reader
    try:
        check_pods_access(request, column.namespace, timeout=(1.0, 2.0))
        with prometheus_for(request, timeout=(1.0, 3.0)) as prometheus:
            return with_pushed(reader, pushed_curves(prometheus, column.namespace, column.name,
                                                     column.started, column.finished))
    except errors.ClusterError as e:
        log.info("no pushed curves for %s: %s", column.ref, e.message)
        return reader


def training_charts(request: HttpRequest, shown: list) -> list[dict]:
    """One chart per metric any run logged, a series per run that has it (named and
    coloured as the run's column: static/js/compare.js)."""
    return [{**c, "series": [{"name": shown[t["run"]].name, "colour": t["run"], "x": t["x"],
                              "y": t["y"]} for t in c["traces"]]}
            for c in compare_curves([run_curves(request, c) for c in shown])]
