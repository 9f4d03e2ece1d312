"""The object store: what etcd plus the API server's watch cache are to a real cluster.

Single-threaded by design: every read and write happens on the event loop, so a write
and the notifications it causes are atomic. Objects are plain JSON dicts. Stored dicts
are never mutated in place (so versions may share unchanged parts): writers hand in new
dicts, which the store copies once; `get`/`list` return copies; everything else a read
or a write returns (`get_raw`, `iter_raw`, the results of create/update/mutate/delete,
Change objects) is the stored object itself and read-only.
"""

from __future__ import annotations

import asyncio
import bisect
import copy
import logging
import random
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from simcluster import errors
from simcluster.clock import Clock
from simcluster.placement.resources import Registry, ResourceType

log = logging.getLogger("simcluster.apiserver.store")

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace or "", name)

_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
# metadata a write may change without it counting as a change of the object
_VERSION_FIELDS = ("resourceVersion", "generation", "managedFields")
# top-level fields that are not the object's spec (for metadata.generation)
_NOT_SPEC = ("metadata", "status", "apiVersion", "kind")
_ATOMIC = frozenset({str, int, float, bool, type(None)})


def type_key(rt: ResourceType) -> str:
    return f"{rt.group}/{rt.plural}"


def clone(obj: Any) -> Any:
    """A deep copy of a JSON value, three times quicker than copy.deepcopy. Strings and
    numbers are shared, not copied (they are immutable), which keeps versions small."""
    t = type(obj)
    if t is dict:
        return {k: v if type(v) in _ATOMIC else clone(v) for k, v in obj.items()}
    if t is list:
        return [v if type(v) in _ATOMIC else clone(v) for v in obj]
    if t in _ATOMIC:
        return obj
    return copy.deepcopy(obj)  # not JSON (a tuple, say): the slow, general way


@dataclass
class Change:
    rv: int
    rt: ResourceType
    type: str  # ADDED | MODIFIED | DELETED
    obj: Obj
    old: Obj | None


class Watcher:
    """One open watch: changes of one type, optionally one namespace, as a queue."""

    def __init__(self, rt: ResourceType, namespace: str | None,
                 match: Callable[[Obj], bool]) -> None:
        self.rt = rt
        self.namespace = namespace
        self.match = match
        self.queue: asyncio.Queue[tuple[str, Obj] | None] = asyncio.Queue()

    def offer(self, change: Change) -> None:
        ns = change.obj.get("metadata", {}).get("namespace", "")
        if self.namespace and ns != self.namespace:
            return
        now_matches = change.type != "DELETED" and self.match(change.obj)
        before = change.old if change.type != "ADDED" else None
        was_matching = before is not None and self.match(before)
        if change.type == "DELETED":
            if self.match(change.obj):
                self.queue.put_nowait(("DELETED", change.obj))
        elif now_matches and was_matching:
            self.queue.put_nowait(("MODIFIED", change.obj))
        elif now_matches:
            self.queue.put_nowait(("ADDED", change.obj))
        elif was_matching:
            # Left the selection: the watch cache reports it as deleted.
            self.queue.put_nowait(("DELETED", change.obj))

    def close(self) -> None:
        self.queue.put_nowait(None)


class _Bucket:
    """The objects of one type, indexed by namespace, with their name order cached.

    A cached order is replaced, never edited, when a name comes or goes, so an iteration
    that is under way while the store changes walks the order it started with.
    """

    __slots__ = ("_names", "_namespaces", "by_ns")

    def __init__(self) -> None:
        self.by_ns: dict[str, dict[str, Obj]] = {}
        self._names: dict[str, list[str]] = {}
        self._namespaces: list[str] | None = None

    def get(self, ns: str, name: str) -> Obj | None:
        objs = self.by_ns.get(ns)
        return objs.get(name) if objs is not None else None

    def put(self, ns: str, name: str, obj: Obj) -> None:
        objs = self.by_ns.get(ns)
        if objs is None:
            objs = self.by_ns[ns] = {}
            self._namespaces = None
        if name not in objs:
            self._names.pop(ns, None)
        objs[name] = obj

    def pop(self, ns: str, name: str) -> Obj | None:
        objs = self.by_ns.get(ns)
        if objs is None or name not in objs:
            return None
        obj = objs.pop(name)
        self._names.pop(ns, None)
        if not objs:
            del self.by_ns[ns]
            self._namespaces = None
        return obj

    def _sorted_names(self, ns: str) -> list[str]:
        names = self._names.get(ns)
        if names is None:
            if ns not in self.by_ns:
                return []
            names = self._names[ns] = sorted(self.by_ns[ns])
        return names

    def _namespaces_from(self, namespace: str | None, after: tuple[str, str] | None
                         ) -> list[str]:
        if namespace is not None:
            return [namespace] if after is None or namespace >= after[0] else []
        if self._namespaces is None:
            self._namespaces = sorted(self.by_ns)
        if after is None:
            return self._namespaces
        return self._namespaces[bisect.bisect_left(self._namespaces, after[0]):]

    def _start(self, ns: str, names: list[str], after: tuple[str, str] | None) -> int:
        """Where the names past `after` (namespace, name) begin: found by bisection, so a
        paginated list costs its page, not the objects before it."""
        if after is None or ns > after[0]:
            return 0
        return bisect.bisect_right(names, after[1])

    def iter(self, namespace: str | None, after: tuple[str, str] | None = None
             ) -> Iterator[Obj]:
        for ns in self._namespaces_from(namespace, after):
            names = self._sorted_names(ns)
            for i in range(self._start(ns, names, after), len(names)):
                obj = self.get(ns, names[i])
                if obj is not None:  # gone since the iteration began
                    yield obj

    def count(self, namespace: str | None, after: tuple[str, str] | None = None) -> int:
        """How many objects `iter` would yield."""
        total = 0
        for ns in self._namespaces_from(namespace, after):
            names = self._sorted_names(ns)
            total += len(names) - self._start(ns, names, after)
        return total


class Store:
    def __init__(self, registry: Registry, clock: Clock, history_size: int = 10000) -> None:
        self.registry = registry
        self.clock = clock
        self._rv = 1
        self._buckets: dict[str, _Bucket] = {type_key(t): _Bucket() for t in registry.types}
        self._uids: dict[str, tuple[ResourceType, Key]] = {}
        self._history: deque[Change] = deque(maxlen=history_size)
        self._watchers: dict[str, set[Watcher]] = {}
        self._subscribers: list[Callable[[Change], None]] = []
        # resourceVersion below which history is gone (compaction floor)
        self._compacted = 0

    # -- versions -----------------------------------------------------------------------
    @property
    def resource_version(self) -> int:
        return self._rv

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def compact(self) -> None:
        """Forget all history, as etcd compaction does: older resourceVersions get 410."""
        self._history.clear()
        self._compacted = self._rv

    def oldest_watchable(self) -> int:
        """The smallest resourceVersion a watch may resume from."""
        if self._history and len(self._history) == self._history.maxlen:
            return self._history[0].rv - 1
        return max(self._compacted, 0)

    # -- notifications ------------------------------------------------------------------
    def subscribe(self, fn: Callable[[Change], None]) -> None:
        """Call `fn` synchronously with every Change (its objects are read-only)."""
        self._subscribers.append(fn)

    def _emit(self, change: Change) -> None:
        self._history.append(change)
        for w in list(self._watchers.get(type_key(change.rt), ())):
            w.offer(change)
        for fn in self._subscribers:
            try:
                fn(change)
            except Exception:
                log.exception("subscriber failed on %s", change.rt.plural)

    def add_watcher(self, w: Watcher) -> None:
        self._watchers.setdefault(type_key(w.rt), set()).add(w)

    def remove_watcher(self, w: Watcher) -> None:
        self._watchers.get(type_key(w.rt), set()).discard(w)

    def changes_since(self, rt: ResourceType, rv: int) -> list[Change] | None:
        """History of one type after `rv`, or None when that history is compacted away."""
        if rv < self.oldest_watchable():
            return None
        tk = type_key(rt)
        return [c for c in self._history if c.rv > rv and type_key(c.rt) == tk]

    # -- reads --------------------------------------------------------------------------------
    def _bucket(self, rt: ResourceType) -> _Bucket:
        return self._buckets[type_key(rt)]

    def get(self, rt: ResourceType, namespace: str, name: str) -> Obj | None:
        """A copy of the object, the caller's to change."""
        obj = self.get_raw(rt, namespace, name)
        return clone(obj) if obj is not None else None

    def get_raw(self, rt: ResourceType, namespace: str, name: str) -> Obj | None:
        """The stored object itself: read-only."""
        return self._bucket(rt).get(namespace if rt.namespaced else "", name)

    def iter_raw(self, rt: ResourceType, namespace: str | None = None,
                 after: tuple[str, str] | None = None) -> Iterator[Obj]:
        """Stored objects in name order (namespace, then name), read-only; with `after`,
        those past that (namespace, name) only."""
        return self._bucket(rt).iter(namespace, after)

    def count(self, rt: ResourceType, namespace: str | None = None,
              after: tuple[str, str] | None = None) -> int:
        """How many objects `iter_raw` would yield, without walking them."""
        return self._bucket(rt).count(namespace, after)

    def list(self, rt: ResourceType, namespace: str | None = None) -> list[Obj]:
        return [clone(o) for o in self.iter_raw(rt, namespace)]

    def by_uid(self, uid: str) -> tuple[ResourceType, Obj] | None:
        """The type and stored object (read-only) with this uid, if it exists."""
        found = self._uids.get(uid)
        if found is None:
            return None
        rt, (ns, name) = found
        obj = self._bucket(rt).get(ns, name)
        return (rt, obj) if obj is not None else None

    def exists_uid(self, uid: str) -> bool:
        return self.by_uid(uid) is not None

    # -- writes -------------------------------------------------------------------------------
    def create(self, rt: ResourceType, obj: Obj) -> Obj:
        """Persist a copy of a new object; fills name (generateName), uid, timestamps and
        versions. Returns the stored object (read-only)."""
        obj = clone(obj)
        meta = obj.setdefault("metadata", {})
        ns = meta.get("namespace", "") if rt.namespaced else ""
        bucket = self._bucket(rt)
        if not meta.get("name") and meta.get("generateName"):
            for _ in range(20):
                candidate = meta["generateName"] + "".join(
                    random.choice(_GENERATE_ALPHABET) for _ in range(5))
                if bucket.get(ns, candidate) is None:
                    meta["name"] = candidate
                    break
            else:
                raise errors.ApiError(
                    409, "AlreadyExists",
                    f'{rt.qualified} "{meta["generateName"]}" already exists, the server was '
                    "not able to generate a unique name for the object",
                    {"kind": rt.plural})
        name = meta["name"]
        if bucket.get(ns, name) is not None:
            raise errors.already_exists(rt, name)
        if not rt.namespaced:
            meta.pop("namespace", None)
        # Admission assigns the uid (a Job's selector is built from it); keep that one.
        meta["uid"] = meta.get("uid") or str(uuid.uuid4())
        meta.setdefault("creationTimestamp", self.clock.timestamp())
        meta["generation"] = 1
        meta["resourceVersion"] = str(self._next_rv())
        obj["apiVersion"] = rt.api_version
        obj["kind"] = rt.kind
        bucket.put(ns, name, obj)
        self._uids[meta["uid"]] = (rt, (ns, name))
        self._emit(Change(int(meta["resourceVersion"]), rt, "ADDED", obj, None))
        return obj

    def update(self, rt: ResourceType, obj: Obj, *, check_version: bool = True) -> Obj:
        """Replace an object with a copy of `obj`. A stale resourceVersion is a 409
        Conflict. Returns the stored object (read-only)."""
        return self._replace(rt, clone(obj), check_version)

    def mutate(self, rt: ResourceType, namespace: str, name: str,
               fn: Callable[[Obj], Any]) -> Obj | None:
        """Read-modify-write for controllers: `fn` edits a copy in place (what it puts in
        becomes part of the stored object: hand over values nobody changes later).
        Returns the stored result (read-only), or None if the object is gone."""
        obj = self.get(rt, namespace, name)
        if obj is None:
            return None
        if fn(obj) is False:
            return obj
        return self._replace(rt, obj, False)

    def _replace(self, rt: ResourceType, obj: Obj, check_version: bool) -> Obj:
        """update() with `obj` owned by the store from here on."""
        meta = obj["metadata"]
        ns = meta.get("namespace", "") if rt.namespaced else ""
        name = meta["name"]
        bucket = self._bucket(rt)
        current = bucket.get(ns, name)
        if current is None:
            raise errors.not_found(rt, name)
        cur_meta = current["metadata"]
        if check_version and meta.get("resourceVersion") and \
                meta["resourceVersion"] != cur_meta["resourceVersion"]:
            raise errors.conflict(rt, name)
        # Immutable metadata comes from the stored object.
        for k in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
            if k in cur_meta:
                meta[k] = cur_meta[k]
            else:
                meta.pop(k, None)
        if not rt.namespaced:
            meta.pop("namespace", None)
        obj["apiVersion"] = rt.api_version
        obj["kind"] = rt.kind
        spec_changed = _spec_changed(current, obj)
        if not spec_changed and _same_apart_from_spec(current, obj):
            return current  # no-op writes do not bump the version
        meta["generation"] = cur_meta.get("generation", 1) + (1 if spec_changed else 0)
        meta["resourceVersion"] = str(self._next_rv())
        bucket.put(ns, name, obj)
        self._emit(Change(int(meta["resourceVersion"]), rt, "MODIFIED", obj, current))
        return obj

    def mark_deleting(self, rt: ResourceType, namespace: str, name: str,
                      grace_seconds: int) -> Obj:
        """Graceful deletion: set deletionTimestamp; the owner of the object finishes it.
        Returns the stored object (read-only)."""
        ns = namespace if rt.namespaced else ""
        bucket = self._bucket(rt)
        stored = bucket.get(ns, name)
        if stored is None:
            raise errors.not_found(rt, name)
        if stored["metadata"].get("deletionTimestamp"):
            return stored
        # update() keeps the stored deletionTimestamp, so write it directly. Only metadata
        # changes: the new version shares the rest with the old one.
        meta = dict(stored["metadata"])
        meta["deletionTimestamp"] = self.clock.timestamp(self.clock.now() + grace_seconds)
        meta["deletionGracePeriodSeconds"] = grace_seconds
        meta["resourceVersion"] = str(self._next_rv())
        marked = {**stored, "metadata": meta}
        bucket.put(ns, name, marked)
        self._emit(Change(int(meta["resourceVersion"]), rt, "MODIFIED", marked, stored))
        return marked

    def delete(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        """Remove an object; returns it as deleted (read-only), with a new resourceVersion."""
        ns = namespace if rt.namespaced else ""
        current = self._bucket(rt).pop(ns, name)
        if current is None:
            raise errors.not_found(rt, name)
        self._uids.pop(current["metadata"].get("uid", ""), None)
        deleted = {**current, "metadata": {**current["metadata"],
                                           "resourceVersion": str(self._next_rv())}}
        self._emit(Change(int(deleted["metadata"]["resourceVersion"]), rt, "DELETED",
                          deleted, current))
        return deleted


def _spec_changed(old: Obj, new: Obj) -> bool:
    """Whether anything but metadata and status changed (what bumps metadata.generation)."""
    for k, v in new.items():
        if k not in _NOT_SPEC and (k not in old or old[k] != v):
            return True
    return any(k not in _NOT_SPEC and k not in new for k in old)


def _same_apart_from_spec(old: Obj, new: Obj) -> bool:
    """Whether status and metadata (bar the version fields) are unchanged."""
    if old.get("status") != new.get("status") or ("status" in old) != ("status" in new):
        return False
    a, b = old.get("metadata", {}), new.get("metadata", {})
    for k, v in b.items():
        if k not in _VERSION_FIELDS and (k not in a or a[k] != v):
            return False
    return all(k in b or k in _VERSION_FIELDS for k in a)


def random_suffix(n: int = 5) -> str:
    return "".join(random.choice(_GENERATE_ALPHABET) for _ in range(n))


def random_hex(n: int) -> str:
    return f"{random.getrandbits(4 * n):0{n}x}"
