"""Expired sessions deleted once a day by the watch hub (`manage.py clearsessions`).

Django never deletes a session that ran out: its row, with the person's sealed OpenShift
token (training/accounts/session.py), would stay in django_session for ever. Whichever process runs
the hub (`runwatcher` in production, the web process when embedded) deletes them a minute
after it starts and then every day, in a thread of its own, as `clearsessions` does. Two
processes doing it at once is harmless: each deletes what has expired.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib import import_module

from training.live.hub.background import Background

log = logging.getLogger("training.live.hub")

SWEEP_SECONDS = 24 * 3600.0
FIRST_SWEEP_SECONDS = 60.0


def clear_expired_sessions() -> None:
    """What `python manage.py clearsessions` does, with this thread's own connection."""
    from django.conf import settings
    from django.db import close_old_connections

    close_old_connections()
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()


class SessionSweeper(Background):
    name = "hub-session-sweeper"

    def __init__(self, clear: Callable[[], None] = clear_expired_sessions, *,
                 first_after: float = FIRST_SWEEP_SECONDS,
                 every: float = SWEEP_SECONDS) -> None:
        super().__init__()
        self.clear = clear
        self.first_after = first_after
        self.every = every
        self.sweeps = 0
        self.errors = 0
        self.last_error = ""

    def stats(self) -> dict:
        return {"sweeps": self.sweeps, "errors": self.errors, "last_error": self.last_error}

    def sweep(self) -> None:
        try:
            self.clear()
        except Exception as e:  # the database is away: the next day's sweep does it
            self.errors += 1
            self.last_error = f"{type(e).__name__}: {e}"
            log.warning("clearing expired sessions failed: %s", self.last_error)
        else:
            self.sweeps += 1
            log.info("expired sessions cleared")

    def run(self) -> None:
        from django.db import connection

        delay = self.first_after
        try:
            while not self.wait(delay):
                self.sweep()
                delay = self.every
        finally:
            connection.close()  # this thread's own
