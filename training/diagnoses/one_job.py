"""One job's diagnosis: computed with the person's token, cached per person and state of
the job; what its objects alone tell (the hub's pushes) and its signature."""

from __future__ import annotations

import hashlib
import logging

from django.core.cache import cache
from django.http import HttpRequest
from django.utils import translation

from odh.training.cluster.access import identity
from odh.training.diagnosis import Diagnosis, Facts, diagnose
from odh.training.diagnosis.gather import gather
from odh.training.status.queries import JobDetail
from odh.training.status.summarize import summarize
from odh.training.status.summary import JobStatus, JobSummary
from training import job_progress
from training.accounts import session
from training.cluster import client_for_token
from training.diagnoses.dismissals import dismissed
from training.diagnoses.sources import kept_for, sources_for
from training.projects import project_uid

log = logging.getLogger("training.diagnosis")
CACHE_SECONDS = 20
FINISHED_CACHE_SECONDS = 300


def row_key(summary: JobSummary) -> str:
    """The job's state as its pods and status tell (not the words its events add: a list
    computed without events and the hub's, with them, agree on it)."""
    parts = [summary.uid, str(summary.status)]
    parts += [f"{r.name}:{r.status}:{r.reason}:{r.restarts}:{r.exit_code}"
              for r in summary.replicas]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _state_key(summary: JobSummary) -> str:
    """`row_key` and what the events add (the reason and step of a waiting job)."""
    words = hashlib.sha256(f"{summary.reason}|{summary.lifecycle_step}".encode()).hexdigest()
    return f"{row_key(summary)}:{words[:16]}"


def _cache_key(token: str, summary: JobSummary, dismissed_here: frozenset[str]) -> str:
    return (f"diagnosis:{translation.get_language()}:{identity(token)}:{_state_key(summary)}:"
            f"{','.join(sorted(dismissed_here))}")


def compute(token: str, job: dict, pods: list[dict], events: list[dict], summary: JobSummary,
            dismissed_here: frozenset[str] = frozenset(), brief: bool = False,
            project: str | None = None) -> tuple[Facts, Diagnosis | None]:
    """`project`: the uid of the job's project as the person sees it (its history's
    similar runs are of that project only); None reads no history. The pods the watcher
    kept of the job (`kept_for`) count as its pods, as the cluster had them."""
    gone, tails = kept_for(token, summary, pods)
    if gone:
        pods = pods + gone
        summary = summarize(job, pods, events, summary.observed_at, summary.layout)
    sources = sources_for(token, job, summary, dismissed_here, brief, project)
    sources.logs.update(tails)
    if brief and summary.status == JobStatus.RUNNING:
        read = cache.get(job_progress.tail_key(token, summary))
        troubled = any(r.exists and (r.problem or r.restarts) for r in summary.replicas)
        if read is None and not troubled:
            return Facts(job, pods, events, summary=summary), None  # no tail: nothing read
        if read is not None:
            sources.logs = {read[0]: read[1]}
    try:
        with client_for_token(token) as client:
            facts = gather(client, job, pods, events, summary=summary, sources=sources)
    finally:
        if sources.prometheus is not None:
            sources.prometheus.close()
    return facts, diagnose(facts)


def for_detail(request: HttpRequest, detail: JobDetail) -> Diagnosis | None:
    """The job page's diagnosis (cached for this person and this state of the job)."""
    token = session.token(request)
    summary = detail.summary
    if summary.status in (JobStatus.SUCCEEDED, JobStatus.SUSPENDED):
        return None
    mine = dismissed(request, summary.uid)
    key = _cache_key(token, summary, mine)
    found = cache.get(key, default=False)
    if found is not False:
        return found
    with client_for_token(token) as client:
        uid = project_uid(request, client, summary.namespace)
    _facts, found = compute(token, detail.job, detail.pods, detail.events, summary, mine,
                            project=uid)
    # a running job's hang or GPU use changes with time alone: a shorter reuse; a failed
    # job's is final (a change of its pods or events changes the key)
    seconds = {JobStatus.RUNNING: 10, JobStatus.FAILED: FINISHED_CACHE_SECONDS}
    cache.set(key, found, seconds.get(summary.status, CACHE_SECONDS))
    return found


def object_diagnosis(job: dict, pods: list[dict], events: list[dict],
                     summary: JobSummary) -> Diagnosis | None:
    """What the objects alone tell (no logs, quotas or metrics): what the hub pushes."""
    try:
        return diagnose(Facts(job, pods, events, now=summary.observed_at, summary=summary))
    except Exception:  # a rule's bug must not stop the pushes
        log.exception("diagnosis of %s/%s failed", summary.namespace, summary.name)
        return None


def signature(summary: JobSummary, seen: Diagnosis | None) -> str:
    """Changes when the job's state does, or what its objects alone say is wrong: the hub
    pushes it, and a page whose card was made for another signature fetches a new one.
    `seen` is `object_diagnosis` of the same objects (the hub's and the page's agree)."""
    headline = seen.headline if seen is not None else ""
    return hashlib.sha256(f"{_state_key(summary)}|{headline}".encode()).hexdigest()[:24]


def job_ref(summary: JobSummary) -> str:
    return f"{summary.namespace}/{summary.kind.slug}/{summary.name}"
