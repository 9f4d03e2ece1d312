"""Jobs side by side (/jobs/compare/?job=<project>/<type>/<name>&job=history:<uid>...):
their settings with the differences marked, outcome, diagnosis, duration, GPU-hours, and
GPU utilization and training progress over time on shared axes (minutes since start).

A job is named by its address or, once gone, by its history record (`history:<uid>`); a
job that no longer exists is shown from its newest record, or said to be gone. Every job
is read with the person's own token (a record only after a SelfSubjectAccessReview for
its project and type, as its own page does), Prometheus as the person, after the pods
check of the Metrics tab.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from odh.training import errors
from odh.training.cluster.access import Access
from odh.training.durations import format_duration
from odh.training.kinds import KINDS, creatable_kinds, default_kind
from odh.training.logs.progress import hints_from_job, progress_source
from odh.training.metrics.promql import ENGINE_ACTIVE, GPU_UTIL, JobQueries
from odh.training.metrics.series import gpu_scale
from odh.training.status.compare import Setting, compare, gpu_hours, progress_over_time, settings_of
from odh.training.status.summary import JobStatus
from training import diagnoses
from training.accounts import session
from training.cluster import user_client
from training.models import JobHistory
from training.permissions import person_may
from training.projects import get_job_for_user, project_uid, projects_for_user
from training.templatetags.training_tags import when as format_when
from training.views.job.history import get_history_for_user, newest_history
from training.views.metrics.compare_curves import training_charts

log = logging.getLogger("training.compare")

MAX_JOBS = 6
POINTS = 150


@dataclass
class Column:
    ref: str
    name: str
    namespace: str = ""
    kind_label: str = ""
    status: str = ""
    url: str = ""
    from_history: bool = False
    created_by: str = ""
    headline: str = ""
    culprit: str = ""
    duration: float | None = None
    gpu_hours: float = 0.0
    settings: list[Setting] = field(default_factory=list)
    gpu: list[tuple[float, float]] = field(default_factory=list)
    progress: list[tuple[float, float]] = field(default_factory=list)
    uid: str = ""  # the run's, for its training curves
    started: datetime | None = None
    finished: datetime | None = None
    problem: str = ""

    @property
    def gpu_average(self) -> float | None:
        return round(sum(y for _x, y in self.gpu) / len(self.gpu)) if self.gpu else None

    @property
    def progress_last(self) -> float | None:
        return self.progress[-1][1] if self.progress else None

    @property
    def duration_text(self) -> str:
        return format_duration(self.duration) if self.duration is not None else ""


def _refs(request: HttpRequest) -> list[str]:
    seen: list[str] = []
    for ref in request.GET.getlist("job"):
        ref = ref.strip().strip("/")
        if ref and ref not in seen:
            seen.append(ref)
    return seen[:MAX_JOBS]


def _gpu_series(request: HttpRequest, kind, namespace: str, name: str,
                start: datetime | None, end: datetime | None) -> list[tuple[float, float]]:
    """The job's GPUs' average utilization over its run, as (minutes, percent)."""
    from training.views.metrics.tab import check_pods_access, prometheus_for
    if not settings.PROMETHEUS_URL or start is None:
        return []
    end = end or datetime.now(UTC)
    seconds = max(60.0, (end - start).total_seconds())
    step = max(15, int(seconds / POINTS))
    try:
        check_pods_access(request, namespace, timeout=(1.0, 2.0))
        with prometheus_for(request, timeout=(1.0, 3.0)) as prometheus:
            queries = JobQueries(namespace, kind, name)
            for metric in (ENGINE_ACTIVE, GPU_UTIL):
                result = prometheus.query_range(f"avg({queries.gpu_util(metric)})", namespace,
                                                start.timestamp(), end.timestamp(), step)
                if result:
                    scale = gpu_scale(metric)
                    return [(round((float(t) - start.timestamp()) / 60, 2),
                             round(float(v) * scale, 1))
                            for t, v in result[0].get("values") or [] if v not in ("NaN",)]
    except errors.ClusterError as e:
        log.info("no GPU series for %s/%s: %s", namespace, name, e.message)
    return []


def _live_column(request: HttpRequest, client, ref: str, project: str, kind, name: str
                 ) -> Column:
    detail = get_job_for_user(request, client, project, kind, name)
    s = detail.summary
    # the headline only (logs, no quotas, policies or other jobs): a column is one read more
    _facts, diagnosis = diagnoses.compute(session.token(request), detail.job, detail.pods,
                                          detail.events, s, brief=True)
    column = Column(
        ref=ref, name=s.name, namespace=s.namespace, kind_label=kind.label,
        status=str(s.status), url=reverse("training-job-detail", args=[project, kind.slug,
                                                                         name]),
        created_by=s.created_by, headline=diagnosis.headline if diagnosis else s.lifecycle_step,
        culprit=diagnosis.culprit_title if diagnosis else "",
        duration=s.duration_seconds(), settings=settings_of(detail.job), uid=s.uid)
    column.gpu_hours = gpu_hours(s.gpus, column.duration)
    start = s.started or s.created
    column.started, column.finished = start, s.finished
    column.gpu = _gpu_series(request, kind, project, name, start, s.finished)
    source = progress_source(s.replicas)
    if start is not None and source is not None and getattr(source, "exists", False) and \
            s.status != JobStatus.PENDING:
        saved, client.timeout = client.timeout, (2.0, 3.0)
        try:
            text = client.read_log(project, source.name, tail_lines=500, timestamps=True)
            column.progress = progress_over_time(str(text).splitlines(), start.timestamp(),
                                                 hints_from_job(kind, detail.job)[0])
        except errors.ClusterError as e:
            log.info("no progress series for %s: %s", ref, e.message)
        finally:
            client.timeout = saved
    return column


def _history_column(request: HttpRequest, client, ref: str, record: JobHistory) -> Column:
    kind = next((k for k in KINDS.values() if k.kind == record.kind), default_kind())
    column = Column(
        ref=ref, name=record.name, namespace=record.namespace, kind_label=kind.label,
        status=record.outcome, from_history=True,
        url=reverse("training-job-history", args=[record.namespace, kind.slug, record.name,
                                                  record.uid]),
        created_by=record.created_by, headline=record.cause or record.reason,
        duration=record.duration_seconds, gpu_hours=record.gpu_hours,
        settings=settings_of(record.spec) if record.spec else [], uid=record.uid)
    column.started, column.finished = record.started, record.finished
    column.gpu = _gpu_series(request, kind, record.namespace, record.name, record.started,
                             record.finished)
    return column


def _record_for_user(request: HttpRequest, client, uid: str) -> JobHistory:
    record = JobHistory.objects.filter(uid=uid).first()
    if record is None:
        raise errors.NotFound(_("There is no history record “%(uid)s”.") % {"uid": uid})
    kind = next((k for k in KINDS.values() if k.kind == record.kind), None)
    if kind is None:
        raise errors.NotFound(_("There is no history record “%(uid)s”.") % {"uid": uid})
    return get_history_for_user(request, client, record.namespace, kind, record.name, uid)


def _column(request: HttpRequest, client, ref: str) -> Column:
    try:
        if ref.startswith("history:"):
            return _history_column(request, client, ref,
                                   _record_for_user(request, client, ref[len("history:"):]))
        parts = ref.split("/")
        if len(parts) != 3 or parts[1] not in KINDS:
            return Column(ref, ref, problem=_("“%(ref)s” does not name a job: use "
                                              "<project>/<type>/<name>.") % {"ref": ref})
        project, slug, name = parts
        kind = KINDS[slug]
        try:
            return _live_column(request, client, ref, project, kind, name)
        except errors.NotFound:
            record = newest_history(project, kind, name, project_uid(request, client, project))
            if record is None:
                return Column(ref, name, project, kind.label, problem=_(
                    "This job no longer exists, and it has no history record to compare "
                    "with."))
            return _history_column(request, client, f"history:{record.uid}",
                                   get_history_for_user(request, client, project, kind, name,
                                                         record.uid))
    except (errors.Forbidden, PermissionDenied):
        return Column(ref, ref, problem=_("You may not see this job."))
    except errors.NotFound as e:
        return Column(ref, ref, problem=e.message)


def _candidates(request: HttpRequest, client, columns: list[Column]) -> list[tuple[str, str]]:
    """Jobs to add: the first job's project's jobs and its history records."""
    from odh.training.status import queries
    project = next((c.namespace for c in columns if c.namespace), "")
    if not project or project not in {p.name for p in projects_for_user(request, client)}:
        return []
    taken = {c.ref for c in columns}
    choices: list[tuple[str, str]] = []
    try:
        listing = queries.list_summaries(client, [project], creatable_kinds())
    except errors.ClusterError:
        listing = None
    for s in sorted(listing.summaries if listing else [], key=lambda s: s.name):
        ref = f"{s.namespace}/{s.kind.slug}/{s.name}"
        if ref not in taken:
            choices.append((ref, f"{s.name} ({s.status})"))
    readable = {k.kind for k in KINDS.values()
                if person_may(request, client, project, Access("get", k.plural, k.group))}
    records = JobHistory.of_project(project, project_uid(request, client, project))
    for record in records.filter(kind__in=readable)[:30]:
        ref = f"history:{record.uid}"
        if ref not in taken:
            when = format_when(record.finished)
            choices.append((ref, _("%(name)s, %(outcome)s %(when)s (history)") % {
                "name": record.name, "outcome": record.outcome, "when": when}))
    return choices


def _gpu_gaps(shown: list[Column]) -> list[str]:
    """Why a job has no GPU utilization to draw, one sentence each."""
    if not settings.PROMETHEUS_URL:
        return [_("Metrics are not set up: PROMETHEUS_URL is not configured.")]
    return [_("%(name)s has not started: no GPU utilization yet.") % {"name": c.name}
            if c.status == JobStatus.PENDING else
            _("Prometheus has no GPU utilization for %(name)s.") % {"name": c.name}
            for c in shown if not c.gpu]


def _progress_gaps(shown: list[Column]) -> list[str]:
    """Why a job has no training progress to draw, one sentence each."""
    gaps = []
    for c in shown:
        if c.progress:
            continue
        if c.from_history:
            gaps.append(_("%(name)s is a history record: its logs, where progress is read "
                          "from, are gone.") % {"name": c.name})
        elif c.status == JobStatus.PENDING:
            gaps.append(_("%(name)s has not started: no progress yet.") % {"name": c.name})
        else:
            gaps.append(_("No progress was read from the logs of %(name)s.") % {"name": c.name})
    return gaps


def _series(shown: list[Column], key: str) -> list[dict]:
    # `colour`: the job's place on the page, so a job has one colour in every chart
    return [{"name": c.name, "colour": i, "x": [p[0] for p in getattr(c, key)],
             "y": [p[1] for p in getattr(c, key)]}
            for i, c in enumerate(shown) if getattr(c, key)]


def _charts(shown: list[Column]) -> tuple[dict, list[dict]]:
    """The charts' JSON (static/js/compare.js), and each chart's card: its title and a
    sentence for each job it cannot draw (all of them: the sentences in place of an empty
    chart)."""
    data = {"gpu": _series(shown, "gpu"), "progress": _series(shown, "progress"),
            "xTitle": _("Minutes since the job started"),
            "gpuTitle": _("GPU utilization (%)"), "progressTitle": _("Training done (%)")}
    cards = [{"key": "gpu", "title": data["gpuTitle"], "drawn": bool(data["gpu"]),
              "gaps": _gpu_gaps(shown)},
             {"key": "progress", "title": data["progressTitle"],
              "drawn": bool(data["progress"]), "gaps": _progress_gaps(shown)}]
    return data, cards


@require_GET
def job_compare(request: HttpRequest) -> HttpResponse:
    refs = _refs(request)
    with user_client(request) as client:
        columns = [_column(request, client, ref) for ref in refs]
        candidates = _candidates(request, client, columns) if len(columns) < MAX_JOBS else []
    shown = [c for c in columns if not c.problem]
    names = [c.name for c in shown]
    rows = [{"label": r.label, "differs": r.differs, "cells": list(zip(names, r.values,
                                                                      strict=True))}
            for r in compare([c.settings for c in shown])]
    chart, charts = _charts(shown)
    chart["training"] = training_charts(request, shown)
    return render(request, "training/job_compare.html", {
        "columns": columns, "shown": shown, "rows": rows, "candidates": candidates,
        "refs": [c.ref for c in columns], "chart": chart, "charts": charts,
        "differences": sum(r["differs"] for r in rows)})
