"""Writes tried again while SQLite says "database is locked": it lets one writer in at a
time and tells the others so rather than always waiting (PostgreSQL waits instead). What the
watchers record (transitions, the job history, kept evidence, claims of deliveries and
retries) must not be lost to that."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from django.db import OperationalError

T = TypeVar("T")
# seconds between attempts (about 3 s in all)
LOCKED_RETRIES = (0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6)


def unlocked(write: Callable[[], T]) -> T:
    """`write()`, tried again shortly while the database answers "locked"; any other error,
    or "locked" after the last attempt, is raised."""
    for delay in (*LOCKED_RETRIES, None):
        try:
            return write()
        except OperationalError as e:
            if delay is None or "locked" not in str(e):
                raise
            time.sleep(delay)
    raise AssertionError("unreachable")
