"""The stored curves of a job for the person asking: shown only to whoever may read the
job's logs in its project (get pods/log, asked with their token, the answer cached), the
logs they come from."""

from __future__ import annotations

import logging

from django.http import HttpRequest

from odh.training import errors
from odh.training.cluster.access import Access
from odh.training.logs.curves import CurveReader
from training.cluster import user_client
from training.curves.models import stored_curves
from training.permissions import person_may

log = logging.getLogger("training.curves")

READ_LOGS = Access("get", "pods", "", "log")


def curves_for_user(request: HttpRequest, project: str, uid: str) -> CurveReader | None:
    """The job's curves (by its uid), or None: none kept, or not this person's to read
    (a cluster that cannot answer counts as not: the page shows no Training group)."""
    reader = stored_curves(uid)
    if reader is None:
        return None
    try:
        with user_client(request) as client:
            if not person_may(request, client, project, READ_LOGS):
                return None
    except errors.ClusterError as e:
        log.info("curves of %s in %s not shown: %s", uid, project, e.message)
        return None
    return reader


def curves_context(project: str, kind_slug: str, name: str, reader: CurveReader | None,
                   csv: bool = True, pushed: tuple[str, ...] = ()) -> dict:
    """What partials/training_curves.html shows: the job's Training charts from `reader`
    (`curves_for_user`; []: no group), and where to download them."""
    from django.urls import reverse

    from odh.training.metrics.training import TRAINING, training_charts

    charts = training_charts(reader)
    url = ""
    if charts and csv:
        url = reverse("training-job-metrics-csv", args=[project, kind_slug, name]) + \
            f"?metric={TRAINING}"
    # `pushed`: the metrics Prometheus had (odh.training.metrics.pushed), said on the page
    return {"curves": charts, "curves_id": "training-curves", "curves_csv_url": url,
            "curves_pushed": ", ".join(pushed)}


def job_curves(request: HttpRequest, project: str, kind, name: str
               ) -> tuple[CurveReader | None, dict | None]:
    """The curves of the job of that name as it is in the cluster now (its uid read with
    the person's token), and the job; (None, None) when there is no such job."""
    with user_client(request) as client:
        try:
            job = client.get_job(kind, project, name)
        except errors.NotFound:
            return None, None
    uid = str((job.get("metadata") or {}).get("uid") or "")
    return curves_for_user(request, project, uid), job


def curves_polling(project: str, kind_slug: str, name: str, summary,
                   reader: CurveReader | None) -> dict:
    """While the job runs, its tab asks for the Training group again every
    TRAINING_CURVES_SECONDS (training/views/metrics/export.py job_training_part), telling
    how many points it shows."""
    from django.conf import settings
    from django.urls import reverse

    from odh.training.status.summary import JobStatus

    points = sum(len(s.points) for s in reader.series.values()) if reader is not None else 0
    running = summary is not None and summary.status == JobStatus.RUNNING
    return {"curves_points": points, "curves_poll_seconds": settings.TRAINING_CURVES_SECONDS,
            "curves_poll_url": reverse("training-job-curves", args=[project, kind_slug, name])
            if running else ""}
