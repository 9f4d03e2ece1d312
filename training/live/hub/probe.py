"""Noticing an API server that stops answering without closing its connections.

A watch learns nothing from a server that hangs: its stream stays open and silent, and a
quiet cluster looks the same. So every `every` seconds the hub checks that the API server
has been heard: the watches' own traffic (a list, an event or a BOOKMARK on any of them in
the last `every` seconds) is proof enough, and only when they were all quiet does it ask a
cheap question (`GET /version`) with a short timeout: a busy cluster costs no request at
all. Once nothing has been heard for `silent_after` seconds the probe says the hub is blind
(HubStatus then tells open pages, after its own grace, within about 10 s of the hang), and
when answers come again it makes every watch reconnect (from its resourceVersion; a 410
makes it list again), since streams opened before the hang may be dead without knowing it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from training.live.hub.background import Background

log = logging.getLogger("training.live.hub")

EVERY_SECONDS = 2.0
SILENT_AFTER_SECONDS = 5.0
TIMEOUT = (2.0, 2.0)  # connect, read


class ClusterProbe(Background):
    name = "hub-probe"

    def __init__(self, client_factory: Callable[[], ClusterClient],
                 on_recovered: Callable[[], None], *, every: float = EVERY_SECONDS,
                 silent_after: float = SILENT_AFTER_SECONDS,
                 heard: Callable[[], float] = lambda: 0.0) -> None:
        super().__init__()
        self.client_factory = client_factory
        self.on_recovered = on_recovered
        self.heard = heard  # when (time.monotonic()) the watches last heard from the server
        self.asked = 0  # GET /version requests made
        self.checks = 0  # times it checked that the server was heard
        self.every = every
        self.silent_after = silent_after
        self.last_answer = time.monotonic()
        self.failures = 0

    @property
    def silent(self) -> bool:
        """No answer for `silent_after` seconds: the hub cannot trust what it sees."""
        return time.monotonic() - self.last_answer > self.silent_after

    def ask(self) -> bool:
        """One probe; True when the API server answered."""
        self.asked += 1
        try:
            with self.client_factory() as client:
                client.timeout = TIMEOUT
                client.version()
        except errors.ClusterError as e:
            # refused (401/403) is an answer: the server is there
            if isinstance(e, errors.ClusterUnavailable):
                return False
        except Exception:  # a probe that breaks tells nothing
            log.debug("cluster probe failed", exc_info=True)
            return False
        return True

    def run(self) -> None:
        while not self.wait(self.every):
            was_silent = self.silent
            self.checks += 1
            if time.monotonic() - self.heard() < self.every or self.ask():
                self.last_answer = time.monotonic()
                self.failures = 0
                if was_silent:
                    log.warning("watch hub: the API server answers again; reconnecting watches")
                    self.on_recovered()
            else:
                self.failures += 1
                if self.failures == 1 or self.silent:
                    log.warning("watch hub: the API server did not answer (%d in a row)",
                                self.failures)
