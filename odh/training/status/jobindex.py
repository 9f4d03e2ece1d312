"""What the watch hub knows about training jobs, kept up to date from watch events.

`JobIndex` holds the jobs of every kind by (namespace, kind slug, name), their pods by
(namespace, job name), the events that may be about them (bounded per job) and resource
quotas by namespace. `apply()` takes one watch event and answers which jobs it may have
changed; `job_data()` hands back what `status.summarize` and `queries.job_events` need to
say how one job is doing, the same way the dashboard's pages do with a person's token.

Objects are kept as they are handed in, shared with the watch that read them: the hub's
watches hand them in compact (`compact.compact`, without managedFields for pods and Events).

Thread-safe: watches call `apply()` from their own threads.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from odh.training.capacity.allocation import Holdings
from odh.training.cluster.events import event_time, involved
from odh.training.kinds import KINDS, JobKind, kind_for_object, pod_job_name

Obj = dict[str, Any]
JobKey = tuple[str, str, str]  # (namespace, kind slug, name)

_NEVER = datetime.min.replace(tzinfo=UTC)


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def candidate_job_name(event: Obj) -> str | None:
    """The name of the training job an event may be about, from what it involves alone:
    the job itself, one of its pods or an object its operator makes for it, as each kind
    names them (`JobKind.event_job_name`). None when it cannot be about a training job."""
    about = involved(event)
    kind, name = str(about.get("kind") or ""), str(about.get("name") or "")
    if not name:
        return None
    return next((job for k in KINDS.values() if (job := k.event_job_name(kind, name))), None)


def may_concern_training_job(event: Obj) -> bool:
    """Could this event be about a training job? (what the hub's event watch keeps)"""
    return candidate_job_name(event) is not None


@dataclass
class JobData:
    kind: JobKind
    job: Obj
    pods: list[Obj]
    events: list[Obj]  # every indexed event that may be about it; queries.job_events picks
    # the object its kind leaves its layout to (`JobKind.layout_ref`: a TrainJob's runtime),
    # as the index keeps it; None: none, or not (yet) seen
    layout: Obj | None = None


class JobIndex:
    def __init__(self, max_events_per_job: int = 200) -> None:
        self.max_events_per_job = max_events_per_job
        self._lock = threading.RLock()
        self._jobs: dict[JobKey, Obj] = {}
        self._names: dict[tuple[str, str], set[str]] = defaultdict(set)  # (ns, name) -> slugs
        self._pods: dict[tuple[str, str], dict[str, Obj]] = defaultdict(dict)
        self._pod_owner: dict[str, tuple[str, str]] = {}  # pod uid -> (ns, job name)
        self._events: dict[tuple[str, str], dict[str, Obj]] = defaultdict(dict)
        self._event_owner: dict[str, tuple[str, str]] = {}  # event uid -> (ns, job name)
        self._quotas: dict[str, dict[str, Obj]] = defaultdict(dict)
        # the objects jobs leave their layout to, by (group, plural, namespace, name)
        self._layouts: dict[tuple[str, str, str, str], Obj] = {}
        self._holdings = Holdings()  # what the indexed pods hold on nodes, added up

    # -- changes ------------------------------------------------------------------------------
    def apply(self, what: str, etype: str, obj: Obj, kind: JobKind | None = None
              ) -> set[JobKey]:
        """Take one change ("jobs", "pods", "events", "quotas" or "other-pods": the pods of
        no training job, whose requests only are added up); the jobs it may touch."""
        with self._lock:
            if what == "jobs":
                return self._apply_job(etype, obj, kind)
            if what == "pods":
                return self._apply_pod(etype, obj)
            if what == "events":
                return self._apply_event(etype, obj)
            if what == "quotas":
                self._apply_quota(etype, obj)
                return set()
            if what == "other-pods":  # of no training job: only what they hold is kept
                self._apply_other_pod(etype, obj)
                return set()
        raise ValueError(f"unknown resource {what!r}")

    def apply_layout(self, group: str, plural: str, etype: str, obj: Obj) -> set[JobKey]:
        """Take one change of an object jobs may leave their layout to (a runtime, watched
        as `JobKind.layout_resources` name them); the jobs that name it."""
        meta = _meta(obj)
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        with self._lock:
            if etype == "DELETED":
                self._layouts.pop((group, plural, ns, name), None)
            else:
                self._layouts[(group, plural, ns, name)] = obj
            return {key for key, job in self._jobs.items()
                    if (ref := KINDS[key[1]].layout_ref(job)) is not None
                    and (ref.group, ref.plural, ref.namespace, ref.name) == (group, plural,
                                                                             ns, name)}

    def _keys_named(self, namespace: str, name: str) -> set[JobKey]:
        return {(namespace, slug, name) for slug in self._names.get((namespace, name), ())}

    def _apply_job(self, etype: str, obj: Obj, kind: JobKind | None) -> set[JobKey]:
        kind = kind or kind_for_object(obj)
        if kind is None:
            return set()
        obj.setdefault("apiVersion", kind.api_version)
        obj.setdefault("kind", kind.kind)
        meta = _meta(obj)
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        key = (ns, kind.slug, name)
        if etype == "DELETED":
            current = self._jobs.get(key)
            # a late DELETED of an earlier job of the same name must not drop its successor
            if current is not None and _meta(current).get("uid") not in (None, meta.get("uid")):
                return set()
            self._jobs.pop(key, None)
            slugs = self._names.get((ns, name))
            if slugs is not None:
                slugs.discard(kind.slug)
                if not slugs:
                    del self._names[(ns, name)]
            if (ns, name) not in self._names:  # its events show nowhere any more
                self._drop_events((ns, name))
        else:
            self._jobs[key] = obj
            self._names[(ns, name)].add(kind.slug)
        return {key}

    def _apply_pod(self, etype: str, obj: Obj) -> set[JobKey]:
        meta = _meta(obj)
        uid = str(meta.get("uid") or "")
        ns = str(meta.get("namespace") or "")
        job = pod_job_name(meta.get("labels") or {})
        affected: set[JobKey] = set()
        previous = self._pod_owner.pop(uid, None)
        if previous is not None:
            bucket = self._pods.get(previous)
            if bucket is not None:
                bucket.pop(uid, None)
                if not bucket:
                    del self._pods[previous]
            self._holdings.drop(uid)
            affected |= self._keys_named(*previous)
        if etype != "DELETED" and job:
            self._pods[(ns, job)][uid] = obj
            self._pod_owner[uid] = (ns, job)
            self._holdings.put(obj, key=uid)
            affected |= self._keys_named(ns, job)
        return affected

    def _apply_other_pod(self, etype: str, obj: Obj) -> None:
        uid = str(_meta(obj).get("uid") or "")
        if etype == "DELETED":
            self._holdings.drop(uid)
        else:
            self._holdings.put(obj, key=uid)

    def _event_bucket(self, event: Obj) -> tuple[str, str] | None:
        about = involved(event)
        ns = str(_meta(event).get("namespace") or about.get("namespace") or "")
        if about.get("kind") == "Pod":
            owner = self._pod_owner.get(str(about.get("uid") or ""))
            if owner is not None:
                return owner
        name = candidate_job_name(event)
        return (ns, name) if name else None

    def _apply_event(self, etype: str, obj: Obj) -> set[JobKey]:
        uid = str(_meta(obj).get("uid") or "")
        affected: set[JobKey] = set()
        previous = self._event_owner.pop(uid, None)
        if previous is not None:
            bucket = self._events.get(previous)
            if bucket is not None:
                bucket.pop(uid, None)
                if not bucket:
                    del self._events[previous]
            affected |= self._keys_named(*previous)
        if etype == "DELETED":
            return affected
        owner = self._event_bucket(obj)
        if owner is None:
            return affected
        bucket = self._events[owner]
        bucket[uid] = obj
        self._event_owner[uid] = owner
        while len(bucket) > self.max_events_per_job:  # forget the oldest
            oldest = min(bucket, key=lambda u: event_time(bucket[u]) or _NEVER)
            del bucket[oldest]
            self._event_owner.pop(oldest, None)
        return affected | self._keys_named(*owner)

    def _drop_events(self, owner: tuple[str, str]) -> None:
        for uid in self._events.pop(owner, {}):
            self._event_owner.pop(uid, None)

    def forget_orphan_events(self, older_than: datetime) -> int:
        """Drop the events kept for a job that does not exist (one deleted, whose pods'
        last events came after it went), when none is newer than `older_than`: the
        cluster keeps events an hour, the index need not. Returns how many buckets."""
        with self._lock:
            gone = [owner for owner, bucket in self._events.items()
                    if owner not in self._names and all(
                        (event_time(e) or _NEVER) < older_than for e in bucket.values())]
            for owner in gone:
                self._drop_events(owner)
            return len(gone)

    def _apply_quota(self, etype: str, obj: Obj) -> None:
        meta = _meta(obj)
        ns, uid = str(meta.get("namespace") or ""), str(meta.get("uid") or "")
        if etype == "DELETED":
            self._quotas[ns].pop(uid, None)
            if not self._quotas[ns]:
                del self._quotas[ns]
        else:
            self._quotas[ns][uid] = obj

    # -- reads ----------------------------------------------------------------------------------
    def job_data(self, key: JobKey) -> JobData | None:
        ns, slug, name = key
        with self._lock:
            job = self._jobs.get(key)
            if job is None:
                return None
            ref = KINDS[slug].layout_ref(job)
            layout = self._layouts.get((ref.group, ref.plural, ref.namespace, ref.name)) \
                if ref is not None else None
            return JobData(KINDS[slug], job, list(self._pods.get((ns, name), {}).values()),
                           list(self._events.get((ns, name), {}).values()), layout)

    def job_object(self, key: JobKey) -> Obj | None:
        with self._lock:
            return self._jobs.get(key)

    def pod(self, uid: str) -> Obj | None:
        """The indexed pod with this uid, as it is now (before a change is applied)."""
        with self._lock:
            owner = self._pod_owner.get(uid)
            return self._pods.get(owner, {}).get(uid) if owner is not None else None

    def job_objects(self) -> dict[JobKey, Obj]:
        """Every indexed job (with apiVersion and kind; read-only), by key."""
        with self._lock:
            return dict(self._jobs)

    def holdings(self) -> Holdings:
        """What the indexed pods (and the other pods told) hold on their nodes, added up as
        they came and went (a copy): the admin overview's capacity without going over every
        pod."""
        with self._lock:
            return self._holdings.copy()

    def job_keys(self, namespace: str | None = None) -> list[JobKey]:
        with self._lock:
            return sorted(k for k in self._jobs if namespace is None or k[0] == namespace)

    def quotas(self, namespace: str) -> list[Obj]:
        with self._lock:
            return list(self._quotas.get(namespace, {}).values())

    def all_quotas(self) -> list[Obj]:
        """Every resource quota, in every namespace."""
        with self._lock:
            return [q for by_uid in self._quotas.values() for q in by_uid.values()]

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {"jobs": len(self._jobs), "pods": len(self._pod_owner),
                    "events": len(self._event_owner),
                    "quotas": sum(len(q) for q in self._quotas.values())}
