"""Leader election through a `coordination.k8s.io/v1` Lease, as Kubernetes controllers do it
(client-go's leaderelection): several replicas of one process, one of them active.

The holder renews the Lease every `renew_every` seconds. The others read it every
`retry_every` seconds and take it over once it has gone unrenewed for `lease_seconds`, as
*they* observed it (the time they last saw it change, on their own clock, never the
holder's `renewTime`: clocks of two machines need not agree). Every write carries the
resourceVersion read, so of two replicas taking over at once one gets a 409 Conflict and
stays a candidate. A holder that cannot renew for `renew_deadline` seconds (the API
server away, or the Lease taken) stops leading before its Lease can have expired for the
others, and says so (`on_stopped`): the process should then end and start again as a
candidate. A holder that stops on purpose gives the Lease up (holder cleared), so a
standby takes over at its next read instead of after the whole duration.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from odh.training import errors
from odh.training.cluster.client import ClusterClient

log = logging.getLogger("odh.training.cluster.election")

LEASE_SECONDS = 15.0
Obj = dict[str, Any]


def identity() -> str:
    """This replica's name in the Lease: its host (the pod's name) and a random part."""
    return f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"


def _micro_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaseElector:
    def __init__(self, client_factory: Callable[[], ClusterClient], namespace: str, name: str,
                 *, holder: str | None = None, lease_seconds: float = LEASE_SECONDS,
                 on_started: Callable[[], None] = lambda: None,
                 on_stopped: Callable[[], None] = lambda: None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client_factory = client_factory
        self.namespace = namespace
        self.name = name
        self.holder = holder or identity()
        self.lease_seconds = lease_seconds
        self.renew_deadline = lease_seconds * 2 / 3
        self.renew_every = lease_seconds / 3
        self.retry_every = max(lease_seconds / 7.5, 0.2)
        self.on_started = on_started
        self.on_stopped = on_stopped
        self.clock = clock
        self.leading = threading.Event()
        self.lost = threading.Event()  # was leading, and could not go on
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._observed: tuple[str, str, int] | None = None  # holder, renewTime, transitions
        self._observed_at = 0.0
        self._renewed_at = 0.0
        self.transitions_seen = 0

    # -- the loop -----------------------------------------------------------------------------
    def start(self) -> LeaseElector:
        self._thread = threading.Thread(target=self._run, name="lease-elector", daemon=True)
        self._thread.start()
        return self

    def stop(self, release: bool = True) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        if release and self.leading.is_set():
            self._release()
        self.leading.clear()

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self.leading.is_set():
                if self._try_acquire_or_renew():
                    self._renewed_at = self.clock()
                    self.leading.set()
                    log.info("leader election: %s holds %s/%s", self.holder, self.namespace,
                             self.name)
                    self.on_started()
                    continue
                self._stop.wait(self.retry_every)
                continue
            self._stop.wait(self.renew_every)
            if self._stop.is_set():
                break
            if self._try_acquire_or_renew():
                self._renewed_at = self.clock()
            elif self.clock() - self._renewed_at >= self.renew_deadline:
                log.warning("leader election: %s could not renew %s/%s for %.1f s: stepping "
                            "down", self.holder, self.namespace, self.name,
                            self.clock() - self._renewed_at)
                self.leading.clear()
                self.lost.set()
                self.on_stopped()
                return

    # -- one attempt ----------------------------------------------------------------------------
    def _try_acquire_or_renew(self) -> bool:
        """Take or renew the Lease once: True if this replica holds it now."""
        try:
            with self.client_factory() as client:
                return self._attempt(client)
        except errors.Conflict:
            return False  # another replica wrote it first: it holds it
        except errors.ClusterError as e:
            log.info("leader election: %s/%s: %s", self.namespace, self.name, e.message)
            return False

    def _attempt(self, client: ClusterClient) -> bool:
        now = datetime.now(UTC)
        try:
            lease = client.get_lease(self.namespace, self.name)
        except errors.NotFound:
            client.create_lease(self.namespace, self._lease(None, now))
            self._observe(self.holder, _micro_time(now), 0)
            return True
        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        transitions = int(spec.get("leaseTransitions") or 0)
        self._observe(holder, str(spec.get("renewTime") or ""), transitions)
        if holder and holder != self.holder and \
                self.clock() - self._observed_at < self.lease_seconds:
            return False  # held, and renewed within the duration as far as we saw
        body = self._lease(lease, now)
        client.replace_lease(self.namespace, self.name, body)
        spec = body["spec"]
        self._observe(self.holder, spec["renewTime"], int(spec["leaseTransitions"]))
        return True

    def _observe(self, holder: str, renewed: str, transitions: int) -> None:
        record = (holder, renewed, transitions)
        if record != self._observed:
            self._observed = record
            self._observed_at = self.clock()
            self.transitions_seen = transitions

    def _lease(self, current: Obj | None, now: datetime) -> Obj:
        spec = dict((current or {}).get("spec") or {})
        ours = spec.get("holderIdentity") == self.holder
        spec.update({
            "holderIdentity": self.holder,
            "leaseDurationSeconds": max(1, round(self.lease_seconds)),
            "renewTime": _micro_time(now),
        })
        if not ours:
            spec["acquireTime"] = _micro_time(now)
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + (
                1 if current is not None else 0)
        spec.setdefault("leaseTransitions", 0)
        metadata = {"name": self.name, "namespace": self.namespace}
        if current is not None:
            metadata["resourceVersion"] = (current.get("metadata") or {}).get(
                "resourceVersion", "")
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": metadata, "spec": spec}

    def _release(self) -> None:
        """Give the Lease up (holder cleared) so that a standby need not wait it out."""
        try:
            with self.client_factory() as client:
                lease = client.get_lease(self.namespace, self.name)
                spec = dict(lease.get("spec") or {})
                if spec.get("holderIdentity") != self.holder:
                    return
                spec.update({"holderIdentity": "", "leaseDurationSeconds": 1})
                client.replace_lease(self.namespace, self.name, {
                    **lease, "spec": spec})
            log.info("leader election: %s gave %s/%s up", self.holder, self.namespace,
                     self.name)
        except errors.ClusterError as e:
            log.info("leader election: could not give %s/%s up: %s", self.namespace,
                     self.name, e.message)
