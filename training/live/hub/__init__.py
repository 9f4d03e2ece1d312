"""The watch hub (see hub.py), embedded in the web process or run by `runwatcher`.

Embedded (the default, `WATCHER_EMBEDDED=true`): the first websocket consumer to connect
calls `ensure_started()` (daphne has no lifespan events), which starts one hub for the
process, sending on the server's event loop through its channel layer (in-memory by
default). With `WATCHER_EMBEDDED=false` the web process never watches: a separate
`python manage.py runwatcher` does, publishing through Redis (`REDIS_URL`) to every web
replica.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from django.conf import settings

from training.live.hub.building import build_hub
from training.live.hub.groups import job_group, ns_group
from training.live.hub.hub import Hub

__all__ = ["Hub", "ensure_started", "get_hub", "job_group", "ns_group", "stop"]

log = logging.getLogger("training.live.hub")

_hub: Hub | None = None
_lock = threading.Lock()


def ensure_started() -> Hub | None:
    """The process's hub, started on first call; None when this process must not watch.

    Call it from async code (the consumer's `connect`): the hub then sends on that event
    loop, which the in-memory channel layer requires. Cheap after the first call, never
    blocks on the cluster and never raises: the hub retries in the background.
    """
    global _hub
    if not settings.WATCHER_EMBEDDED:
        return None
    if _hub is not None and _hub.running:
        return _hub
    with _lock:
        if _hub is None or not _hub.running:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
                log.warning("watch hub started outside an event loop: it sends on a loop "
                            "of its own, which the in-memory channel layer cannot share")
            try:
                _hub = build_hub(loop).start()
            except Exception:
                log.exception("the watch hub could not start")
                return None
    return _hub


def get_hub() -> Hub | None:
    """The hub running in this process, if any."""
    return _hub


def stop() -> None:
    """Stop this process's hub (tests; runwatcher stops its own)."""
    global _hub
    with _lock:
        hub, _hub = _hub, None
    if hub is not None:
        hub.stop()
