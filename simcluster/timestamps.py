"""Timestamps as the API server writes them back: RFC 3339 in UTC with a `Z`.

metav1.Time is stored at second precision and MicroTime (`eventTime`) at microseconds,
whatever offset or precision the client sent (the Python client sends `+00:00`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from simcluster import errors

TIME_FIELDS = frozenset({
    "creationTimestamp", "deletionTimestamp", "lastTransitionTime", "lastProbeTime",
    "lastUpdateTime", "lastHeartbeatTime", "startedAt", "finishedAt", "startTime",
    "completionTime", "firstTimestamp", "lastTimestamp", "timeAdded", "lastScheduleTime",
    "lastReconcileTime",
})
MICRO_TIME_FIELDS = frozenset({"eventTime", "renewTime", "acquireTime"})


def _normalise(value: str, path: str, micro: bool) -> str:
    text = value.strip()
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise errors.bad_request(
            f'{path}: parsing time "{value}" as "2006-01-02T15:04:05Z07:00": cannot parse '
            f'"{value}" as RFC 3339') from None
    if moment.tzinfo is None:
        raise errors.bad_request(f'{path}: parsing time "{value}": missing time zone offset')
    moment = moment.astimezone(UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def normalise(obj: Any, path: str = "") -> Any:
    """Rewrite every known timestamp field in place (returns `obj`)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            here = f"{path}.{key}" if path else key
            if isinstance(value, str) and (key in TIME_FIELDS or key in MICRO_TIME_FIELDS):
                obj[key] = _normalise(value, here, key in MICRO_TIME_FIELDS)
            elif isinstance(value, (dict, list)):
                normalise(value, here)
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            normalise(item, f"{path}[{i}]")
    return obj


def seconds(ts: str | None) -> float | None:
    """A metav1.Time as written back (`2024-01-02T03:04:05Z`) in epoch seconds, or None."""
    if not ts:
        return None
    try:
        return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None
