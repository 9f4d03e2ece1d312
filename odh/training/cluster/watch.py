"""One resilient, cluster-wide watch of one resource kind, with a cache of what it saw.

`ResilientWatch` lists the resource once (remembering every item by uid and the list's
resourceVersion), then watches from that resourceVersion with bookmarks, and keeps doing
so for as long as it runs, whatever the API server does:

- a watch the server ends normally (its `timeoutSeconds`) is opened again from the last
  resourceVersion seen (objects and BOOKMARKs both advance it);
- `410 Gone` (an `ERROR` event with code 410, or the `ApiException(410)` the official
  client raises) means the server no longer has the history to resume from: list again
  and compare with the cache, calling `on_change` with ADDED, MODIFIED and DELETED for what
  changed while the watch was away;
- a lost connection (refused, reset, timed out) or any other failure: wait with
  exponential back-off and jitter (0.5 s doubling to 30 s by default), then list and
  compare as for 410. A broken stream says nothing about what the server still remembers
  (it may have restarted, failed over or been restored from a backup), so, like client-go's
  reflector, the watch relists rather than trusting an old resourceVersion;
- a BOOKMARK whose resourceVersion is lower than one already seen means the server's store
  went back in time (restored or reset): list again too;
- `401 Unauthorized` means the token was refused (a rotated service-account token that
  expired, a replaced kubeconfig): with a `client_factory` the watch makes itself a new
  client (which reads the credentials again) before the next attempt, instead of
  presenting the old token forever. It still backs off, so a token that stays wrong costs
  one request per back-off period.

`failing` is True from a failed list or watch until a list succeeds again: while it is,
the watch knows nothing new (the watch hub tells viewers when all of its watches are).

Counters (`stats()`): `relists` (lists after the first), `reconnects` (watches opened again
after a failure), `errors` (failed lists and watches), `expired` (410s), `unauthorized`
(401s), `clients` (clients made again after a 401), `events` (changes received). The
watch runs in a daemon thread (`start()`; `stop()`, which also closes the client);
`on_change` is called from that thread and should return quickly. A `transform` (the
hub's `compact.compact`) makes what is cached and told of each object kept.

Plain Python and the official `kubernetes` client, nothing else: the dashboard's hub, the
SDK and tests use the same class against real clusters and simcluster alike.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes import watch as k8s_watch
from kubernetes.client.rest import ApiException

from odh.training.cluster.client import ClusterClient

log = logging.getLogger("odh.training.cluster.watch")

Obj = dict[str, Any]
OnChange = Callable[[str, Obj], None]

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"
LIST_PAGE_SIZE = 500


@dataclass(frozen=True)
class WatchedResource:
    """A resource kind to watch across all namespaces, optionally narrowed by labels.

    `group` "" is the core API (`/api/v1`); anything else is reached through the
    custom-objects API (`/apis/<group>/<version>/<plural>`), which serves every group.
    """

    plural: str
    group: str = ""
    version: str = "v1"
    label_selector: str = ""
    # what logs, the hub's stats and /metrics call it, where two watches of one resource
    # differ by their labels only
    title: str = ""

    @property
    def name(self) -> str:
        if self.title:
            return self.title
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def list_call(self, client: ClusterClient) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        """The generated API function that lists (and, with watch=True, watches) it."""
        if self.group:
            return client.custom.list_cluster_custom_object, (self.group, self.version,
                                                                self.plural)
        singular = {"pods": "pod", "events": "event", "resourcequotas": "resource_quota",
                    "limitranges": "limit_range", "services": "service",
                    "configmaps": "config_map", "secrets": "secret",
                    "persistentvolumeclaims": "persistent_volume_claim"}.get(self.plural)
        if singular is None:
            raise ValueError(f"no cluster-wide list for core resource {self.plural!r}")
        return getattr(client.core, f"list_{singular}_for_all_namespaces"), ()


class _Expired(Exception):
    """The server cannot resume from our resourceVersion: list again."""


class _Stopped(Exception):
    pass


def _uid(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return str(meta.get("uid") or f"{meta.get('namespace', '')}/{meta.get('name', '')}")


def _rv(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _older(candidate: str, current: str) -> bool:
    """Is resourceVersion `candidate` lower than `current`? (False when not comparable.)"""
    try:
        return int(candidate) < int(current)
    except ValueError:
        return False


class ResilientWatch:
    def __init__(self, client: ClusterClient, resource: WatchedResource,
                 on_change: OnChange | None = None, *,
                 keep: Callable[[Obj], bool] | None = None,
                 timeout_seconds: int = 290, bookmarks: bool = True,
                 backoff_initial: float = 0.5, backoff_max: float = 30.0,
                 client_factory: Callable[[], ClusterClient] | None = None,
                 transform: Callable[[Obj], Obj] | None = None) -> None:
        self.client = client
        self.client_factory = client_factory
        self.resource = resource
        self.on_change = on_change
        self.keep = keep
        # what is kept (and told) of each object: `compact.compact` for a long-lived cache
        self.transform = transform
        self.timeout_seconds = int(timeout_seconds)
        self.bookmarks = bookmarks
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.resource_version = ""
        self.synced = threading.Event()  # set once the first list is in the cache
        self.connected = False  # the open watch stream has delivered an event or bookmark
        self.failing = False  # a list or watch failed, and no list has succeeded since
        self.last_error = ""
        self.relists = 0
        self.reconnects = 0
        self.errors = 0
        self.expired = 0
        self.unauthorized = 0
        self.clients = 0
        self.events = 0
        self.heard_at = 0.0  # time.monotonic() of the server's last list, event or BOOKMARK
        self._items: dict[str, Obj] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watch: k8s_watch.Watch | None = None
        self._thread: threading.Thread | None = None
        self._lists = 0
        self._closed = False  # the client was closed (stop)

    # -- life ---------------------------------------------------------------------------------
    def start(self) -> ResilientWatch:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name=f"watch-{self.resource.name}")
            self._thread.start()
        return self

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop watching and close the client (its connection pool). A thread still
        running after `timeout` closes the client itself as it ends."""
        self._stop.set()
        current = self._watch
        if current is not None:
            current.stop()  # shuts the socket down, so a blocked read returns at once
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        if thread is None or not thread.is_alive():
            self._close_client()

    def _close_client(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self.client.close()
        except Exception:  # closing is best effort
            log.debug("closing the client of %s failed", self.resource.name, exc_info=True)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def reconnect(self) -> None:
        """Drop the open stream (it may be dead without knowing: the server hung); the loop
        opens a new one from the resourceVersion it has, and lists again on a 410."""
        current = self._watch
        if current is not None:
            current.stop()  # shuts the socket down: a read blocked on it returns

    def wait_synced(self, timeout: float | None = None) -> bool:
        return self.synced.wait(timeout)

    # -- what it knows ------------------------------------------------------------------------
    def items(self) -> list[Obj]:
        with self._lock:
            return list(self._items.values())

    def get(self, uid: str) -> Obj | None:
        with self._lock:
            return self._items.get(uid)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def stats(self) -> dict[str, Any]:
        return {"resource": self.resource.name, "items": len(self), "synced": self.synced.is_set(),
                "connected": self.connected, "failing": self.failing,
                "resource_version": self.resource_version,
                "relists": self.relists, "reconnects": self.reconnects, "errors": self.errors,
                "expired": self.expired, "unauthorized": self.unauthorized,
                "clients": self.clients, "events": self.events, "last_error": self.last_error}

    # -- the loop ---------------------------------------------------------------------------
    def _run(self) -> None:
        delay = self.backoff_initial
        need_list = True
        failed = False
        while not self._stop.is_set():
            try:
                if need_list:
                    self._list()
                    need_list = False
                if failed:
                    self.reconnects += 1
                    failed = False
                self._watch_once()
                delay = self.backoff_initial  # a stream that ran and ended normally
            except _Stopped:
                break
            except _Expired as e:
                self.expired += 1
                log.info("watch of %s expired (%s): listing again", self.resource.name, e)
                need_list = True
            except Exception as e:  # whatever happened: back off, then list and watch again
                if self._stop.is_set():
                    break
                self.errors += 1
                self.last_error = _describe(e)
                self.failing = True
                need_list = True
                failed = True
                if isinstance(e, ApiException) and e.status == 401:
                    self._new_client()
                    self.unauthorized += 1  # after: a reader of the counts sees the client
                if self.connected:  # a stream that was working broke: back off afresh
                    delay = self.backoff_initial
                pause = min(delay, self.backoff_max)
                pause = pause / 2 + random.uniform(0, pause / 2)  # jitter: many replicas
                log.warning("watch of %s failed (%s); retrying in %.1fs", self.resource.name,
                            self.last_error, pause)
                delay = min(delay * 2, self.backoff_max)
                if self._stop.wait(pause):
                    break
            finally:
                self.connected = False
        self._watch = None
        self._close_client()  # stopped: nothing will use the client again

    def _new_client(self) -> None:
        """After a 401: a client with credentials read again (the factory's), if any."""
        if self.client_factory is None:
            return
        try:
            fresh = self.client_factory()
        except Exception as e:  # the credentials cannot be read now: try again next time
            log.warning("watch of %s: cannot make a new client (%s)", self.resource.name,
                        _describe(e))
            return
        old, self.client = self.client, fresh
        self.clients += 1
        try:
            old.close()
        except Exception:  # closing a client that failed is best effort
            log.debug("closing the old client of %s failed", self.resource.name,
                      exc_info=True)

    def _list(self) -> None:
        func, args = self.resource.list_call(self.client)
        items: list[Obj] = []
        token = ""
        rv = ""
        while True:
            kwargs: dict[str, Any] = {"limit": LIST_PAGE_SIZE, "_preload_content": False,
                                      "_request_timeout": self.client.timeout}
            if token:
                kwargs["_continue"] = token
            if self.resource.label_selector:
                kwargs["label_selector"] = self.resource.label_selector
            try:
                resp = func(*args, **kwargs)
            except ApiException as e:
                if e.status == 410 and token:  # the continue token expired: start over
                    items, token, rv = [], "", ""
                    continue
                raise
            data = json.loads(resp.data or b"{}")
            meta = data.get("metadata") or {}
            rv = rv or str(meta.get("resourceVersion") or "")
            items.extend(i for i in data.get("items") or [] if isinstance(i, dict))
            token = str(meta.get("continue") or "")
            if not token:
                break
            if self._stop.is_set():
                raise _Stopped()
        self._replace(items, rv)

    def _replace(self, listed: list[Obj], rv: str) -> None:
        """Make the cache what the list says, telling `on_change` what differs."""
        fresh = {_uid(o): self._kept(o) for o in listed if self.keep is None or self.keep(o)}
        changes: list[tuple[str, Obj]] = []
        with self._lock:
            old = self._items
            for uid, obj in old.items():
                if uid not in fresh:
                    changes.append((DELETED, obj))
            for uid, obj in fresh.items():
                before = old.get(uid)
                if before is None:
                    changes.append((ADDED, obj))
                elif _rv(before) != _rv(obj):
                    changes.append((MODIFIED, obj))
            self._items = fresh
            self.resource_version = rv
        if self._lists:
            self.relists += 1
        self._lists += 1
        log.info("listed %s: %d items at resourceVersion %s (%d changes)",
                 self.resource.name, len(fresh), rv, len(changes))
        for etype, obj in changes:
            self._notify(etype, obj)
        self.failing = False  # the API server answered: what changed meanwhile is told
        self.heard_at = time.monotonic()
        self.synced.set()

    def _watch_once(self) -> None:
        func, args = self.resource.list_call(self.client)
        kwargs: dict[str, Any] = {
            "resource_version": self.resource_version,
            "timeout_seconds": self.timeout_seconds,
            # a silent connection is given up when the server should have ended it anyway
            "_request_timeout": (self.client.timeout[0], self.timeout_seconds + 30),
        }
        if self.bookmarks:
            kwargs["allow_watch_bookmarks"] = True
        if self.resource.label_selector:
            kwargs["label_selector"] = self.resource.label_selector
        w = k8s_watch.Watch(return_type="object")  # plain dicts, as the API sends them
        self._watch = w
        if self._stop.is_set():
            raise _Stopped()
        try:
            for event in w.stream(func, *args, **kwargs):
                self.connected = True
                if self._stop.is_set():
                    raise _Stopped()
                self._handle(event)
        except ApiException as e:
            if e.status == 410:
                raise _Expired(e.reason) from None
            raise
        finally:
            self._watch = None
        if self._stop.is_set():
            raise _Stopped()

    def _handle(self, event: Obj) -> None:
        self.heard_at = time.monotonic()
        etype = event.get("type")
        obj = event.get("raw_object")
        if not isinstance(obj, dict):
            return
        if etype == "ERROR":
            code = obj.get("code")
            if code == 410:
                raise _Expired(str(obj.get("message") or "Gone"))
            raise ApiException(status=code or 500, reason=str(obj.get("message") or obj))
        rv = _rv(obj)
        if etype == "BOOKMARK":
            if rv and _older(rv, self.resource_version):
                raise _Expired(f"the server's resourceVersion went back from "
                               f"{self.resource_version} to {rv}")
            if rv:
                self.resource_version = rv
            return
        if etype not in (ADDED, MODIFIED, DELETED):
            return
        self.events += 1
        uid = _uid(obj)
        with self._lock:
            known = uid in self._items
            if etype == DELETED or (self.keep is not None and not self.keep(obj)):
                if known:
                    del self._items[uid]
                    etype = DELETED
                else:
                    etype = ""
            else:
                obj = self._kept(obj)
                self._items[uid] = obj
                etype = MODIFIED if known else ADDED
            if rv:
                self.resource_version = rv
        if etype:
            self._notify(etype, obj)

    def _kept(self, obj: Obj) -> Obj:
        return obj if self.transform is None else self.transform(obj)

    def _notify(self, etype: str, obj: Obj) -> None:
        if self.on_change is None:
            return
        try:
            self.on_change(etype, obj)
        except Exception:
            log.exception("on_change failed for %s %s", etype, self.resource.name)


def _describe(e: BaseException) -> str:
    if isinstance(e, ApiException):
        return f"HTTP {e.status}: {e.reason}"
    return f"{type(e).__name__}: {e}"
