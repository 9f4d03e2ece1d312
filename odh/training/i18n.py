"""Translatable text for the sentences odh.training hands to people.

odh cannot import Django, so it marks its strings with `_()` (and `ngettext()` for counts),
which Django's `makemessages` extracts like any other gettext call, and translates them
through whatever function the host application installs:

    set_translator(django.utils.translation.gettext, django.utils.translation.ngettext)

Without one (the SDK, the CLI, tests) the English text is returned unchanged. Strings are
translated when a message is made, never at import, so each request gets its language.
Placeholders use the `%(name)s` form so translators can reorder them. Text made once at
import (template descriptions) uses `gettext_lazy`, translated each time it is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["LazyText", "_", "gettext_lazy", "ngettext", "set_translator"]


def _identity(message: str) -> str:
    return message


def _english_plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


_translate: Callable[[str], str] = _identity
_translate_plural: Callable[[str, str, int], str] | None = None


def shown(value: object, limit: int = 40) -> str:
    """A value short enough to quote in a message."""
    text = str(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def set_translator(fn: Callable[[str], str],
                   plural: Callable[[str, str, int], str] | None = None) -> None:
    """Install the translation functions (gettext, and optionally ngettext).

    Without a plural function, `ngettext` picks the English form and translates that.
    """
    global _translate, _translate_plural
    _translate = fn
    _translate_plural = plural


def _(message: str) -> str:
    return _translate(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    if _translate_plural is not None:
        return _translate_plural(singular, plural, count)
    return _translate(_english_plural(singular, plural, count))


class LazyText:
    """Text translated when it is turned into a string (rendered), not when it is made.

    With `params`, the translated text is %-formatted with them when shown; a param that
    is LazyText itself is shown in the same language. A job's status line is made once
    (by the watch hub, for every viewer) and shown in each viewer's language.
    """

    __slots__ = ("message", "params")

    def __init__(self, message: str, params: dict[str, Any] | None = None) -> None:
        self.message = message
        self.params = params or None

    def __str__(self) -> str:
        text = _(self.message)
        if not self.params:
            return text
        return text % {key: str(value) if isinstance(value, LazyText) else value
                       for key, value in self.params.items()}

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return repr(str(self))

    def __bool__(self) -> bool:
        return bool(self.message)

    def __len__(self) -> int:
        return len(str(self))

    def _key(self) -> tuple:
        return (self.message, tuple(sorted((self.params or {}).items())))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyText):
            return self._key() == other._key()
        if isinstance(other, str):
            return str(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __getattr__(self, name: str) -> Any:
        # the methods of the text shown (startswith, split...): it reads as a str would
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(str(self), name)

    def __add__(self, other: object) -> str:
        return str(self) + str(other)

    def __radd__(self, other: object) -> str:
        return str(other) + str(self)

    def __reduce__(self):  # pickled into caches as what it is, not as one language's text
        return (LazyText, (self.message, self.params))


def gettext_lazy(message: str, **params: Any) -> LazyText:
    """`message` translated when shown; `params` fill its `%(name)s` placeholders then."""
    return LazyText(message, params)
