"""A job's TensorBoard (docs/artifacts.md, "TensorBoard"): started on request from the
Artifacts tab as the person (TENSORBOARD_RUNNER: a local process or a pod of theirs),
reached only through the dashboard at a path under the job's page, where every request is
checked against the person's own right to read the job, and stopped when unused."""

from __future__ import annotations

import requests
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from odh.training.artifacts.tensorboard import job_logdirs, no_event_files
from odh.training.cluster.access import identity
from odh.training.status.queries import JobDetail
from training.accounts import session
from training.cluster import user_client
from training.projects import get_job_for_user, kind_or_404
from training.tensorboards import runners
from training.tensorboards.boards import BOARDS, FAILED, RUNNING, STARTING, Board, Key
from training.tensorboards.proxy import NotForwarded, forward, may_forward
from training.views.job.artifacts import artifacts_for, lister_settings


def _person(request: HttpRequest) -> str:
    return identity(session.token(request))[:16]


def _key(request: HttpRequest, project: str, kind_slug: str, name: str) -> Key:
    return (_person(request), project, kind_slug, name)


def tensorboard_context(request: HttpRequest, detail: JobDetail) -> dict:
    """What the TensorBoard part of the Artifacts tab shows."""
    s = detail.summary
    args = [s.namespace, s.kind.slug, s.name]
    return {"runner": settings.TENSORBOARD_RUNNER,
            "board": BOARDS.get(_key(request, *args)),
            "url": reverse("training-job-tensorboard", args=args),
            "proxy_url": reverse("training-job-tensorboard-root", args=args),
            "job_name": s.name,
            "idle_minutes": max(1, round(settings.TENSORBOARD_IDLE_SECONDS / 60))}


def _start(request: HttpRequest, client, detail: JobDetail) -> Board:
    s = detail.summary
    args = [s.namespace, s.kind.slug, s.name]
    runner = settings.TENSORBOARD_RUNNER
    board = Board(_key(request, *args), runner, session.token(request),
                  reverse("training-job-tensorboard-root", args=args).rstrip("/"),
                  finished=s.is_finished)
    artifacts = artifacts_for(request, client, detail)
    logdirs = job_logdirs(artifacts)
    if not logdirs:
        board.state = FAILED
        board.message = no_event_files()
        if artifacts.refusal is not None:
            board.message = artifacts.refusal.message
        return BOARDS.start(board, lambda b: None)
    if runner == "pod":
        return BOARDS.start(board, lambda b: runners.start_pod(b, b.key[0], logdirs))
    lister = lister_settings()
    return BOARDS.start(board, lambda b: runners.start_local(b, s.kind, detail.job, artifacts,
                                                             lister))


@require_http_methods(["GET", "POST"])
def job_tensorboard(request: HttpRequest, project: str, kind: str, name: str) -> HttpResponse:
    """The job's TensorBoard: its state (GET, polled while it starts), started (POST)."""
    job_kind = kind_or_404(kind)
    with user_client(request) as client:
        detail = get_job_for_user(request, client, project, job_kind, name)
        if request.method == "POST" and settings.TENSORBOARD_RUNNER:
            board = BOARDS.get(_key(request, project, job_kind.slug, name))
            if board is None or board.state not in (STARTING, RUNNING):
                _start(request, client, detail)
            if not request.htmx:
                return redirect(reverse("training-job-tensorboard", args=[project, job_kind.slug,
                                                                          name]))
    context = {"summary": detail.summary, "project": project, "kind": job_kind,
               "tb": tensorboard_context(request, detail)}
    if request.htmx:
        return render(request, "training/tensorboard.html#tensorboard-status", context)
    return render(request, "training/tensorboard.html", context)


@csrf_exempt  # GET and HEAD, and TensorBoard's read-only queries with its own header: proxy.py
def job_tensorboard_proxy(request: HttpRequest, project: str, kind: str, name: str,
                          rest: str = "") -> HttpResponse:
    """A request to the person's TensorBoard for the job, after the cluster said (with the
    person's token) that they may still read the job."""
    job_kind = kind_or_404(kind)
    try:
        may_forward(request, rest)
    except NotForwarded as e:
        return HttpResponse(_("The dashboard passes only TensorBoard's reads to it."),
                            status=e.status, content_type="text/plain; charset=utf-8")
    with user_client(request) as client:
        client.get_job(job_kind, project, name)  # a refusal is the errors middleware's page
    board = BOARDS.get(_key(request, project, job_kind.slug, name))
    if board is None or board.state != RUNNING:
        job_url = reverse("training-job-tensorboard", args=[project, job_kind.slug, name])
        return render(request, "training/tensorboard.html#tensorboard-not-running",
                      {"job_url": job_url, "board": board, "job_name": name,
                       "idle_minutes": max(1, round(settings.TENSORBOARD_IDLE_SECONDS / 60))},
                      status=404)
    BOARDS.touch(board)
    try:
        return forward(request, board.upstream)
    except requests.RequestException:
        return HttpResponse(_("TensorBoard does not answer: start it again from the job's "
                              "Artifacts tab."), status=502,
                            content_type="text/plain; charset=utf-8")
