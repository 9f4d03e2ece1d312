"""Log lines as the API server sends them with `timestamps=true`: the timestamp split
off and normalised so that two compare as strings, and lines already seen dropped when a
log is read again from some way back (`Deduper`). The Logs tab, the live subscriptions and
the hub's shared streams all read lines this way."""

from __future__ import annotations

import re

Line = tuple[str, str]  # normalised RFC 3339 timestamp ("" if none), text

_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2}) ")


def normalise_timestamp(stamp: str) -> str:
    """RFC 3339 with exactly nine fraction digits and Z (the API server trims trailing
    zeros: "…:00.5Z"), so that two of them compare as strings. Offsets other than Z are
    kept as they are (container runtimes write UTC)."""
    m = _STAMP.match(stamp + " ")
    if not m:
        return stamp
    base, fraction, zone = m.groups()
    return f"{base}.{(fraction or '').ljust(9, '0')}{'Z' if zone in ('Z', '+00:00') else zone}"


def split_line(raw: str) -> Line:
    """A `timestamps=true` line as (normalised timestamp, text); ("", raw) without one."""
    raw = raw.rstrip("\r\n")
    m = _STAMP.match(raw)
    if not m:
        return "", raw
    return normalise_timestamp(raw[:m.end() - 1]), raw[m.end():]


class Deduper:
    """Drops lines already seen when a log is read again from some way back.

    Logs are in time order, so what matters is the newest timestamp seen and the lines
    seen at exactly that time (several lines can share one: a multiset, since a blank
    line may well come twice).
    """

    def __init__(self) -> None:
        self.last = ""
        self._at_last: dict[str, int] = {}
        self._replay: dict[str, int] = {}  # lines at `last` met in this reading

    def rewind(self) -> None:
        """The log is being read again from an earlier point."""
        self._replay = {}

    def accept(self, stamp: str, text: str) -> bool:
        if not stamp:
            return True  # no timestamp: nothing to compare with
        if stamp < self.last:
            return False
        if stamp > self.last:
            self.last, self._at_last, self._replay = stamp, {text: 1}, {text: 1}
            return True
        seen_again = self._replay.get(text, 0) + 1
        self._replay[text] = seen_again
        if seen_again <= self._at_last.get(text, 0):
            return False
        self._at_last[text] = seen_again
        return True
