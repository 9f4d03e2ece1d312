"""The dashboard's own metrics for Prometheus: `/metrics` (issue 6 item 4).

Names and labels are the contract in deploy/monitoring/prometheusrule.yaml (its alerts
and the Grafana dashboard query them); README.md lists them too:

    mpijob_dashboard_jobs{project,type,status}                 gauge      (watch hub)
    mpijob_dashboard_workers{project,type,state}               gauge      (watch hub)
    mpijob_dashboard_job_pending_seconds{project,type,name,reason} gauge  (watch hub)
    mpijob_dashboard_quota_used{project,quota,resource}        gauge      (watch hub)
    mpijob_dashboard_quota_hard{project,quota,resource}        gauge      (watch hub)
    mpijob_dashboard_quota_used_ratio{project,quota,resource}  gauge      (watch hub)
    mpijob_dashboard_watch_reconnects_total{resource,reason}   counter    (watch hub)
    mpijob_dashboard_job_failures_total{project,type,reason}   counter    (job history)
    mpijob_dashboard_job_duration_seconds{project,type,outcome} histogram (job history)
    mpijob_dashboard_job_submissions_total{project,type,outcome} counter  (this process)
    mpijob_dashboard_websocket_connections                     gauge      (this process)
    mpijob_dashboard_http_request_duration_seconds{method,view,status} histogram (this process)
    mpijob_dashboard_build_info{version}                       gauge, 1
  and, beyond the contract, for troubleshooting the watcher:
    mpijob_dashboard_hub_ready                                 gauge 1/0  (watch hub)
    mpijob_dashboard_watch_relists_total{resource}             counter    (watch hub)
    mpijob_dashboard_hub_renders_total                         counter    (watch hub)
    mpijob_dashboard_watcher_leader                            gauge 1/0  (runwatcher, elected)
    mpijob_dashboard_job_history_queued                        gauge      (watch hub)

Where each number comes from, and so which process reports it:

- "watch hub": computed at scrape time from the hub's `JobIndex` and the summaries it
  keeps, in the process that runs the hub: the web process when WATCHER_EMBEDDED (the
  demo, the dev overlay), else `runwatcher`, which serves the same /metrics on its own
  port (`runwatcher --metrics-port 9102`, or WATCHER_METRICS_PORT). Web processes that do
  not watch leave these out, so scrape both; with one watcher, `max` or `sum` over pods
  give the same.
- "job history": counted in the database (`JobHistory`, one row per job uid), so every
  process reports the same values, they survive restarts and a job is counted once
  however many watchers saw it finish: aggregate with `max` over pods.
- "this process": in-memory counters of what this process served; aggregate with `sum`.

The parts: training/monitoring/collectors.py (the registry, and the hub's and the job
history's numbers read at scrape time), training/monitoring/access.py (who may read
/metrics, and runwatcher's own endpoint); this module has the in-process instruments and
offers every name under its own.

One registry of our own (not prometheus_client's global one: no process/platform
collectors, nothing another library registers). Multiprocess caveat: the in-memory
metrics are per process, which fits daphne (one process per pod) and runwatcher. Under a
server that forks several workers behind one port (gunicorn with N workers), each scrape
would reach one worker at random; prometheus_client's multiprocess mode
(PROMETHEUS_MULTIPROC_DIR) would then be needed, and it supports neither custom
collectors (the hub and history families here) nor these gauges' live values, so run one
process per pod (scale with replicas) instead.

Access: open when neither METRICS_BEARER_TOKEN nor METRICS_ALLOWED_NETWORKS is set (the
demo). With a token, a request must carry `Authorization: Bearer <token>` (401 otherwise);
with networks, its address must be in one of them (403 otherwise); with both, both. The
address is the peer's, or behind the router (BEHIND_TLS_PROXY) the last X-Forwarded-For
hop, exactly as the audit trail takes it.
"""

from __future__ import annotations

import logging
import time
from importlib import metadata

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import Counter, Gauge, Histogram

from training.monitoring.access import MetricsServer, refusal, refused_response
from training.monitoring.collectors import (
    CONTENT_TYPE,
    PREFIX,
    REGISTRY,
    HistoryCollector,
    HubCollector,
    current_hub,
    exposition,
    use_elector,
    use_hub,
)

__all__ = [
    "BUILD_INFO", "CONTENT_TYPE", "HTTP_REQUEST_DURATION", "PREFIX", "REGISTRY", "SUBMISSIONS",
    "WEBSOCKETS", "HistoryCollector", "HubCollector", "MetricsServer",
    "RequestMetricsMiddleware", "count_submission", "current_hub", "exposition", "refusal",
    "refused_response", "submission_outcome", "use_elector", "use_hub", "view_label",
    "websocket_closed", "websocket_opened",
]

log = logging.getLogger("training.monitoring.exposition")

REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
SUBMIT_VERBS = frozenset({"create", "clone", "retry"})  # audit verbs that create a job
SUBMISSION_OUTCOMES = ("created", "forbidden", "invalid", "quota_exceeded", "error")

HTTP_REQUEST_DURATION = Histogram(
    f"{PREFIX}http_request_duration_seconds",
    "Time to answer an HTTP request, by the URL pattern's name (never the path), method "
    "and response code.",
    ["method", "view", "status"], buckets=REQUEST_BUCKETS, registry=REGISTRY)
SUBMISSIONS = Counter(
    f"{PREFIX}job_submissions",
    "Job creates sent through the dashboard (wizard, clone, retry), by outcome: created, "
    "forbidden, invalid, quota_exceeded or error.",
    ["project", "type", "outcome"], registry=REGISTRY)
WEBSOCKETS = Gauge(
    f"{PREFIX}websocket_connections",
    "Live-update websocket connections open in this process.", registry=REGISTRY)
BUILD_INFO = Gauge(f"{PREFIX}build_info", "The dashboard's version; always 1.", ["version"],
                   registry=REGISTRY)


def _version() -> str:
    try:
        return metadata.version("odh-mpijob-dashboard")
    except metadata.PackageNotFoundError:
        return "unknown"


BUILD_INFO.labels(version=_version()).set(1)



# -- what views and consumers call ------------------------------------------------------------
def websocket_opened() -> None:
    WEBSOCKETS.inc()


def websocket_closed() -> None:
    WEBSOCKETS.dec()


def submission_outcome(outcome: str, detail: str = "") -> str:
    """An audit outcome (success, denied, failed) and the cluster's message, as a label."""
    if outcome == "success":
        return "created"
    if "exceeded quota" in detail:
        return "quota_exceeded"
    if outcome == "denied":
        return "forbidden"
    if " is invalid" in detail or detail.startswith("Invalid"):
        return "invalid"
    return "error"


def count_submission(verb: str, project: str, kind: str, outcome: str, detail: str = "") -> None:
    """Count a create made through the dashboard (training/audit.py calls this for every
    audited mutation; other verbs than create, clone and retry are not submissions)."""
    if verb in SUBMIT_VERBS:
        SUBMISSIONS.labels(project=project, type=kind,
                           outcome=submission_outcome(outcome, detail)).inc()


def view_label(request: HttpRequest) -> str:
    """The URL pattern's name: bounded, unlike the path."""
    match = getattr(request, "resolver_match", None)
    if match is not None:
        return match.view_name or "unnamed"
    if request.path.startswith(settings.STATIC_URL):
        return "static"
    return "unmatched"


class RequestMetricsMiddleware:
    """Times every request for mpijob_dashboard_http_request_duration_seconds. First in
    MIDDLEWARE, so the time includes the other middleware (sessions, sign-in)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        start = time.perf_counter()
        response = self.get_response(request)
        method = request.method if request.method in HTTP_METHODS else "other"
        HTTP_REQUEST_DURATION.labels(method=method, view=view_label(request),
                                     status=str(response.status_code)).observe(
            time.perf_counter() - start)
        return response


# after the instruments, so /metrics lists them first
REGISTRY.register(HubCollector())
REGISTRY.register(HistoryCollector())
