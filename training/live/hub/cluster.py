"""Telling viewers that something they show changed, without saying what.

The hub calls `changed()` for every change of a ResourceQuota, a training job or one of
their pods; this sends `{"type": "hub.update", "cluster": true}` to the `cluster` group
(training/live/cluster_subscriptions.py) once the burst has settled, and at most every
`interval` seconds. The message carries no numbers: each page reads them again with its
viewer's own token, so a notice costs the API server one overview read per open overview
page, hence the interval. The same for Kueue's Workloads: `{"type": "hub.update", "queue":
true}` to the `queues` group (training/live/queue_subscriptions.py), whose pages read where
their jobs stand again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from training.live.hub.background import Background
from training.live.hub.groups import CLUSTER_GROUP, QUEUES_GROUP

log = logging.getLogger("training.live.hub")

CLUSTER_NOTICE_SECONDS = 5.0  # at most one notice this often
SETTLE_SECONDS = 0.5  # a burst of changes (eight Workers starting) becomes one notice
MESSAGE = {"type": "hub.update", "cluster": True, "html": "", "announce": "", "job": "",
           "status": "", "change": "cluster"}
QUEUE_NOTICE_SECONDS = 2.0  # a queue page reads a few objects: it may be told more often
QUEUE_MESSAGE = {"type": "hub.update", "queue": True, "html": "", "announce": "", "job": "",
                 "status": "", "change": "queue"}


def queue_notices(send: Callable[[str, dict], bool], ready: threading.Event) -> ClusterNotices:
    """Notices to the `queues` group that Kueue's Workloads moved."""
    return ClusterNotices(send, ready, interval=QUEUE_NOTICE_SECONDS, group=QUEUES_GROUP,
                          message=QUEUE_MESSAGE)


class ClusterNotices(Background):
    def __init__(self, send: Callable[[str, dict], bool], ready: threading.Event, *,
                 interval: float = CLUSTER_NOTICE_SECONDS,
                 settle: float = SETTLE_SECONDS, group: str = CLUSTER_GROUP,
                 message: dict | None = None) -> None:
        super().__init__()
        self.name = f"hub-{group}"
        self.send = send
        self.group = group
        self.message = message or MESSAGE
        self.ready = ready  # before the hub's first lists, changes are not news
        self.interval = interval
        self.settle = settle
        self.sent = 0
        self._pending = False

    def changed(self) -> None:
        if not self.ready.is_set():
            return
        with self._cond:
            self._pending = True
            self._cond.notify()

    def run(self) -> None:
        last = float("-inf")
        while not self.stopping:
            with self._cond:
                while not self._pending and not self.stopping:
                    self._cond.wait(1.0)
            if self.stopping:
                return
            wait = max(self.settle, last + self.interval - time.monotonic())
            if self.wait(wait):
                return
            with self._cond:
                self._pending = False
            if self.send(self.group, dict(self.message)):
                self.sent += 1
                last = time.monotonic()
            else:  # the channel layer is away: try again at the next interval
                with self._cond:
                    self._pending = True
                last = time.monotonic()
