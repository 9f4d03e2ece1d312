"""Who watches what, in which language, so that the hub renders each push once per
language in use, and only for the groups someone watches.

A websocket consumer names its viewer's language and the hub groups it follows (`ns.<p>`,
`job.<p>.<name>`) to the hub: a `languages.renew` message on `hub.control`, on connect
(before its snapshot), when it subscribes, and every RENEW_SECONDS. The hub renders a
change for a group in each language named for that group within TTL_SECONDS, and sends
each rendering to that language's group (`localized`); a group nobody watches costs no
rendering (most jobs of a big cluster have no page open). A group watched anew is sent its
jobs that changed unseen meanwhile (`seen` returns it: see `Hub._interest`), so a change
that fell between a socket's snapshot and the hub hearing of it is not lost. A renew that
names no groups (a web process of an older release) counts for every group. A hub that
restarts forgets it all, so consumers name it again when the hub says it is back ("up").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from types import SimpleNamespace

from django.conf import settings
from django.utils import translation

from training.live.hub.groups import _bounded

RENEW = "languages.renew"
RENEW_SECONDS = 20.0
TTL_SECONDS = 75.0

_viewer_language: ContextVar[str] = ContextVar("viewer_language", default="")


def shipped() -> set[str]:
    return {code for code, _name in settings.LANGUAGES}


def set_viewer_language(code: str) -> None:
    """This socket's language (its task and the threads it starts inherit it)."""
    _viewer_language.set(code if code in shipped() else "")


def viewer_language() -> str:
    return _viewer_language.get() or settings.LANGUAGE_CODE


def in_viewer_language():
    """Sentences and renderings for the viewer of this socket (the site's language where
    there is none: the hub's own thread)."""
    return translation.override(viewer_language())


def localized(group: str, language: str | None = None) -> str:
    """The group that carries `group`'s pushes rendered in `language` (the site's language
    keeps the plain name; "_" never occurs in a Kubernetes name, so no job's group can
    collide with another's translated one)."""
    language = language or viewer_language()
    if language == settings.LANGUAGE_CODE:
        return group
    return _bounded(f"{group}_{language}")


MAX_GROUPS = 60  # per message: a socket follows at most MAX_SUBSCRIPTIONS


def renew_message(language: str, groups: list[str]) -> dict:
    return {"type": RENEW, "language": language, "groups": groups}


def groups_of(message: dict) -> list[str] | None:
    """The groups a renew message names (bounded), None if it names none at all."""
    groups = message.get("groups")
    if not isinstance(groups, list):
        return None
    return [g for g in groups[:MAX_GROUPS] if isinstance(g, str) and 0 < len(g) < 100]


class ViewerLanguages:
    """The languages and groups named by consumers lately (thread-safe: the control
    listener adds, the hub's worker reads)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: dict[str, float] = {}
        self._groups: dict[tuple[str, str], float] = {}  # (group, language) -> until
        self._everything: dict[str, float] = {}  # language -> until (renews without groups)
        self._pruned_at = 0.0
        self._lock = threading.Lock()

    def seen(self, language: str, groups: list[str] | None = None) -> list[tuple[str, str]]:
        """A consumer named `language` and the `groups` it follows (None: every group).
        Returns the (group, language) pairs nobody watched until now."""
        if language not in shipped():
            return []
        now = self._clock()
        with self._lock:
            if language != settings.LANGUAGE_CODE:
                self._until[language] = now + TTL_SECONDS
            if groups is None:
                self._everything[language] = now + TTL_SECONDS
                return []
            new = []
            for group in groups:
                pair = (group, language)
                if self._groups.get(pair, 0.0) < now:
                    new.append(pair)
                self._groups[pair] = now + TTL_SECONDS
            if now - self._pruned_at > TTL_SECONDS:
                self._groups = {k: t for k, t in self._groups.items() if t >= now}
                self._pruned_at = now
            return new

    def for_group(self, group: str) -> list[str]:
        """The languages `group`'s pushes are to be rendered in now (none: nobody watches)."""
        now = self._clock()
        with self._lock:
            return [language for language in self._languages(now)
                    if self._groups.get((group, language), 0.0) >= now
                    or self._everything.get(language, 0.0) >= now]

    def _languages(self, now: float) -> list[str]:
        for code in [c for c, until in self._until.items() if until < now]:
            del self._until[code]
        return [settings.LANGUAGE_CODE, *sorted(self._until)]

    def active(self) -> list[str]:
        """The site's language first, then every language still in use."""
        with self._lock:
            return self._languages(self._clock())


def language_of_scope(scope: dict) -> str:
    """A websocket's viewer language, chosen as for their pages (LocaleMiddleware): the
    user menu's cookie, else the browser's Accept-Language, else the site's."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1")
               for k, v in scope.get("headers") or []}
    shim = SimpleNamespace(COOKIES=scope.get("cookies") or {},
                           META={"HTTP_ACCEPT_LANGUAGE": headers.get("accept-language", "")})
    return translation.get_language_from_request(shim)
