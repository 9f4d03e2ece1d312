"""The languages live pages are viewed in, so the hub renders each push once per language
in use rather than once in the site's language for everyone.

A websocket consumer names its viewer's language to the hub (a `languages.renew` message
on `hub.control`, on connect and every RENEW_SECONDS); the hub renders every change in the
site's language (always) and in each language named within TTL_SECONDS, and sends each
rendering to that language's groups (`localized`). A hub that restarts forgets them, so
consumers name their language again when the hub says it is back ("up").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from types import SimpleNamespace

from django.conf import settings
from django.utils import translation

from .groups import _bounded

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


def renew_message(language: str) -> dict:
    return {"type": RENEW, "language": language}


class ViewerLanguages:
    """The languages named by consumers lately (thread-safe: the control listener adds,
    the hub's worker reads)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()

    def seen(self, language: str) -> None:
        if language not in shipped() or language == settings.LANGUAGE_CODE:
            return
        with self._lock:
            self._until[language] = self._clock() + TTL_SECONDS

    def active(self) -> list[str]:
        """The site's language first, then every language still in use."""
        now = self._clock()
        with self._lock:
            for code in [c for c, until in self._until.items() if until < now]:
                del self._until[code]
            return [settings.LANGUAGE_CODE, *sorted(self._until)]


def language_of_scope(scope: dict) -> str:
    """A websocket's viewer language, chosen as for their pages (LocaleMiddleware): the
    user menu's cookie, else the browser's Accept-Language, else the site's."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1")
               for k, v in scope.get("headers") or []}
    shim = SimpleNamespace(COOKIES=scope.get("cookies") or {},
                           META={"HTTP_ACCEPT_LANGUAGE": headers.get("accept-language", "")})
    return translation.get_language_from_request(shim)
