"""A tiny controller runtime: watches turn store changes into keys; a queue reconciles them.

Everything runs on the event loop between requests, so a reconcile sees a consistent
store. A reconcile that raises is logged and retried with back-off; nothing a client
writes can stop the loop.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from simcluster import errors
from simcluster.apiserver.store import Change
from simcluster.backoff import exponential
from simcluster.clock import SLICE_SECONDS  # a pump between requests stops after this long

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

log = logging.getLogger("simcluster.controllers")

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)


class Controller:
    """Subclasses set `name`, implement `watches()` and `reconcile()`."""

    name = "controller"

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.clock = cluster.clock
        self.rt = cluster.rt
        self.events = cluster.events
        self._failures: dict[Key, int] = {}

    def watches(self) -> Iterable[tuple[str, Callable[[Change], Iterable[Key]]]]:
        """(resource plural path "group/plural", change -> keys to reconcile)."""
        return ()

    def reconcile(self, key: Key) -> float | None:
        """Bring the world closer to the object at `key`; return a nominal requeue delay."""
        return None

    def enqueue(self, key: Key, after: float | None = None) -> None:
        self.cluster.manager.enqueue(self, key, after)

    # helpers shared by controllers
    def write_status(self, rt: Any, obj: Obj, status: Obj) -> None:
        """Store `status` as the object's status (its status subresource), if it differs."""
        def write(current: Obj) -> bool | None:
            if current.get("status") == status:
                return False
            current["status"] = copy.deepcopy(status)
            return None
        meta = obj["metadata"]
        self.store.mutate(rt, meta.get("namespace", ""), meta["name"], write)

    def expire(self, rt: Any, obj: Obj, finished: float | None, ttl: int | None,
               policy: str) -> float | None:
        """ttlSecondsAfterFinished: the nominal seconds left before `obj`, finished at the
        clock reading `finished`, is deleted; None once it is (or without a ttl)."""
        if ttl is None or finished is None:
            return None
        remaining = finished + self.clock.real_delay(ttl) - self.clock.now()
        if remaining > 0:
            return max(remaining * self.clock.speed, 0.01)
        meta = obj["metadata"]
        try:
            self.cluster.deleter.delete(rt, meta["namespace"], meta["name"], None, policy)
        except errors.ApiError:
            pass
        return None

    @staticmethod
    def own_key(change: Change) -> Iterable[Key]:
        m = change.obj["metadata"]
        yield (m.get("namespace", ""), m["name"])

    @staticmethod
    def owner_key(kind: str) -> Callable[[Change], Iterable[Key]]:
        def mapper(change: Change) -> Iterable[Key]:
            m = change.obj["metadata"]
            for ref in m.get("ownerReferences") or []:
                if ref.get("kind") == kind and ref.get("controller"):
                    yield (m.get("namespace", ""), ref["name"])
        return mapper


class Manager:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.controllers: list[Controller] = []
        self._routes: dict[str, list[tuple[Controller, Callable[[Change], Iterable[Key]]]]] = {}
        self._queue: OrderedDict[tuple[int, Key], Controller] = OrderedDict()
        self._pump_scheduled = False
        self.running = False
        cluster.store.subscribe(self._on_change)

    def add(self, controller: Controller) -> None:
        self.controllers.append(controller)
        for path, mapper in controller.watches():
            self._routes.setdefault(path, []).append((controller, mapper))

    def _on_change(self, change: Change) -> None:
        path = f"{change.rt.group}/{change.rt.plural}"
        for controller, mapper in self._routes.get(path, ()):
            try:
                keys = list(mapper(change))
            except Exception:
                log.exception("%s: mapping a %s change failed", controller.name, path)
                continue
            for key in keys:
                self.enqueue(controller, key)

    def enqueue(self, controller: Controller, key: Key, after: float | None = None) -> None:
        if after is not None and after > 0:
            self.cluster.clock.call_later(after, lambda: self.enqueue(controller, key))
            return
        self._queue[(id(controller), key)] = controller
        self._schedule_pump()

    def _schedule_pump(self) -> None:
        if self._pump_scheduled or not self.running:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._pump_scheduled = True
        loop.call_soon(self._pump_soon)

    def _pump_soon(self) -> None:
        self._pump_scheduled = False
        self.pump(limit=2000, seconds=SLICE_SECONDS)

    def pump(self, limit: int | None = None, seconds: float | None = None) -> None:
        """Reconcile queued keys until the queue is empty, or `limit` keys or `seconds`
        (real) are reached: the rest is reconciled soon, after the event loop has served
        what waits (requests)."""
        done = 0
        deadline = None if seconds is None else time.monotonic() + seconds
        while self._queue:
            (_, key), controller = self._queue.popitem(last=False)
            self._reconcile(controller, key)
            done += 1
            if (limit is not None and done >= limit) or (
                    deadline is not None and time.monotonic() >= deadline):
                self._schedule_pump()
                return

    def _reconcile(self, controller: Controller, key: Key) -> None:
        try:
            requeue = controller.reconcile(key)
        except Exception:
            n = controller._failures.get(key, 0) + 1
            controller._failures[key] = n
            delay = exponential(0.5, n, 60.0)
            log.exception("%s: reconcile of %s failed (attempt %d), retrying in %.1fs",
                          controller.name, "/".join(key), n, delay)
            self.cluster.clock.call_later(delay, lambda: self.enqueue(controller, key))
            return
        controller._failures.pop(key, None)
        if requeue is not None:
            self.enqueue(controller, key, after=requeue)
