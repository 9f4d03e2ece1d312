"""Label selectors as kubectl takes them (`-l team=nlp,tier!=test,gpu,!spot`, `env in
(a,b)`, `env notin (c)`), matched against a job's labels here: the CLI's and the SDK's
`--selector`. Parsed strictly: a selector that cannot be read says how to write it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from odh.training.i18n import _

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_SET = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQUAL = re.compile(rf"^\s*({_KEY})\s*(==|=|!=)\s*({_VALUE})\s*$")
_EXISTS = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")


class SelectorError(ValueError):
    pass


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # "=", "!=", "in", "notin", "exists", "!exists"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        here = self.key in labels
        value = labels.get(self.key)
        if self.operator == "exists":
            return here
        if self.operator == "!exists":
            return not here
        if self.operator in ("=", "in"):
            return here and value in self.values
        return not here or value not in self.values  # != and notin, as Kubernetes has it


@dataclass(frozen=True)
class Selector:
    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        return all(r.matches(labels or {}) for r in self.requirements)


def _parts(text: str) -> list[str]:
    """Split on the commas outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def parse_selector(text: str) -> Selector:
    requirements = []
    for part in _parts(text):
        if match := _SET.match(part):
            values = frozenset(v.strip() for v in match[4].split(",") if v.strip())
            requirements.append(Requirement(match[1], match[3], values))
        elif match := _EQUAL.match(part):
            operator = "!=" if match[3] == "!=" else "="
            requirements.append(Requirement(match[1], operator, frozenset([match[4]])))
        elif match := _EXISTS.match(part):
            requirements.append(Requirement(match[2], "!exists" if match[1] else "exists"))
        else:
            raise SelectorError(_("“%(part)s” is not a label selector: write KEY=VALUE, "
                                  "KEY!=VALUE, KEY, !KEY or KEY in (A,B), joined by commas, "
                                  "e.g. team=nlp,tier!=test.") % {"part": part.strip()[:60]})
    return Selector(tuple(requirements))
