"""A (re)connecting socket's snapshot from the watch hub's index, when the hub runs in this
process and has listed everything: no API read per viewer. The person's access was
reviewed before (subscriptions.check_access: one SelfSubjectAccessReview per person,
project and question, kept a minute), so they get here what they could read themselves;
the index is as current as the hub's watches (their resourceVersion), and a change it
has not seen yet is pushed as soon as it does. Anything the index does not hold (a job
created a moment ago, a web process without the hub) is read from the API as before. The
job list page takes its jobs from here too (`hub_listing`, training/projects.py), and the
admin overview its jobs, their pods and the quotas (`hub_cluster_state`).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import datetime
from typing import Any, TypeVar

from odh.training.kinds import JobKind
from odh.training.status.jobindex import JobData
from odh.training.status.queries import JobDetail, Listing, job_events
from odh.training.status.summarize import summarize
from training.live.hub import get_hub

T = TypeVar("T")


def _ready_hub():
    """The hub running in this process once it has listed everything, else None."""
    hub = get_hub()
    return hub if hub is not None and hub.running and hub.ready.is_set() else None


def job_state(kind: JobKind, namespace: str, name: str) -> tuple[JobData, tuple] | None:
    """The job's objects in the index and a version of them (what they are made of: their
    resourceVersions), or None: ask the API."""
    hub = _ready_hub()
    data = hub.index.job_data((namespace, kind.slug, name)) if hub is not None else None
    if data is None:
        return None
    version = (_rv(data.job), tuple(sorted(_rv(p) for p in data.pods)),
               tuple(sorted(_rv(e) for e in data.events)), _rv(data.layout or {}))
    return data, version


def indexed_job_events(kind: JobKind, namespace: str, name: str) -> list[dict] | None:
    """The events that may be about the job, as the ready hub in this process keeps them
    (queries.job_events chooses among them), or None: ask the API."""
    hub = _ready_hub()
    data = hub.index.job_data((namespace, kind.slug, name)) if hub is not None else None
    return list(data.events) if data is not None else None


def indexed_job_pods(kind: JobKind, namespace: str, name: str) -> list[dict] | None:
    """The job's pods as the ready hub in this process keeps them, or None: ask the API."""
    hub = _ready_hub()
    data = hub.index.job_data((namespace, kind.slug, name)) if hub is not None else None
    return list(data.pods) if data is not None else None


def job_object(kind: JobKind, data: JobData) -> dict:
    """The job as the API answers a get (a watch's objects lack apiVersion and kind)."""
    return {"apiVersion": kind.api_version, "kind": kind.kind, **data.job}


def detail_of(kind: JobKind, data: JobData, now: datetime) -> JobDetail:
    job = job_object(kind, data)
    events = job_events(kind, job, data.pods, data.events)
    return JobDetail(kind, job, data.pods, events,
                     summarize(job, data.pods, events, now, data.layout))


def _rv(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('uid', '')}@{meta.get('resourceVersion', '')}"


class SharedRenders:
    """What one state of a job renders to, shared by the viewers that connect meanwhile:
    a hundred sockets opening the same job's page render it once (single flight), not a
    hundred times. Kept `ttl` seconds (the ages in it are counted on by the page)."""

    def __init__(self, ttl: float = 2.0, size: int = 256,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.size = size
        self.clock = clock
        self._items: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()
        self._making: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()
        self.made = 0

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        hit = self._fresh(key)
        if hit is not None:
            return hit
        with self._lock:
            making = self._making.setdefault(key, threading.Lock())
        with making:  # the first one renders, the others wait for it
            hit = self._fresh(key)
            if hit is not None:
                return hit
            value = make()
            with self._lock:
                self.made += 1
                self._items[key] = (self.clock(), value)
                self._items.move_to_end(key)
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
                self._making.pop(key, None)
            return value

    def _fresh(self, key: Hashable) -> Any:
        with self._lock:
            found = self._items.get(key)
            if found is None or self.clock() - found[0] > self.ttl:
                return None
            return found[1]


RENDERS = SharedRenders()


class _IndexObjects(dict):
    """`Listing.objects` read from the index when asked (the list asks for its page's
    rows only), not copied for every job."""

    def __init__(self, index, with_pods: set[str] | None) -> None:
        super().__init__()
        self.index = index
        self.with_pods = with_pods  # namespaces whose pods may be shown; None: all

    def get(self, key, default=None):
        data = self.index.job_data(key)
        if data is None:
            return default
        shown = self.with_pods is None or key[0] in self.with_pods
        return job_object(data.kind, data), (data.pods if shown else [])


def hub_listing(namespaces: list[str] | None, kinds: list[JobKind],
                may_list: Callable[[str, JobKind], bool], may_see_pods: Callable[[str], bool],
                now: datetime, may_see_events: Callable[[str], bool] | None = None,
                ) -> Listing | None:
    """The list page's jobs as the watch hub in this process keeps them summarized (no
    API list, no summary made per request), or None: no ready hub here, ask the API.

    Only what the person may list: `may_list(namespace, kind)` and `may_see_pods(namespace)`
    are their access answers (SelfSubjectAccessReviews, cached); a namespace where they may
    not list MPIJobs is reported refused, as the API would; where they may not list pods,
    the jobs are summarized from the job objects alone. With `may_see_events`, the listing
    also answers each job's kept events where they may list events (`indexed_events`)."""
    hub = _ready_hub()
    if hub is None:
        return None
    index = hub.index
    # the kinds the dashboard creates: a project where they may list none of them is refused
    by_slug = {k.slug: k for k in kinds}
    created_here = {k.slug for k in kinds if k.creatable}
    listing = Listing()
    asked = sorted({k[0] for k in index.job_keys()}) if namespaces is None else namespaces
    allowed: dict[str, set[str]] = {}
    pods_shown: set[str] = set()
    for ns in asked:
        allowed[ns] = {k.slug for k in kinds if may_list(ns, k)}
        if namespaces is not None and created_here and not created_here & allowed[ns]:
            listing.forbidden_namespaces.append(ns)
        if may_see_pods(ns):
            pods_shown.add(ns)
    listing.objects = _IndexObjects(index, pods_shown)
    if may_see_events is not None:
        def indexed_events(key: tuple[str, str, str]) -> list[dict] | None:
            if not may_see_events(key[0]):
                return None
            data = index.job_data(key)
            return data.events if data is not None else []

        listing.indexed_events = indexed_events
    for key, summary in list(hub.summaries.items()):
        ns, slug, _name = key
        if slug not in allowed.get(ns, ()):
            continue
        if ns not in pods_shown:
            data = index.job_data(key)
            if data is None:
                continue
            summary = summarize(job_object(by_slug[slug], data), [], None, now,
                                data.layout)
        listing.summaries.append(summary)
    return listing


def hub_cluster_state(client, kinds: list[JobKind], now: datetime):
    """The admin overview's `capacity.ClusterState` with the jobs (summarized by the hub),
    what every pod holds and the quotas from the index; only nodes and Kueue's queues are
    read, with `client` (the administrator's), and the pods of no training job
    (`cluster.client.other_pods_selector`) while the hub has not listed them yet. None: no
    ready hub here, read it all (`capacity.read_cluster`).

    For a person who may list pods and every served job kind in every project (asked by
    the caller): what they would read themselves, as current as the hub's watches."""
    from odh.training import errors
    from odh.training.overviews.cluster import ClusterState

    hub = _ready_hub()
    if hub is None:
        return None
    watched = {k.slug for k in hub.kinds}
    served = [k for k in kinds if k.slug in watched]
    slugs = {k.slug: k for k in served}
    index = hub.index
    objects = index.job_objects()  # as indexed: with apiVersion and kind, read-only
    jobs = [(objects[key], summary) for key, summary in list(hub.summaries.items())
            if key[1] in slugs and key in objects]
    nodes = client.list_nodes()
    try:
        queues = client.list_cluster_queues()
    except errors.Forbidden:
        queues = None
    # the indexed pods' requests come added up: what the overview needs of 50,000 pods
    # is their sums by node and project, kept as they change; the other pods' too, once
    # the hub has listed them (else they are listed here)
    others = hub.other_pods_watch
    listed = others is not None and others.synced.is_set() and not others.failing
    pods = [] if listed else client.list_other_pods()
    def parts(job: dict, summary) -> tuple[list[dict], list[dict]]:
        data = index.job_data((summary.namespace, summary.kind.slug, summary.name))
        if data is None:
            return [], []
        return data.pods, job_events(summary.kind, job, data.pods, data.events)

    return ClusterState(nodes=nodes, pods=pods, holdings=index.holdings(),
                        quotas=index.all_quotas(), jobs=jobs, kinds=served, queues=queues,
                        observed_at=now, parts=parts)
