"""Work handed to a thread pool keeps the request's language: Django activates a language
per thread, so a pool thread would write its sentences in the site's language."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from django.utils import translation

P = ParamSpec("P")
R = TypeVar("R")


def in_callers_language(fn: Callable[P, R]) -> Callable[P, R]:
    language = translation.get_language()

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with translation.override(language):
            return fn(*args, **kwargs)

    return run
