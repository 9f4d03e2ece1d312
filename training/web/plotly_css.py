"""Plotly's own style rules as a stylesheet, so the Content-Security-Policy needs no
'unsafe-inline' for styles.

Plotly.js adds its rules (modebar, hover labels, notifier) by creating a <style> element,
which a strict policy refuses, unless the page already has an element with id
`plotly.js-style-global` and class `no-inline-styles`: then it adds nothing and counts on
the page to style it. Our base template's <link> with that id loads this stylesheet, read
from the very Plotly.js file the pages load (so an upgrade of the `plotly` package brings
its rules along). In the bundle the rules are one object literal whose keys are selectors
with `X` for `.js-plotly-plot .plotly` and `Y` for `.plotly-notifier`; each is inserted
at index 0, so the stylesheet holds them in reverse order.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from pathlib import Path

from django.conf import settings

log = logging.getLogger(__name__)

FIRST_SELECTOR = '"X,X div":'
_LITERAL = r'"(?:[^"\\]|\\.)*"' + "|" + r"'(?:[^'\\]|\\.)*'"  # a JS string literal
_PAIR = re.compile(rf"\s*(?P<key>{_LITERAL}|[A-Za-z_$][\w$]*)\s*:"
                   rf"\s*(?P<value>{_LITERAL})\s*", re.S)


def _unquote(literal: str) -> str:
    if literal[0] not in "\"'":
        return literal  # a key written as a name
    return re.sub(r"\\(.)", r"\1", literal[1:-1])


def rules_of(bundle: str) -> list[tuple[str, str]]:
    """The (selector, declarations) pairs Plotly.js inserts, in its object's order."""
    at = bundle.find(FIRST_SELECTOR)
    if at < 0:
        raise ValueError("Plotly's style rules were not found in the bundle")
    rules = []
    while True:
        pair = _PAIR.match(bundle, at)
        if pair is None:
            raise ValueError("Plotly's style rules end unexpectedly")
        rules.append((_unquote(pair["key"]), _unquote(pair["value"])))
        at = pair.end()
        if bundle.startswith("}", at):
            return rules
        if not bundle.startswith(",", at):
            raise ValueError("Plotly's style rules end unexpectedly")
        at += 1


def _selector(key: str) -> str:
    return (re.sub(r"^,", " ,", key).replace("X", ".js-plotly-plot .plotly")
            .replace("Y", ".plotly-notifier"))


def stylesheet_of(bundle: str) -> str:
    return "".join(f"{_selector(key)}{{{rules}}}\n" for key, rules in reversed(rules_of(bundle)))


def bundle_path() -> Path:
    return Path(settings.PLOTLY_BUNDLE)


@lru_cache(maxsize=1)
def stylesheet() -> str:
    """The stylesheet of the installed Plotly.js (read once per process)."""
    try:
        return stylesheet_of(bundle_path().read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        # charts still draw, with an unstyled toolbar: say so rather than fail pages
        log.error("Plotly's style rules could not be read from %s: %s", bundle_path(), e)
        return ""
