"""A job's Metrics tab, its JSON feed of new points, and the Overview's GPU line.

Prometheus (OpenShift monitoring's Thanos querier, PROMETHEUS_URL) is asked with the
signed-in person's own token and the tenancy `namespace` parameter, so it shows them what
the cluster lets them see, never more. The dashboard does not rely on that alone: a plain
Prometheus (no kube-rbac-proxy, no prom-label-proxy) answers anyone, so before asking it
the person's own `get pods` in the project is checked (a SelfSubjectAccessReview with
their token, the answer kept a minute), what the tenancy port would ask. Prometheus being
absent, down or refusing never breaks the rest of the job page: the tab says what is
wrong, the Overview leaves its GPU line out.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from odh.training import errors
from odh.training.cluster.api import is_namespace_name, is_object_name
from odh.training.kinds import KINDS, JobKind
from odh.training.metrics import charts as m
from odh.training.metrics import podnow
from odh.training.metrics.pushed import with_pushed
from odh.training.status.summary import JobStatus, JobSummary
from training.accounts import session
from training.cluster import client_for_token, prometheus_tls
from training.curves.access import curves_context, curves_for_user, curves_polling
from training.permissions import GET_PODS, may
from training.web import params

log = logging.getLogger("training.metrics")

SUMMARY_TIMEOUT = (1.0, 2.0)  # connect, read: the Overview must not wait on Prometheus
SUMMARY_TTL = 15  # seconds a person's GPU line is reused
DOWN_TTL = 30  # seconds the Overview skips Prometheus after it could not be reached
# the Metrics tab's series, read and parsed for its tables, are handed to its script's first
# fetch of the same range (each point parsed once, not twice)
SERIES_REUSE_SECONDS = 10


def _job_metrics(request: HttpRequest, client, project: str, kind: JobKind, name: str,
                 rng: m.TimeRange, end: float | None, since: float | None = None):
    """`m.job_metrics`, the whole range kept a few seconds per person, language and range:
    the page parses it for its tables, its script then asks for the same points."""
    if since is not None:  # a poll for the newest points: small, never the same twice
        return m.job_metrics(client, project, kind, name, rng, now=end, since=since)
    key = "job-series:" + hashlib.sha256(
        f"{session.token(request)}\0{project}\0{kind.slug}\0{name}\0{rng.key}\0"
        f"{round(end) if end is not None else ''}\0{get_language()}".encode()).hexdigest()
    found = cache.get(key)
    if found is not None:
        return found
    result = m.job_metrics(client, project, kind, name, rng, now=end)
    cache.set(key, result, SERIES_REUSE_SECONDS)
    return result



def prometheus_for(request: HttpRequest,
                   timeout: float | tuple[float, float] | None = None) -> m.PrometheusClient:
    """A Prometheus client acting as the signed-in person (their token, never ours)."""
    ca_file, verify = prometheus_tls()
    if timeout is None:
        timeout = (min(5.0, float(settings.PROMETHEUS_TIMEOUT)),
                   float(settings.PROMETHEUS_TIMEOUT))
    return m.PrometheusClient(settings.PROMETHEUS_URL, session.token(request), ca_file,
                              timeout=timeout, verify=verify)


def check_pods_access(request: HttpRequest, project: str,
                      timeout: tuple[float, float] | None = None) -> None:
    """Raise `errors.Forbidden` unless the person may get pods in `project` (asked with
    their token, answer cached); `errors.Unauthorized`, `ClusterUnavailable`... as they
    come. Called before Prometheus is asked: it may not check anything itself."""
    token = session.token(request)
    with client_for_token(token) as client:
        if timeout is not None:
            client.timeout = timeout
        if not may(client, token, project, GET_PODS):
            raise errors.Forbidden(
                _("You may not see metrics in project “%(project)s”: your account needs "
                  "permission to view pods there.") % {"project": project}, status=403,
                namespace=project)


def _problem(e: errors.ClusterError, project: str) -> tuple[str, str]:
    """(title, explanation) of why there are no charts, in plain words."""
    if isinstance(e, errors.Forbidden):
        return (_("You may not see metrics in this project"),
                _("Prometheus refused to show you the metrics of project “%(project)s”: "
                  "your account needs permission to view pods there. Ask a project "
                  "administrator for access.") % {"project": project})
    if isinstance(e, errors.Unauthorized):
        return (_("Prometheus did not accept your sign-in"),
                _("Your session is valid for the cluster but Prometheus turned it down. Try "
                  "signing out and in again; if that does not help, tell your "
                  "administrator."))
    if isinstance(e, errors.ClusterUnavailable):
        return (_("Metrics are unavailable right now"),
                _("Prometheus could not be reached or did not answer in time, so there are "
                  "no charts. Everything else on this page still works; try again in a "
                  "moment.") + " " + e.message)
    return (_("Prometheus could not answer"),
            _("Prometheus returned an error for this job's metrics: %(reason)s")
            % {"reason": e.message})


def _table(chart: m.Chart) -> list[dict]:
    rows = []
    for s in chart.series:
        capacity = chart.capacity.get(s.pod)
        rows.append({"name": s.name, "latest": m.format_value(s.latest, chart.unit),
                     "average": m.format_value(s.average, chart.unit),
                     "maximum": m.format_value(s.maximum, chart.unit),
                     "capacity": m.format_value(capacity, chart.unit)
                     if capacity is not None else ""})
    return rows


def _empty_text(key: str, summary: JobSummary | None) -> str:
    if key in ("gpu_util", "gpu_memory") and summary is not None and not summary.gpus:
        return _("This job asks for no GPUs.")
    if summary is not None and summary.status in (JobStatus.PENDING, JobStatus.SUSPENDED):
        return _("No data yet: none of this job's pods has run in this time range.")
    return _("No data in this time range.")


def metrics_context(request: HttpRequest, kind: JobKind, project: str, name: str,
                    summary: JobSummary | None = None) -> dict:
    """What tabs/metrics.html shows: the charts' data and tables, or why there are none.

    Without a range chosen, the job's whole run (start to finish, or to now while it runs):
    a young job is not a sliver at the edge of an hour, a finished one is not off the chart.
    """
    requested = request.GET.get("range", "")
    end = None
    if requested in m.RANGES or summary is None:
        rng = m.time_range(requested)
    else:
        start = summary.started or summary.created
        rng, end = m.job_time_range(
            start.timestamp() if start else None,
            summary.finished.timestamp() if summary.finished else None,
            datetime.now(UTC).timestamp())
    whole_run = rng.key.startswith(m.JOB_RANGE)
    # the Training group: kept by the watcher, shown whether Prometheus answers or not;
    # where Prometheus has a job's pushed curves, those (below)
    curves = curves_for_user(request, project, summary.uid if summary is not None else "")
    # (a running job's Training group asks again for new points: curves_polling)
    context: dict = {**curves_context(project, kind.slug, name, curves),
                     **curves_polling(project, kind.slug, name, summary, curves),
                     "metrics_range": m.JOB_RANGE if whole_run else rng.key,
                     "metrics_ranges": [m.JOB_RANGE, *m.RANGES], "metrics_whole_run": whole_run,
                     "metrics_problem": None}
    if not settings.PROMETHEUS_URL:
        context["metrics_problem"] = (
            _("Metrics are not set up"),
            _("This dashboard has no Prometheus to ask for GPU, CPU and memory use: its "
              "administrator has not set PROMETHEUS_URL (on OpenShift, the Thanos querier of "
              "cluster monitoring). Everything else on this page works."))
        return context
    try:
        check_pods_access(request, project)
        with prometheus_for(request) as client:
            result = _job_metrics(request, client, project, kind, name, rng, end)
            if summary is not None:
                from training.views.metrics.export import pushed_curves
                pushed = pushed_curves(client, project, name, summary.started or
                                       summary.created, summary.finished)
                if pushed:
                    curves = with_pushed(curves, pushed)
                    context.update(curves_context(project, kind.slug, name, curves,
                                                  pushed=tuple(pushed)))
                    context.update(curves_polling(project, kind.slug, name, summary, curves))
    except errors.ClusterError as e:
        log.warning("metrics of %s/%s unavailable: %s", project, name, e.message)
        context["metrics_problem"] = _problem(e, project)
        return context
    charts = []
    for key in result.shown():  # network and disk only where Prometheus has them
        chart = result.charts[key]
        charts.append({"key": key, "title": chart.title, "unit": chart.unit,
                       "rows": _table(chart), "has_capacity": bool(chart.capacity),
                       "empty": _empty_text(key, summary)})
    # the points come from metrics.json (compact, and not in the page's weight): the page
    # says which range to ask for and carries only what the script cannot fetch
    query = {"range": result.range.key}
    if end is not None and summary is not None and summary.finished:
        query["end"] = m.iso(end)
    meta = {"query": query, "empty": {c["key"]: c["empty"] for c in charts},
            "units": m.unit_labels()}  # the words the script writes after values, translated
    context.update({
        "metrics": result, "metrics_charts": charts, "metrics_meta": meta,
        "metrics_json_url": reverse("training-job-metrics", args=[project, kind.slug, name]),
        "metrics_csv_url": reverse("training-job-metrics-csv", args=[project, kind.slug, name]),
        "metrics_export_query": urlencode(query),
        "metrics_interval": settings.METRICS_REFRESH_SECONDS * 1000,
        "metrics_gpu_fallback": result.gpu_metric == m.GPU_UTIL,
        "metrics_io_missing": result.io_missing,
    })
    return context


def _json_error(message: str, status: int) -> JsonResponse:
    response = JsonResponse({"error": message}, status=status)
    response["Cache-Control"] = "no-store"
    return response


def metrics_for(request: HttpRequest, project: str, kind: str, name: str
                 ) -> tuple[object, None] | tuple[None, tuple[str, int]]:
    """The job's series over the request's `range` (and `since`, `end`): (result, None), or
    (None, (what went wrong, status))."""
    job_kind = KINDS.get(kind)
    if job_kind is None or not is_namespace_name(project) or not is_object_name(name):
        return None, (_("There is no such job."), 404)
    if not settings.PROMETHEUS_URL:
        return None, (_("Metrics are not set up: PROMETHEUS_URL is not configured."), 503)
    rng = m.time_range(request.GET.get("range"))
    since = end = None
    if request.GET.get("since"):
        since = m.parse_iso(request.GET["since"])
        if since is None or not params.timestamp_in_range(since):
            return None, (_("“since” must be a time such as 2025-01-31T12:00:00Z."), 400)
    if request.GET.get("end"):
        end = m.parse_iso(request.GET["end"])
        if end is None or not params.timestamp_in_range(end):
            return None, (_("“end” must be a time such as 2025-01-31T12:00:00Z."), 400)
        end = min(end, datetime.now(UTC).timestamp())
    try:
        check_pods_access(request, project)  # a plain Prometheus would answer anyone
        with prometheus_for(request) as client:
            return _job_metrics(request, client, project, job_kind, name, rng, end, since), None
    except errors.Unauthorized as e:
        return None, (e.message, 401)
    except errors.Forbidden as e:
        return None, (e.message, 403)
    except errors.ClusterUnavailable as e:
        return None, (e.message, 503)
    except errors.ClusterError as e:
        return None, (e.message, 502)


@require_GET
def job_metrics_json(request: HttpRequest, project: str, kind: str,
                     name: str) -> JsonResponse:
    """The job's series over `range`; with `since` (RFC 3339), only the points after it;
    with `end`, the range ending then rather than now (a finished job's whole run).

    The Metrics tab fetches its charts' points from here once drawn (the page carries only
    their tables), then polls with `since` for new ones; with `download`, the same as a
    file (the tab's "Download as JSON"); with `metric=<chart>` too, that chart alone (its
    card's link)."""
    metric = request.GET.get("metric", "")
    if metric and metric not in m.CHART_KEYS:
        return _json_error(_("There is no chart called “%(metric)s”: use one of %(known)s.")
                           % {"metric": metric[:40], "known": ", ".join(m.CHART_KEYS)}, 400)
    result, problem = metrics_for(request, project, kind, name)
    if problem is not None:
        return _json_error(*problem)
    data = result.as_dict()
    if metric:
        data["charts"] = {k: v for k, v in data["charts"].items() if k == metric}
    elif request.GET.get("download"):  # the Training group's curves too (not in each poll)
        from training.views.metrics.export import training_series
        data["training"] = training_series(request, project, kind, name)
    response = JsonResponse(data)
    response["Cache-Control"] = "no-store"
    if request.GET.get("download"):
        response["Content-Disposition"] = \
            f'attachment; filename="{name}-{metric or "metrics"}.json"'
    return response


def overview_read(request: HttpRequest, project: str, job: JobSummary, what: str, read,
                  wanted: bool):
    """`read(prometheus client)` for the Overview's `what` ("GPU summary") of `job`, or
    None: no Prometheus, not `wanted`, or Prometheus slow or refusing (never an error, only
    a log line); kept SUMMARY_TTL seconds per person, job, `what` and language."""
    if not settings.PROMETHEUS_URL or not wanted:
        return None
    down_key = "prometheus-down:" + hashlib.sha256(settings.PROMETHEUS_URL.encode()).hexdigest()
    if cache.get(down_key):
        return None
    token = session.token(request)
    key = "overview-prometheus:" + hashlib.sha256(
        f"{token}\0{project}\0{job.kind.slug}\0{job.name}\0{what}\0{get_language()}".encode()
    ).hexdigest()
    cached = cache.get(key)
    if cached is not None:
        return cached
    try:
        check_pods_access(request, project, timeout=SUMMARY_TIMEOUT)
    except errors.ClusterError as e:  # refused, or the API server slow: not Prometheus' fault
        log.info("%s of %s/%s left out: %s", what, project, job.name, e.message)
        return None
    try:
        with prometheus_for(request, timeout=SUMMARY_TIMEOUT) as client:
            found = read(client)
    except errors.ClusterError as e:
        log.info("%s of %s/%s left out: %s", what, project, job.name, e.message)
        if isinstance(e, errors.ClusterUnavailable):
            cache.set(down_key, True, DOWN_TTL)
        return None
    cache.set(key, found, SUMMARY_TTL)
    return found


def gpu_summary(request: HttpRequest, kind: JobKind, project: str,
                summary: JobSummary) -> str:
    """The Overview's "GPU 87% avg across 8 workers", or "" (no Prometheus, no GPUs, not
    running, or Prometheus slow or refusing)."""
    return overview_read(
        request, project, summary, "GPU summary",
        lambda client: m.gpu_summary(client, project, kind, summary.name,
                                     now=datetime.now(UTC).timestamp()),
        bool(summary.gpus) and summary.status == JobStatus.RUNNING) or ""


def pod_usage(request: HttpRequest, kind: JobKind, project: str, summary: JobSummary
              ) -> dict | None:
    """CPU and memory each pod of the job uses now (odh.training.metrics.podnow), or None
    when Prometheus cannot say (the table then shows "-")."""
    return overview_read(
        request, project, summary, "CPU and memory per pod",
        lambda client: podnow.usage_now(client, project, kind, summary.name,
                                        now=datetime.now(UTC).timestamp()),
        summary.status == JobStatus.RUNNING)
