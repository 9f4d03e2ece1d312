"""Read-side questions the dashboard (and the SDK) ask: which jobs, how are they doing.

Each function gathers what it needs with as few API calls as it can (one list per kind,
one pod list for all jobs) and hands plain data to `status.summarize`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.cluster.events import event_time
from odh.training.kinds import JobKind, kind_for_object, pod_job_name
from odh.training.kinds.base import LayoutRef
from odh.training.status.summarize import JobSummary, summarize

Obj = dict[str, Any]


def _pods_by_job(pods: list[Obj]) -> dict[tuple[str, str], list[Obj]]:
    grouped: dict[tuple[str, str], list[Obj]] = defaultdict(list)
    for pod in pods:
        meta = pod.get("metadata") or {}
        job = pod_job_name(meta.get("labels") or {})
        if job:
            grouped[(meta.get("namespace", ""), job)].append(pod)
    return grouped


def read_layout(client: ClusterClient, job: Obj,
                known: dict[LayoutRef, Obj | None] | None = None) -> Obj | None:
    """The object the job's kind leaves its layout to (`JobKind.layout_ref`: a TrainJob's
    runtime), read with `client`; None when there is none, or it may not be read or is
    gone (then the spec alone says what pods to expect). `known`: those read already (a
    list's jobs share a few runtimes), added to."""
    kind = kind_for_object(job)
    ref = kind.layout_ref(job) if kind is not None else None
    if ref is None:
        return None
    if known is not None and ref in known:
        return known[ref]
    try:
        layout: Obj | None = client.get_custom(ref.group, ref.version, ref.plural, ref.name,
                                               ref.namespace)
    except errors.ClusterError:
        layout = None
    if known is not None:
        known[ref] = layout
    return layout


@dataclass
class Listing:
    """Jobs of the asked namespaces, and what could not be read: namespaces (a list there
    was refused), job kinds and pods that could not be listed in every namespace (then
    listed only in the fallback namespaces, if any)."""

    summaries: list[JobSummary] = field(default_factory=list)
    # (namespace, kind slug, name) -> (the job, its pods): what each summary was made of
    objects: dict[tuple[str, str, str], tuple[Obj, list[Obj]]] = field(default_factory=dict)
    forbidden_namespaces: list[str] = field(default_factory=list)
    forbidden_kinds: list[JobKind] = field(default_factory=list)
    pods_forbidden: bool = False
    # (namespace, kind slug, name) -> every kept event that may be about the job, or None
    # where the person may not list events there: set where the jobs come from the watch
    # hub's index (which keeps them), so that a row's diagnosis reads no project's events
    indexed_events: Callable[[tuple[str, str, str]], list[Obj] | None] | None = None


Fallback = Callable[[], list[str]]


def _per_namespace(list_one: Callable[[str], list[Obj]], namespaces: list[str],
                   listing: Listing | None) -> list[Obj]:
    items: list[Obj] = []
    for ns in namespaces:
        try:
            items.extend(list_one(ns))
        except errors.Forbidden:
            if listing is not None and ns not in listing.forbidden_namespaces:
                listing.forbidden_namespaces.append(ns)
        except errors.NotFound:
            continue  # the namespace went away between listing projects and jobs
    return items


def _list_kind(client: ClusterClient, kind: JobKind, namespaces: list[str] | None,
               listing: Listing, fallback: Fallback | None) -> list[Obj]:
    if namespaces is not None:
        return _per_namespace(lambda ns: client.list_jobs(kind, ns), namespaces, listing)
    try:
        return client.list_jobs(kind)
    except errors.Forbidden:
        # allowed for some kinds everywhere but not this one: the others still show
        listing.forbidden_kinds.append(kind)
        return _per_namespace(lambda ns: client.list_jobs(kind, ns),
                              fallback() if fallback else [], listing)


def _list_pods(client: ClusterClient, namespaces: list[str] | None, listing: Listing,
               fallback: Fallback | None) -> list[Obj]:
    if namespaces is not None:
        return _per_namespace(client.list_job_pods, namespaces, None)
    try:
        return client.list_job_pods(None)
    except errors.Forbidden:
        listing.pods_forbidden = True
        return _per_namespace(client.list_job_pods, fallback() if fallback else [], None)


def list_summaries(client: ClusterClient, namespaces: list[str] | None, kinds: list[JobKind],
                   now: datetime | None = None, fallback: Fallback | None = None,
                   with_pods: bool = True) -> Listing:
    """Summaries of every job of `kinds` in `namespaces` (None: cluster-wide).

    Cluster-wide, a kind (or the pods) the person may not list everywhere is not an
    error: it is named in the listing (`forbidden_kinds`, `pods_forbidden`) and listed in
    the namespaces `fallback()` gives instead (the person's projects), if any. Without
    `with_pods` the summaries are what the jobs alone say (for someone who may not list
    the pods)."""
    now = now or datetime.now(UTC)
    listing = Listing()
    asked = None if namespaces is None else list(namespaces)
    fallback_once = _once(fallback) if fallback is not None else None
    jobs: list[tuple[JobKind, Obj]] = []
    for kind in kinds:
        try:
            jobs.extend((kind, j) for j in _list_kind(client, kind, asked, listing,
                                                      fallback_once))
        except errors.NotFound:
            continue  # this kind's API is not installed
    pods = _pods_by_job(_list_pods(client, asked, listing, fallback_once)) if with_pods else {}
    layouts: dict[LayoutRef, Obj | None] = {}
    for kind, job in jobs:
        meta = job.get("metadata") or {}
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        job_pods = pods.get((namespace, name), [])
        listing.summaries.append(summarize(job, job_pods, None, now,
                                           read_layout(client, job, layouts)))
        listing.objects[(namespace, kind.slug, name)] = (job, job_pods)
    return listing


def _once(fallback: Fallback) -> Fallback:
    """`fallback`, asked at most once."""
    answer: list[list[str]] = []

    def ask() -> list[str]:
        if not answer:
            answer.append(list(fallback()))
        return answer[0]
    return ask


@dataclass
class JobDetail:
    kind: JobKind
    job: Obj
    pods: list[Obj]
    events: list[Obj]
    summary: JobSummary


def job_detail(client: ClusterClient, kind: JobKind, namespace: str, name: str,
               now: datetime | None = None,
               known_events: Callable[[], list[Obj] | None] | None = None,
               known_pods: Callable[[], list[Obj] | None] | None = None) -> JobDetail:
    """The job, its pods and events, read with `client`. `known_events` and `known_pods`:
    the events that may be about the job and its pods as a watch already keeps them (the
    dashboard's hub), or None: then they are listed (the project's events: a project with
    a thousand jobs has many; its pods by label, which a server answers from all of the
    project's pods)."""
    now = now or datetime.now(UTC)
    job = client.get_job(kind, namespace, name)
    job.setdefault("apiVersion", kind.api_version)
    job.setdefault("kind", kind.kind)
    pods = known_pods() if known_pods is not None else None
    if pods is None:
        pods = client.list_job_pods(namespace, name, kind)
    candidates = known_events() if known_events is not None else None
    if candidates is None:
        candidates = client.list_events(namespace)
    events = job_events(kind, job, pods, candidates)
    return JobDetail(kind, job, pods, events,
                     summarize(job, pods, events, now, read_layout(client, job)))


def job_events(kind: JobKind, job: Obj, pods: list[Obj], events: list[Obj]) -> list[Obj]:
    """The events about a job, its pods and its launcher Job, newest first.

    The job page and the watch hub both choose events this way, so what is pushed to a
    page is what reloading it would show."""
    name = str((job.get("metadata") or {}).get("name", ""))
    uids = {(job.get("metadata") or {}).get("uid", "")}
    uids.update((p.get("metadata") or {}).get("uid", "") for p in pods)
    uids.discard("")

    def concerns(event: Obj) -> bool:
        about = event.get("involvedObject") or {}
        if about.get("uid") in uids:
            return True
        # what its operator made for it (an MPIJob's launcher Job, a TrainJob's JobSet and
        # its Jobs) and the pods it already removed (cleanPodPolicy, a Job's backoff limit)
        # still explain what happened; an earlier job of its name is not this one
        about_kind = str(about.get("kind") or "")
        return about_kind != kind.kind and \
            kind.event_job_name(about_kind, str(about.get("name") or "")) == name

    chosen = [e for e in events if concerns(e)]
    # newest first, by the time each event last happened (not as strings: the API mixes
    # second and microsecond precision)
    never = datetime.min.replace(tzinfo=UTC)
    chosen.sort(key=lambda e: event_time(e) or never, reverse=True)
    return chosen
