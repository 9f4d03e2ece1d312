"""The values of a log line: `name=value` and `name: value` pairs, well-known names
followed by a number, and throughputs (odh/training/logs/curves.py says which)."""

from __future__ import annotations

import math
import re

MAX_NAME_LENGTH = 48

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_PAIR = re.compile(rf"^([A-Za-z_][\w .()/%-]*?)\s*[=:]\s*\[?({_NUMBER})\]?$")
_KNOWN = re.compile(rf"^(loss|val_loss|accuracy|acc|top1|top5|lr|learning rate|perplexity|ppl)"
                    rf"\s+({_NUMBER})$", re.I)
_RATE = re.compile(rf"({_NUMBER})\s*((?:img|images|samples|tokens|tok|sequences|seq|it)"
                   r"/(?:sec|s))(\s+per\s+(?:rank|gpu|device|worker))?\b", re.I)
_FIELDS = re.compile(r",\s*|\s*[|;\t]\s*|\s+-\s+")
_STRIP = " \t{}[]()'\":"
_ALIASES = {"learning rate": "learning_rate"}


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _name(raw: str) -> str | None:
    name = " ".join(raw.strip(" \t{}[]'\"").split()).lower()
    name = _ALIASES.get(name, name)
    if not name or len(name) > MAX_NAME_LENGTH:
        return None
    return name


def values(text: str) -> list[tuple[str, float]]:
    """The (name, value) pairs of one line's text (its position already cut out); the
    position words among them (`'epoch': 0.5`) too, for the caller to set aside."""
    found: list[tuple[str, float]] = []
    for raw in _FIELDS.split(text):
        segment = raw.replace("'", "").replace('"', "").strip(_STRIP + ",")
        if not segment:
            continue
        for m in _RATE.finditer(segment):
            value = _number(m.group(1))
            if value is not None:
                found.append((m.group(2).lower() + (" per " + m.group(3).split()[-1].lower()
                                                   if m.group(3) else ""), value))
        m = _PAIR.match(segment) or _KNOWN.match(segment)
        if m and (name := _name(m.group(1))) and (value := _number(m.group(2))) is not None:
            found.append((name, value))
    return found
