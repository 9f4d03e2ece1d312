"""The watcher's notification sender: claims the deliveries due (training/notifications.py)
and sends each on a small pool of threads, so that a slow or unreachable webhook holds one
sender for at most its timeout and never the hub, the recorder or the other deliveries.

It runs wherever the hub records transitions (runwatcher, or the embedded hub), never in
a web request; with several watchers, each claims before it sends, so each delivery is
sent by one of them. Stopping waits for the sends in flight: a delivery claimed and not
sent is claimed again once its claim expires.

A notice stored for the dashboard's bell is pushed (`publish`: the hub's channel layer) to
the group of its owner's sockets, `notices.<digest>` (training/live/hub/groups.py), as
`{"type": "hub.notice", "notice": {...}, "unread": n}`: only that person's sockets are in
it (training/live/notice_subscriptions.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any

from training.live.hub.background import Background

log = logging.getLogger("training.live.hub")

POLL_SECONDS = 1.0
WORKERS = 4


def _claim_due(limit: int) -> list[tuple[int, datetime]]:
    from training.notifications import claim_due

    return claim_due(limit)


Publish = Callable[[str, dict], None]


def _deliver(pk: int, claim: datetime, publish: Publish | None = None) -> str:
    from training.notifications import deliver

    return deliver(pk, claim, tell=(lambda notice: tell(publish, notice)) if publish else None)


def tell(publish: Publish, notice: Any) -> None:
    """Push a notice just stored to its owner's open pages, with their unread count."""
    from training.live.hub.groups import notices_group
    from training.notifications import notice_fields, unread_count

    publish(notices_group(notice.username), {
        "type": "hub.notice", "notice": notice_fields(notice),
        "unread": unread_count(notice.username)})


class NotificationSender(Background):
    name = "hub-notify"

    def __init__(self, claim_due: Callable[[int], list[tuple[int, datetime]]] = _claim_due,
                 deliver: Callable[[int, datetime], str] | None = None, *,
                 workers: int = WORKERS, poll: float = POLL_SECONDS,
                 publish: Publish | None = None) -> None:
        super().__init__()
        self.claim_due = claim_due
        self.deliver = deliver or (lambda pk, claim: _deliver(pk, claim, publish))
        self.workers = workers
        self.poll = poll
        self.claimed = 0
        self.outcomes: dict[str, int] = {}
        self.errors = 0
        self.last_error = ""
        self._in_flight: set[Future] = set()

    def stats(self) -> dict[str, Any]:
        with self._cond:
            return {"claimed": self.claimed, "outcomes": dict(self.outcomes),
                    "in_flight": len(self._in_flight), "errors": self.errors,
                    "last_error": self.last_error}

    def wake(self) -> None:
        """Look for due deliveries now (a transition was just recorded)."""
        with self._cond:
            self._cond.notify()

    def idle(self) -> bool:
        with self._cond:
            return not self._in_flight

    def run(self) -> None:
        from django.db import close_old_connections, connection

        pool = ThreadPoolExecutor(self.workers, thread_name_prefix="hub-notify-send")
        try:
            while not self.stopping:
                with self._cond:
                    free = self.workers - len(self._in_flight)
                claimed: list[tuple[int, datetime]] = []
                if free > 0:
                    close_old_connections()
                    try:
                        claimed = self.claim_due(free)
                    except Exception as e:  # the database away: the next poll tries again
                        self._failed(e)
                    finally:
                        close_old_connections()
                with self._cond:
                    self.claimed += len(claimed)
                    for pk, claim in claimed:
                        future = pool.submit(self._send, pk, claim)
                        self._in_flight.add(future)
                        future.add_done_callback(self._done)
                    if not claimed or len(self._in_flight) >= self.workers:
                        self._cond.wait(self.poll)
        finally:
            pool.shutdown(wait=True)
            connection.close()

    def _send(self, pk: int, claim: datetime) -> str:
        from django.db import connection

        try:
            return self.deliver(pk, claim)
        finally:
            connection.close()  # this pool thread's own connection

    def _done(self, future: Future) -> None:
        with self._cond:
            self._in_flight.discard(future)
            error = future.exception()
            if error is not None:
                self._failed(error)
            else:
                outcome = str(future.result())
                self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
            self._cond.notify()

    def _failed(self, e: BaseException) -> None:
        self.errors += 1
        self.last_error = f"{type(e).__name__}: {e}"
        log.warning("notifications: %s", self.last_error)
