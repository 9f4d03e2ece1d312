"""Training progress for the pages: read a log tail with the person's token, parse it.

Where the numbers come from, and what they cost:

- Overview of a running job: one read of the launcher's (or master's, chief's; a
  TrainJob's launcher or node 0) last 200 lines with timestamps, with a short timeout (2 s
  to connect, 3 s to read); the totals a log may not print come from the job's command
  (`--epochs 90`). A job that reports its progress on itself (a TrainJob's
  `status.trainerStatus`, where the Trainer's TrainJobStatus feature gate is on) is
  believed instead, with no log read.
- Job list: only the running jobs on the page shown, at most 25, read in parallel worker
  threads with the same short timeout and an overall deadline of 4 s; a job whose log is
  slow or unreadable simply shows no bar. Answers are kept 20 s (Django's cache: Redis,
  shared by the web processes, when REDIS_URL is set), so reloading or paging back costs
  nothing.

Progress is read with the viewer's token and kept per person (a digest of the token in
the key): one person's answer is never shown to another, who may not be allowed to read
that log. The watch hub does not compute progress and its pushed rows carry none: the
row's progress cell is marked `hx-preserve`, so a push keeps the bar the page drew
(training/templates/training/job_list.html). It follows logs only while someone watches a
pod's Logs tab: keeping a tail of every running launcher would cost one open stream per
running job for the whole cluster. The parsing itself is `odh.training.logs.progress` (shared
with the SDK and CLI).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, wait

from django.core.cache import cache
from django.utils.translation import get_language

from odh.training import errors
from odh.training.cluster.access import identity
from odh.training.cluster.client import ClusterClient
from odh.training.logs.progress import Progress, hints_from_job
from odh.training.logs.running import running_progress
from odh.training.status.summary import JobStatus, JobSummary
from training.cluster import client_for_token
from training.web.language_threads import in_callers_language

log = logging.getLogger("training.progress")

TIMEOUT = (2.0, 3.0)  # connect, read
LIST_DEADLINE = 4.0
LIST_MAX_JOBS = 25
LIST_THREADS = 8
CACHE_SECONDS = 20


def job_key(summary: JobSummary) -> str:
    return f"{summary.namespace}/{summary.kind.slug}/{summary.name}"


def _cache_key(token: str, summary: JobSummary) -> str:
    """Per person (their token's digest) and job: an answer read with one person's token
    is served to that person only."""
    return (f"training-progress:{get_language()}:{identity(token)}:"
            f"{summary.uid or job_key(summary)}")


def tail_key(token: str, summary: JobSummary) -> str:
    """Where the tail a progress bar was read from is kept (per person, like the bar): the
    list's diagnoses (training/diagnoses/) read a running job's silence from it."""
    return f"training-tail:{identity(token)}:{summary.uid or job_key(summary)}"


def read_progress(client: ClusterClient, summary: JobSummary,
                  hints: tuple[int | None, int | None] = (None, None),
                  token: str = "") -> Progress | None:
    """Progress as the job reports it of itself (a TrainJob's trainerStatus: no log read),
    else from its launcher's log (the tail kept for the list's diagnoses with `token`);
    None: not running, nothing recognised."""
    def keep(pod: str, text: str) -> None:
        cache.set(tail_key(token, summary), (pod, text), CACHE_SECONDS)

    return running_progress(client, summary, hints, keep if token else None)


def for_overview(token: str, summary: JobSummary, job: dict) -> Progress | None:
    """The Overview's progress bar (one short log read); None when it cannot be told."""
    if summary.status != JobStatus.RUNNING:
        return None
    try:
        with client_for_token(token) as client:
            client.timeout = TIMEOUT
            progress = read_progress(client, summary, hints_from_job(summary.kind, job))
    except errors.ClusterError as e:
        log.info("no progress for %s: %s", job_key(summary), e.message)
        return None
    cache.set(_cache_key(token, summary), progress, CACHE_SECONDS)
    return progress


def _one(token: str, summary: JobSummary) -> Progress | None:
    with client_for_token(token) as client:
        client.timeout = TIMEOUT
        return read_progress(client, summary, token=token)


def for_rows(token: str, summaries: Iterable[JobSummary]) -> dict[str, Progress]:
    """Progress of the running jobs among these rows (bounded, parallel, failures ignored)."""
    running = [s for s in summaries if s.status == JobStatus.RUNNING][:LIST_MAX_JOBS]
    found: dict[str, Progress] = {}
    missing: list[JobSummary] = []
    for s in running:
        hit = cache.get(_cache_key(token, s), default=False)
        if hit is False:
            missing.append(s)
        elif hit is not None:
            found[job_key(s)] = hit
    if not missing:
        return found
    pool = ThreadPoolExecutor(max_workers=min(LIST_THREADS, len(missing)),
                              thread_name_prefix="progress")
    try:
        futures = {pool.submit(in_callers_language(_one), token, s): s for s in missing}
        done, _ = wait(futures, timeout=LIST_DEADLINE)
        for future in done:
            summary = futures[future]
            try:
                progress = future.result()
            except Exception as e:  # a slow or unreadable log: no bar for that row
                log.info("no progress for %s: %s", job_key(summary), e)
                continue
            cache.set(_cache_key(token, summary), progress, CACHE_SECONDS)
            if progress is not None:
                found[job_key(summary)] = progress
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return found
