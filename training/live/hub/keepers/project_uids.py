"""The uid of the project a job history record belongs to, for the transition recorder
(transitions.py `project_uid`): a project deleted and made again is told apart by it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from odh.training.cluster.client import ClusterClient

log = logging.getLogger("training.live.hub")


class ProjectUids:
    """Namespace name -> uid, read with the service account, kept a minute (a project
    deleted and made again gets its new uid within it)."""

    TTL = 60.0

    def __init__(self, client_factory: Callable[[], ClusterClient]) -> None:
        self.client_factory = client_factory
        self._known: dict[str, tuple[float, str]] = {}

    def __call__(self, namespace: str) -> str:
        known = self._known.get(namespace)
        if known is not None and time.monotonic() - known[0] < self.TTL:
            return known[1]
        try:
            with self.client_factory() as client:
                uid = client.namespace_uid(namespace)
        except Exception as e:
            log.warning("watch hub: the uid of project %s is unknown: %s", namespace, e)
            return ""
        self._known[namespace] = (time.monotonic(), uid)
        return uid
