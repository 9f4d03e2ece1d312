"""May this person see that? SelfSubjectAccessReviews with their token, cached briefly.

Live updates (websocket subscriptions) ask before joining a project's updates and again
while the page stays open, so a revoked right stops the updates within a minute. Each
answer is kept for `ttl` seconds per (person, question): a page with many sockets, or one
re-checked often, costs the API server one review a minute per project.

The person is identified by a digest of their token: a new sign-in never reuses the answer
given to an earlier token, and the cache never holds a usable token. An expired or revoked
token is not an answer but `errors.Unauthorized`, raised to the caller (never cached).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from odh.training.cluster.client import ClusterClient
from odh.training.kinds import default_kind

DEFAULT_TTL = 60.0


@dataclass(frozen=True)
class Access:
    """One SelfSubjectAccessReview question, without the namespace."""

    verb: str
    resource: str
    group: str = ""
    subresource: str = ""


# may the person read jobs of the kind the dashboard makes (a project's live page asks it)
GET_JOBS = Access("get", default_kind().plural, default_kind().group)


def identity(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:32]


class _Asking:
    """The lock of one question being asked, and how many callers hold or await it."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


class AccessCache:
    """Answers of access reviews, each kept `ttl` seconds. Thread-safe."""

    def __init__(self, ttl: float = DEFAULT_TTL, clock: Callable[[], float] = time.monotonic,
                 max_entries: int = 10_000) -> None:
        self.ttl = ttl
        self.clock = clock
        self.max_entries = max_entries
        self._answers: dict[tuple, tuple[float, bool]] = {}
        self._asking: dict[tuple, _Asking] = {}
        self._lock = threading.Lock()

    @contextmanager
    def asking(self, key: tuple) -> Iterator[None]:
        """Held while one caller asks the cluster this question, so that others waiting
        for the same answer reuse it instead of asking too. The question's lock is
        forgotten when its last caller leaves: only questions being asked have one."""
        with self._lock:
            entry = self._asking.get(key)
            if entry is None:
                entry = self._asking[key] = _Asking()
            entry.users += 1
        try:
            with entry.lock:
                yield
        finally:
            with self._lock:
                entry.users -= 1
                if entry.users == 0 and self._asking.get(key) is entry:
                    del self._asking[key]

    def questions_being_asked(self) -> int:
        with self._lock:
            return len(self._asking)

    def get(self, key: tuple) -> bool | None:
        with self._lock:
            entry = self._answers.get(key)
            if entry is None:
                return None
            at, allowed = entry
            if self.clock() - at >= self.ttl:
                del self._answers[key]
                return None
            return allowed

    def put(self, key: tuple, allowed: bool) -> None:
        with self._lock:
            if len(self._answers) >= self.max_entries:
                self._drop_expired()
                if len(self._answers) >= self.max_entries:  # still full: forget the oldest
                    oldest = min(self._answers, key=lambda k: self._answers[k][0])
                    del self._answers[oldest]
            self._answers[key] = (self.clock(), allowed)

    def clear(self) -> None:
        with self._lock:
            self._answers.clear()

    def _drop_expired(self) -> None:
        now = self.clock()
        for key in [k for k, (at, _) in self._answers.items() if now - at >= self.ttl]:
            del self._answers[key]


def allowed(client: ClusterClient, token: str, namespace: str, access: Access,
            cache: AccessCache, fresh: bool = False) -> bool:
    """Whether the token's owner may do `access` in `namespace` (cached answer if fresh).
    `fresh`: ask the cluster now whatever the cache holds (a check just before a change),
    and keep that answer for the others.

    Raises `errors.Unauthorized` when the token is no longer valid, and the other cluster
    errors (unreachable...) as they come: neither is an answer to cache.
    """
    key = (identity(token), namespace, access)
    answer = None if fresh else cache.get(key)
    if answer is not None:
        return answer
    with cache.asking(key):
        answer = None if fresh else cache.get(key)  # asked and answered while we waited?
        if answer is None:
            answer = client.can_i(access.verb, access.resource, access.group,
                                  namespace=namespace, subresource=access.subresource)
            cache.put(key, answer)
    return answer
