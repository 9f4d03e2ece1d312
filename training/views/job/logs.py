"""The Logs tab: the last 500 lines of one pod or of all the job's pods, and downloads.

Without JavaScript this is the whole feature: pick a pod (or "All"), read its last lines.
static/js/logs.js adds following (live lines over the page's websocket, `logs`
subscriptions: training/live/log_subscriptions.py), search, a level filter, timestamps, wrap
and pause-on-scroll on top of what is rendered here.

Every read is made with the person's token. Log text is untrusted: the template escapes it
and the script only ever sets `textContent`.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.cluster.logstreams import LogChunks
from odh.training.logs.logstreams import split_line
from odh.training.status import queries
from odh.training.status.summarize import JobStatus, job_pods
from training.cluster import user_client
from training.projects import get_job_for_user, kind_or_404

TAIL_LINES = 500
ALL = "all"  # the "pod" value of the interleaved view (job pods are <job>-<role>-...)
ALL_MAX_PODS = 32  # the Launcher and the first 31 Workers
ALL_THREADS = 8  # "All" reads this many logs at once
ALL_DEADLINE = 10.0  # seconds for all of them; a log not read by then is left out (a note)


def log_pods(detail: queries.JobDetail) -> list[dict[str, Any]]:
    """Launcher first, then workers by index: the pods whose logs can be read (`restarts`:
    a pod that restarted has a crashed run to read too)."""
    restarts = {r.name: r.restarts for r in detail.summary.replicas}
    return [{"name": p.name, "role": p.role, "index": p.index, "status": p.status,
             "containers": list(p.containers), "container": p.container, "tag": p.tag,
             "label": p.label, "restarts": restarts.get(p.name, 0)}
            for p in job_pods(detail.kind, detail.job, detail.pods)]


def _no_pods_problem(status: JobStatus) -> str:
    if status == JobStatus.SUSPENDED:
        return _("This job is suspended: none of its pods are running, so there are no logs "
                 "to show. Resume it to start them.")
    if status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
        return _("The pods of this job have been removed since it finished, and their logs "
                 "with them.")
    return _("No pods are running for this job yet, so there are no logs to show.")


class _Reading:
    """One pod's log as read: its lines, and the byte limit that cut it (or None)."""

    def __init__(self, lines: list[dict], cut_at: int | None) -> None:
        self.lines = lines
        self.cut_at = cut_at


class _TooSlow(Exception):
    """The pod's log was not read before the deadline."""


def _read(client: ClusterClient, namespace: str, pod: dict, tail: int,
          previous: bool = False) -> _Reading:
    text = client.read_log(namespace, pod["name"], container=pod["container"] or None,
                           tail_lines=tail, timestamps=True, previous=previous)
    lines = []
    for raw in text.splitlines():
        stamp, body = split_line(raw)
        lines.append({"ts": stamp, "time": stamp[11:23], "text": body, "tag": pod["tag"],
                      "pod": pod["name"]})
    return _Reading(lines, getattr(text, "cut_at", None))


def read_logs(client: ClusterClient, namespace: str, pods: list[dict], tail: int,
              deadline: float | None = None,
              previous: bool = False) -> list[_Reading | Exception]:
    """Each pod's reading, or what went wrong reading it (in the order of `pods`).

    Several pods are read in parallel (ALL_THREADS at a time) within `deadline` seconds
    (ALL_DEADLINE) for them all; a log not read by then is `_TooSlow` (its read is
    abandoned). One pod is read here, with the client's own timeouts."""
    deadline = ALL_DEADLINE if deadline is None else deadline
    if len(pods) == 1:
        try:
            return [_read(client, namespace, pods[0], tail, previous)]
        except Exception as e:  # told to the caller, as for several pods
            return [e]
    results: list[_Reading | Exception] = [_TooSlow() for _ in pods]
    pool = ThreadPoolExecutor(max_workers=min(ALL_THREADS, len(pods)),
                              thread_name_prefix="logs")
    try:
        futures = {pool.submit(_read, client, namespace, p, tail): i
                   for i, p in enumerate(pods)}
        done, _pending = wait(futures, timeout=deadline)
        for future in done:
            error = future.exception()
            results[futures[future]] = error if error is not None else future.result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return results


def no_log_access(project: str) -> str:
    return _("You may not read logs in the project “%(project)s”: ask an administrator of "
             "the project for the view role there (reading logs needs get on pods/log).") % {
                 "project": project}


def logs_context(request: HttpRequest, client: ClusterClient,
                 detail: queries.JobDetail) -> dict[str, Any]:
    pods = log_pods(detail)
    namespace = detail.job["metadata"]["namespace"]
    chosen = request.GET.get("pod", "")
    show_all = chosen == ALL and len(pods) > 1
    pod = None if show_all else next((p for p in pods if p["name"] == chosen),
                                     pods[0] if pods else None)
    shown = pods[:ALL_MAX_PODS] if show_all else ([pod] if pod else [])
    # the crashed run: one pod's container before it last restarted (it has ended: no
    # following), what the diagnosis' "Read the log of Worker 1's crashed run" opens
    previous = bool(request.GET.get("previous") == "1" and pod is not None and not show_all
                    and pod["restarts"])
    context: dict[str, Any] = {
        "log_pods": pods, "log_pod": pod, "log_all": show_all, "log_lines": [],
        "log_previous": previous,
        "log_problem": "", "log_notes": [], "log_tail": TAIL_LINES,
        "log_sources": [{"namespace": namespace, "pod": p["name"], "container": p["container"],
                         "tag": p["tag"]} for p in shown],
        "log_truncated_pods": max(0, len(pods) - ALL_MAX_PODS) if show_all else 0,
        "log_follow": not previous and detail.summary.status in (JobStatus.RUNNING,
                                                                 JobStatus.PENDING),
    }
    if previous:
        context["log_sources"] = []  # the page follows the current run, not this one
    if not shown:
        context["log_problem"] = _no_pods_problem(detail.summary.status)
        return context
    per_pod = TAIL_LINES if not show_all else max(50, TAIL_LINES // len(shown))
    readings: list[list[dict]] = []
    notes: list[str] = context["log_notes"]
    for p, result in zip(shown, read_logs(client, namespace, shown, per_pod,
                                          previous=previous), strict=True):
        prefix = {"pod": p["tag"]}
        if isinstance(result, _Reading):
            readings.append(result.lines)
            if result.cut_at:
                size = {"size": filesizeformat(result.cut_at), **prefix}
                notes.append((_("[%(pod)s] only the first %(size)s of these lines are shown "
                                "(they are very long): download the log to read it whole.")
                              if show_all else
                              _("Only the first %(size)s of these lines are shown (they are "
                                "very long): download the log to read it whole.")) % size)
        elif isinstance(result, errors.Forbidden):
            # the job may be seen but not its logs: say so on the job's page
            context.update(log_problem=no_log_access(namespace), log_sources=[],
                           log_follow=False)
            return context
        elif isinstance(result, errors.NotFound):
            if not show_all:
                context["log_problem"] = _("The pod %(pod)s no longer exists.") % {
                    "pod": p["name"]}
                return context
        elif isinstance(result, (errors.Unauthorized, errors.ClusterUnavailable)):
            raise result
        elif isinstance(result, _TooSlow):
            notes.append(_("[%(pod)s] its log could not be read in time: choose the pod "
                           "above to read it alone.") % prefix)
        elif isinstance(result, errors.ClusterError):
            # 400 from the kubelet side: the container is still waiting to start. Not the end
            # of it: the empty log stays on the page, and following shows the first lines.
            values = {"reason": result.message, **prefix}
            notes.append((_("[%(pod)s] no logs yet: %(reason)s") if show_all
                           else _("No logs yet: %(reason)s")) % values)
        else:
            raise result
    # interleaved by time (each pod's lines are in order already); the newest TAIL_LINES
    merged = list(heapq.merge(*readings, key=lambda line: line["ts"]))
    context["log_lines"] = merged[-TAIL_LINES:]
    return context


class _LogDownload:
    """The body of a log download under ASGI (daphne): an async iterator reading the next
    chunk in a worker thread only when the last one was sent, so the log is never held
    whole. Django calls `close()` when the response ends, sent or cut off by the browser:
    it ends the upstream read and closes the person's client."""

    def __init__(self, first: bytes, chunks: LogChunks, client: ClusterClient) -> None:
        self._first: bytes | None = first
        self._chunks = chunks
        self._client = client
        self._closed = False

    def __aiter__(self) -> _LogDownload:
        return self

    async def __anext__(self) -> bytes:
        if self._closed:
            raise StopAsyncIteration
        if self._first is not None:
            first, self._first = self._first, None
            if first:
                return first
        chunk = await sync_to_async(next, thread_sensitive=False)(self._chunks, None)
        if chunk is None:
            raise StopAsyncIteration
        return chunk

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._chunks.close()  # ends the upstream read, even one running in its thread
        finally:
            self._client.close()


@require_GET
def job_log_download(request: HttpRequest, project: str, kind: str, name: str,
                     pod: str) -> HttpResponse:
    job_kind = kind_or_404(kind)
    client = user_client(request)
    try:
        detail = get_job_for_user(request, client, project, job_kind, name)
        chosen = next((p for p in log_pods(detail) if p["name"] == pod), None)
        if chosen is None:
            raise Http404(_("That pod does not belong to this job."))
        chunks = client.stream_log(project, pod, container=chosen["container"] or None)
        first = next(chunks, b"")
    except BaseException:
        client.close()
        raise

    def body() -> Iterator[bytes]:
        try:
            yield first
            yield from chunks
        finally:
            try:
                chunks.close()
            finally:
                client.close()

    # under daphne (ASGI) an async body, or Django would read the whole log into a list
    # first; a synchronous server streams the generator as it is
    content = _LogDownload(first, chunks, client) if isinstance(request, ASGIRequest) \
        else body()
    response = StreamingHttpResponse(content, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{pod}.log"'
    return response
