"""Telling open pages whether the watch hub can see the cluster.

While the hub's watches fail (the API server unreachable, the hub's token refused) it
learns of no change, so open pages would keep looking live while nothing reaches them.
`HubStatus` sends `{"type": "hub.status", "state": "down" | "up"}` to the `hub.status`
group, which every live socket joins (training/live/consumers.py):

- "down" once the cluster has been out of the hub's sight for `grace` seconds (every
  watch failing, or the cluster's APIs not read yet because it does not answer): a
  restarting API server, which the watches get over in a moment, is not news;
- "up" as soon as it sees again (a watch listed again): the sockets then send their
  pages a fresh snapshot, read with each person's own token;
- and the current state again every `every` seconds, for sockets that joined (or joined
  again, after a Redis restart) since it changed, and sends that failed.

Once the hub has listed everything, its messages carry its `epoch` (a random id of this
start of it), and the first one is sent at once: a socket that hears of another epoch
than before knows that a new hub took over (runwatcher restarted, another replica
elected) and that changes may have happened in between, which no hub pushed; it sends
its page a fresh snapshot.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from training.live.hub.background import Background
from training.live.hub.groups import STATUS_GROUP

log = logging.getLogger("training.live.hub")

DOWN_GRACE_SECONDS = 3.0
REPEAT_SECONDS = 10.0
POLL_SECONDS = 0.25
RETRY_SECONDS = 1.0  # a send that failed (Redis away) is tried again this often

UP, DOWN = "up", "down"


def message(state: str, epoch: str = "") -> dict:
    return {"type": "hub.status", "state": state, "hub": epoch}


class HubStatus(Background):
    name = "hub-status"

    def __init__(self, send: Callable[[str, dict], bool], sees: Callable[[], bool], *,
                 grace: float = DOWN_GRACE_SECONDS, every: float = REPEAT_SECONDS,
                 poll: float = POLL_SECONDS, ready: Callable[[], bool] = lambda: True,
                 epoch: str = "") -> None:
        super().__init__()
        self.send = send
        self.sees = sees  # whether the hub sees the cluster now
        self.ready = ready  # whether it has listed everything
        self.epoch = epoch
        self.grace = grace
        self.every = every
        self.poll = poll
        self.state = UP  # as told to viewers
        self.changes = 0
        self._blind_since: float | None = None

    @property
    def down(self) -> bool:
        return self.state == DOWN

    def check(self, now: float | None = None) -> bool:
        """Look again; True when the state told to viewers changed."""
        now = time.monotonic() if now is None else now
        try:
            sees = self.sees()
        except Exception:  # a probe that fails tells nothing: keep the state
            log.exception("watch hub: cannot tell whether it sees the cluster")
            return False
        if sees:
            self._blind_since = None
            state = UP
        else:
            if self._blind_since is None:
                self._blind_since = now
            state = DOWN if now - self._blind_since >= self.grace else self.state
        if state == self.state:
            return False
        self.state = state
        self.changes += 1
        if state == DOWN:
            log.warning("watch hub: the cluster is out of sight; telling open pages")
        else:
            log.info("watch hub: the cluster is in sight again; telling open pages")
        return True

    def run(self) -> None:
        last_sent = float("-inf")
        unsent = False
        told_ready = False
        while not self.wait(self.poll):
            changed = self.check()
            ready = self.ready()
            now = time.monotonic()
            if changed or (ready and not told_ready) or \
                    now - last_sent >= (RETRY_SECONDS if unsent else self.every):
                unsent = not self.send(STATUS_GROUP,
                                       message(self.state, self.epoch if ready else ""))
                told_ready = told_ready or (ready and not unsent)
                last_sent = now
