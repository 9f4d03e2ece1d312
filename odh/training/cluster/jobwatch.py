"""Following one job as it changes: a watch on the job, not polling.

`job_changes` reads the job, then watches it from that resourceVersion in windows of
`window` seconds (the server ends each; the next opens from the last version seen), and
yields the job each time it changes. At the end of a quiet window it yields the job once
more, so a caller that also reads the job's pods notices what changed in them (a Worker
that started) at most `window` seconds late. What the network or the API server does is
absorbed: `410 Gone` (the server no longer has the history) and a dropped connection lead
to reading the job again (after a back-off for the latter), so nothing is missed and
nothing is yielded twice for one change. A deleted job yields None and ends it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from odh.training import errors
from odh.training.cluster.api import Obj
from odh.training.cluster.client import ClusterClient
from odh.training.i18n import _
from odh.training.kinds import JobKind

WINDOW = 30
BACKOFF = (0.5, 10.0)


def _version(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def job_changes(cluster: ClusterClient, kind: JobKind, namespace: str, name: str, *,
                deadline: float | None = None, window: int = WINDOW,
                sleep: Callable[[float], None] = time.sleep) -> Iterator[Obj | None]:
    """The job now, then each time it changes, until `deadline` (time.monotonic()) or its
    deletion (None). NotFound at the start is raised (no such job); errors other than a
    lost connection or 410 are raised."""
    version = ""
    last: Obj | None = None
    delay = BACKOFF[0]
    first = True
    while deadline is None or time.monotonic() < deadline:
        try:
            if not version:
                try:
                    current = cluster.get_job(kind, namespace, name)
                except errors.NotFound:
                    if first:
                        raise
                    yield None
                    return
                first = False
                version = _version(current)
                if last is None or _version(current) != _version(last):
                    last = current
                    yield current
            remaining = window if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                return
            quiet = True
            for kind_of_event, obj in cluster.watch_job(kind, namespace, name, version,
                                                        max(1, min(window, int(remaining)))):
                delay = BACKOFF[0]
                if kind_of_event == "ERROR":
                    version = ""  # expired: read the job again
                    break
                if _version(obj):
                    version = _version(obj)
                if kind_of_event == "BOOKMARK":
                    continue
                if kind_of_event == "DELETED":
                    yield None
                    return
                quiet = False
                last = obj
                yield obj
            else:
                if quiet and last is not None:
                    yield last  # a quiet window: the caller may look at the pods again
        except errors.ClusterUnavailable:
            version = ""
            sleep(delay)
            delay = min(delay * 2, BACKOFF[1])
        except errors.ClusterError as e:
            if e.status != 410:
                raise
            version = ""


def wait_until_gone(cluster: ClusterClient, kind: JobKind, namespace: str, name: str,
                    timeout: float) -> None:
    """Return once the cluster no longer has the job (deleted, its pods going with it);
    JobTimeoutError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    try:
        for obj in job_changes(cluster, kind, namespace, name, deadline=deadline):
            if obj is None:
                return
    except errors.NotFound:
        return
    raise errors.JobTimeoutError(_("%(name)s is still being deleted after %(seconds)d "
                                   "seconds.") % {"name": name, "seconds": int(timeout)})
