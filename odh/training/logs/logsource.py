"""Where `LogStreams` reads a pod's log from: the `LogSource` protocol (tests give a fake
one), and `KubeLogSource`, the API server's `pods/log` through the official client."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.cluster.logstreams import LogFollow

PodKey = tuple[str, str, str]  # namespace, pod, container ("" = the pod's only container)

FINISHED, DELETED, CAPACITY = "finished", "deleted", "capacity"


class StreamGone(Exception):
    """The pod (or its container) will write nothing more: `reason` is FINISHED or DELETED."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class LogConnection(Protocol):
    def lines(self) -> Iterator[str]:
        """Raw lines (with their timestamp prefix) as they arrive; ends when the server
        ends the stream."""
        ...

    def close(self) -> None:
        """Stop, from any thread: a blocked `lines()` returns or raises soon after."""
        ...


class LogSource(Protocol):
    def open(self, key: PodKey, tail_lines: int) -> LogConnection:
        """A follow request for the pod's log with timestamps, starting `tail_lines` back.

        Raises StreamGone when the pod no longer exists or has finished; anything else is
        taken as passing (retried with back-off)."""
        ...

    def state(self, key: PodKey) -> str:
        """After a stream ended: "running" (open it again), "waiting", FINISHED or
        DELETED."""
        ...


class KubeLogSource:
    """`LogSource` over the official client, with the credentials `client_factory` gives
    (the dashboard's service account: it needs `get` on `pods` and `pods/log`)."""

    def __init__(self, client_factory: Callable[[], ClusterClient],
                 read_timeout: float | None = 600.0) -> None:
        self.client_factory = client_factory
        self.read_timeout = read_timeout

    def open(self, key: PodKey, tail_lines: int) -> LogConnection:
        namespace, pod, container = key
        client = self.client_factory()
        try:
            follow = client.follow_log(namespace, pod, container or None, tail_lines=tail_lines,
                                       read_timeout=self.read_timeout)
        except errors.NotFound:
            client.close()
            raise StreamGone(DELETED) from None
        except BaseException:
            client.close()
            raise
        return _ClientConnection(follow, client)

    def state(self, key: PodKey) -> str:
        namespace, pod, container = key
        with self.client_factory() as client:
            try:
                obj = client.get_pod(namespace, pod)
            except errors.NotFound:
                return DELETED
        return pod_log_state(obj, container)


def pod_log_state(pod: dict, container: str = "") -> str:
    """Will this container write more? "running", "waiting" (not started, or restarting),
    FINISHED (the pod is done, or the container ended and will not restart)."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return FINISHED
    statuses = status.get("containerStatuses") or []
    mine = next((c for c in statuses if not container or c.get("name") == container), None)
    state = (mine or {}).get("state") or {}
    if "running" in state:
        return "running"
    if "terminated" in state and ((pod.get("spec") or {}).get("restartPolicy") == "Never"
                                  or (pod.get("metadata") or {}).get("deletionTimestamp")):
        return FINISHED
    return "waiting"


class _ClientConnection:
    def __init__(self, follow: LogFollow, client: ClusterClient) -> None:
        self.follow = follow
        self.client = client

    def lines(self) -> Iterator[str]:
        return self.follow.lines()

    def close(self) -> None:
        try:
            self.follow.close()
        finally:
            self.client.close()
