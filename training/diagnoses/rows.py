"""The job list's diagnoses: the rows with something to say, computed in parallel within
a deadline, cached per person and row state."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

from django.core.cache import cache
from django.utils import translation

from odh.training import errors
from odh.training.cluster.access import identity
from odh.training.diagnosis import Diagnosis
from odh.training.status.queries import job_events
from odh.training.status.summarize import summarize
from odh.training.status.summary import JobStatus, JobSummary
from training.cluster import client_for_token
from training.diagnoses.one_job import (
    CACHE_SECONDS,
    FINISHED_CACHE_SECONDS,
    compute,
    job_ref,
    object_diagnosis,
    row_key,
)
from training.web.language_threads import in_callers_language

log = logging.getLogger("training.diagnosis")
LIST_MAX_JOBS = 25
LIST_THREADS = 6
LIST_DEADLINE = 5.0


def wants_diagnosis(summary: JobSummary) -> bool:
    """Rows with something to say: failed, waiting, a pod in trouble, or running (a hang;
    told from the tail its progress bar was read from, so it costs no read of its own)."""
    return summary.status in (JobStatus.FAILED, JobStatus.PENDING, JobStatus.RUNNING)


def _row_key(token: str, summary: JobSummary) -> str:
    # in the language it was written in: each person may switch
    return f"diagnosis-row:{translation.get_language()}:{identity(token)}:{row_key(summary)}"


@dataclass(frozen=True)
class RowDiagnosis:
    """A list row's line (`diagnosis`, None for none) and what its objects alone tell
    (`seen`, what the hub pushes: the cell's id carries its scenario, see
    `row_cell_context`)."""

    diagnosis: Diagnosis | None
    seen: Diagnosis | None


def rows_wanted(summaries: list[JobSummary]) -> list[JobSummary]:
    return [s for s in summaries if wants_diagnosis(s)][:LIST_MAX_JOBS]


def _waiting_namespaces(wanted: list[JobSummary]) -> set[str]:
    # the events say why a job failed or waits (a quota refusal, an invalid job)
    return {s.namespace for s in wanted if s.status in (JobStatus.FAILED, JobStatus.PENDING)}


def indexed_row_events(summaries: list[JobSummary], indexed_events
                       ) -> dict[str, list[dict]]:
    """The events `for_rows` needs, by row, from the watch hub's index (`Listing.
    indexed_events`; None: no hub here, {} is returned): asked while the person's client is
    open, since it may have to ask the cluster whether they may list events."""
    if indexed_events is None:
        return {}
    # every row's (in memory already): its cell's id carries what the objects tell with
    # them, as the hub's pushes of the row do
    found = {}
    for s in rows_wanted(summaries):
        events = indexed_events((s.namespace, s.kind.slug, s.name))
        if events is not None:
            found[job_ref(s)] = events
    return found


def for_rows(token: str, summaries: list[JobSummary],
             objects: dict[tuple[str, str, str], tuple[dict, list[dict]]],
             dismissed_by_uid: dict[str, frozenset[str]] | None = None,
             known_events: dict[str, list[dict]] | None = None,
             ) -> dict[str, RowDiagnosis]:
    """The lines of the rows shown, by "<ns>/<kind>/<name>", within LIST_DEADLINE seconds
    in all (a row not done by then shows its status and step only). The events of a row
    in `known_events` (`indexed_row_events`) are not read again: only the projects of the
    other waiting rows have their events listed."""
    deadline = time.monotonic() + LIST_DEADLINE
    dismissed_by_uid = dismissed_by_uid or {}
    known_events = known_events or {}
    wanted = rows_wanted(summaries)
    waiting = _waiting_namespaces(wanted)
    events = _events_by_namespace(token, {s.namespace for s in wanted if s.namespace in waiting
                                          and job_ref(s) not in known_events}, deadline)
    found: dict[str, RowDiagnosis] = {}
    work = []
    for s in wanted:
        job, pods = objects.get((s.namespace, s.kind.slug, s.name), ({}, []))
        if not job:
            continue
        candidates = known_events.get(job_ref(s), events.get(s.namespace))
        mine = job_events(s.kind, job, pods, candidates) if candidates is not None else []
        # summarized again with its events, as the job's page and the hub do
        summary = summarize(job, pods, mine, s.observed_at, s.layout) if mine else s
        seen = object_diagnosis(job, pods, mine, summary)
        hit = cache.get(_row_key(token, summary), default=False)
        if hit is False:
            work.append((s, summary, job, pods, mine, seen))
        else:
            found[job_ref(s)] = RowDiagnosis(hit, seen)
    if not work:
        return found
    pool = ThreadPoolExecutor(max_workers=min(LIST_THREADS, len(work)),
                              thread_name_prefix="diagnosis")
    try:
        futures = {}
        for item in work:
            s, summary, job, pods, mine, _seen = item
            mine_dismissed = dismissed_by_uid.get(s.uid, frozenset())
            futures[pool.submit(in_callers_language(_row_task), token, summary, job, pods,
                                mine, mine_dismissed, deadline)] = item
        done, _late = wait(futures, timeout=max(0.0, deadline - time.monotonic()))
        for future in done:
            s, summary, _job, _pods, _mine, seen = futures[future]
            try:
                diagnosis = future.result()
            except Exception as e:  # slow or refused: that row shows its status only
                log.info("no diagnosis for %s: %s", job_ref(s), e)
                continue
            # a failed job's state is final (a change of its pods changes the key)
            cache.set(_row_key(token, summary), diagnosis,
                      FINISHED_CACHE_SECONDS if s.status == JobStatus.FAILED else CACHE_SECONDS)
            found[job_ref(s)] = RowDiagnosis(diagnosis, seen)
    finally:
        # threads still reading finish on their own (each read is bounded): the page
        # does not wait for them
        pool.shutdown(wait=False, cancel_futures=True)
    return found


def _row_task(token: str, summary: JobSummary, job: dict, pods: list[dict],
              events: list[dict], dismissed_here: frozenset[str],
              deadline: float) -> Diagnosis | None:
    _facts, diagnosis = compute(token, job, pods, events, summary, dismissed_here, brief=True)
    if diagnosis is not None and diagnosis.scenario == "possible-hang" and \
            deadline - time.monotonic() > 1.0:
        # quiet, as far as the log tells: the page asks Prometheus whether the GPUs are
        # idle too, so ask the same before saying so here
        _facts, diagnosis = compute(token, job, pods, events, summary, dismissed_here)
    elif diagnosis is not None and diagnosis.scenario == "possible-hang":
        return None  # no time to ask: say nothing rather than something the page may not
    return diagnosis


def _events_by_namespace(token: str, namespaces: set[str],
                         deadline: float) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    with client_for_token(token) as client:
        for namespace in sorted(namespaces):
            left = deadline - time.monotonic()
            if left < 0.5:
                break
            client.timeout = (min(2.0, left), min(3.0, left))
            try:
                found[namespace] = client.list_events(namespace)
            except errors.ClusterError as e:
                log.info("no events of %s for the list's diagnoses: %s", namespace, e.message)
    return found
