"""A job's own log patterns: how a training script whose wording the dashboard does not
recognise declares where its numbers are.

The job's annotation `opendatahub.io/metric-patterns` holds one pattern a line, written
as the log line looks, with `{name}` where a number stands:

    opendatahub.io/metric-patterns: |
      Iter {step} | bleu {bleu} | wps {words_per_sec}
      validation after epoch {epoch}: ppl {val_ppl}

- `{step}` and `{epoch}` say where training is (a pattern has one or both);
- any other `{name}` is a metric (letters, digits, `_`, `.`, `/`, `-`; lower-cased);
- `*` stands for any text, a space for any run of spaces (or none); the rest is matched as
  written, anywhere in the line, the case ignored.

A line one of them matches gives its metrics at its step or epoch, and nothing else is
read from it; other lines are read as usual (odh/training/logs/curves.py). The numbers
themselves may be integers, decimals or in exponent notation (`1.5E-04`).

Why a template and not a regular expression: the patterns run in the dashboard's watcher
on every line of every job's log, and a regular expression can be written to backtrack
for hours on one line. A template's parts between its `*`s become expressions of literal
text and whole numbers only (a number is never split or given back: atomic), found one
after another from where the last ended, so a line costs a few passes over its first
LINE_LIMIT characters whatever the pattern. The same reason bounds them: at most
MAX_PATTERNS patterns of MAX_PATTERN_LENGTH characters, MAX_STARS `*` each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from odh.training.i18n import _

ANNOTATION = "opendatahub.io/metric-patterns"
MAX_PATTERNS = 8
MAX_PATTERN_LENGTH = 200
MAX_STARS = 3
LINE_LIMIT = 2000  # characters of a line a pattern reads
MAX_NAME_LENGTH = 48  # as a metric found by the usual patterns (odh.training.logs.logvalues)
POSITIONS = ("step", "epoch")

_FIELD = re.compile(r"\{([^{}]*)\}")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*\Z")
# a number whole: never split between two fields, never given back (atomic)
_NUMBER_FIELD = r"(?<![\d.])((?>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?))(?!\d)"

Reading = tuple[float | None, float | None, list[tuple[str, float]]]


@dataclass(frozen=True)
class DeclaredPattern:
    template: str
    segments: tuple[re.Pattern, ...]  # its parts between `*`s, found one after another
    names: tuple[str, ...]  # the fields in order: "step", "epoch" or a metric's name

    def read(self, line: str) -> Reading | None:
        """(step, epoch, [(metric, value)]) where the line matches, else None."""
        line = line[:LINE_LIMIT]
        numbers: list[str] = []
        at = 0
        for segment in self.segments:  # each where it first fits after the one before
            m = segment.search(line, at)
            if m is None:
                return None
            numbers += m.groups()
            at = m.end()
        step = epoch = None
        metrics: list[tuple[str, float]] = []
        for name, number in zip(self.names, numbers, strict=True):
            value = float(number)
            if name == "step":
                step = float(int(value)) if value.is_integer() else value
            elif name == "epoch":
                epoch = value
            else:
                metrics.append((name, value))
        return step, epoch, metrics


def _literal(text: str) -> str:
    return "".join(r"\s*+" if part.isspace() else re.escape(part)
                   for part in re.split(r"(\s+)", text) if part)


def _segment(piece: str, shown: str) -> tuple[str, list[str]]:
    """The expression of a part of a template between `*`s, and its fields' names."""
    names: list[str] = []
    parts: list[str] = []
    at = 0
    for m in _FIELD.finditer(piece):
        name = m.group(1).strip()
        if not _NAME.match(name) or len(name) > MAX_NAME_LENGTH:
            raise ValueError(_("The metric pattern “%(pattern)s” has the field "
                               "“{%(field)s}”: a field is a name of letters, digits, “_”, "
                               "“.”, “/” or “-”, starting with a letter, at most %(max)d "
                               "characters.") % {"pattern": shown, "field": m.group(1),
                                                 "max": MAX_NAME_LENGTH})
        parts.append(_literal(piece[at:m.start()]))
        parts.append(_NUMBER_FIELD)
        names.append(name.lower())
        at = m.end()
    parts.append(_literal(piece[at:]))
    return "".join(parts), names


def compile_pattern(template: str) -> DeclaredPattern:
    """The pattern a template says; ValueError saying what to change when it cannot be
    one."""
    shown = template.strip()
    if len(shown) > MAX_PATTERN_LENGTH:
        raise ValueError(_("The metric pattern “%(pattern)s…” is longer than %(max)d "
                           "characters: shorten it (a few words around the numbers are "
                           "enough).") % {"pattern": shown[:40], "max": MAX_PATTERN_LENGTH})
    if shown.count("*") > MAX_STARS:
        raise ValueError(_("The metric pattern “%(pattern)s” has more than %(max)d “*”: "
                           "write more of the line as it is.") % {"pattern": shown,
                                                                  "max": MAX_STARS})
    names: list[str] = []
    segments: list[re.Pattern] = []
    for piece in shown.split("*"):
        expression, found = _segment(piece, shown)
        for name in found:
            if name in names:
                raise ValueError(_("The metric pattern “%(pattern)s” names {%(field)s} "
                                   "twice: name it once.") % {"pattern": shown, "field": name})
            names.append(name)
        if expression:
            segments.append(re.compile(expression, re.I))
    if not any(n in POSITIONS for n in names):
        raise ValueError(_("The metric pattern “%(pattern)s” does not say where training is: "
                           "put {step} or {epoch} where the line gives it.")
                         % {"pattern": shown})
    if all(n in POSITIONS for n in names):
        raise ValueError(_("The metric pattern “%(pattern)s” names no metric: put "
                           "{loss} (or another name) where the line gives its number.")
                         % {"pattern": shown})
    return DeclaredPattern(shown, tuple(segments), tuple(names))


def parse_patterns(value: str | None) -> list[DeclaredPattern]:
    """The patterns of the annotation's value, one a non-empty line; ValueError on the
    first that cannot be one, or when there are too many."""
    templates = [line for line in str(value or "").splitlines() if line.strip()]
    if len(templates) > MAX_PATTERNS:
        raise ValueError(_("%(annotation)s has %(count)d patterns: at most %(max)d are "
                           "read.") % {"annotation": ANNOTATION, "count": len(templates),
                                       "max": MAX_PATTERNS})
    return [compile_pattern(t) for t in templates]


def job_patterns(job: dict) -> tuple[str, ...]:
    """The templates the job declares, as written (() when it declares none, or when they
    cannot be read: the manifest check says why before the job is created)."""
    annotations = (job.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(ANNOTATION) if isinstance(annotations, dict) else None
    try:
        return tuple(p.template for p in parse_patterns(value))
    except ValueError:
        return ()
