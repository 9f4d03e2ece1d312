"""Durations in the product's vocabulary ("2h 15m 43s") and Kubernetes timestamps."""

from __future__ import annotations

import re
from datetime import UTC, datetime

# RFC 3339 as the API server writes it (seconds always present), with any fraction length.
_RFC3339 = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[Tt ](?P<time>\d{2}:\d{2}:\d{2})(?:\.(?P<fraction>\d+))?"
    r"(?P<zone>[Zz]|[+-]\d{2}:\d{2})"
)


def format_duration(seconds: float) -> str:
    """"2h 15m 43s" under a day, "3d 4h 12m" from a day on; "0s" for nothing or negative."""
    total = int(seconds) if seconds > 0 else 0
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h {minutes}m"
    units = [(hours, "h"), (minutes, "m"), (secs, "s")]
    while len(units) > 1 and units[0][0] == 0:
        units.pop(0)
    return " ".join(f"{amount}{unit}" for amount, unit in units)


def rough_duration(seconds: float) -> str:
    """An estimate's duration, no more precise than it is: "4h 40m" (to 5 minutes from an
    hour on), "25m" (to the minute), "1d 4h" from a day on; "1m" at least."""
    total = max(60, int(seconds) if seconds > 0 else 0)
    if total >= 86400:
        hours = round(total / 3600)
        return f"{hours // 24}d {hours % 24}h"
    if total >= 3600:
        minutes = round(total / 300) * 5
        hours, minutes = divmod(minutes, 60)
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    return f"{round(total / 60)}m"


def parse_timestamp(value: str | datetime | None) -> datetime | None:
    """An aware UTC datetime from an RFC 3339 string; None when absent or unreadable."""
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    if not value or not isinstance(value, str):
        return None
    match = _RFC3339.fullmatch(value.strip())
    if not match:
        return None
    fraction = (match.group("fraction") or "")[:6].ljust(6, "0")
    zone = match.group("zone")
    zone = "+00:00" if zone in ("Z", "z") else zone
    try:
        parsed = datetime.fromisoformat(
            f"{match.group('date')}T{match.group('time')}.{fraction}{zone}")
    except ValueError:
        return None
    return parsed.astimezone(UTC)


def format_timestamp(value: datetime) -> str:
    """The RFC 3339 form the API server writes ("2024-05-01T10:00:00Z")."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def age(ts: str | datetime | None, now: datetime | None = None) -> str:
    """How long ago ts was, as a duration; "" when ts is unknown."""
    moment = parse_timestamp(ts)
    if moment is None:
        return ""
    now = now or datetime.now(UTC)
    return format_duration((now - moment).total_seconds())
