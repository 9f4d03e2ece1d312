"""Reading Kubernetes events (core/v1 and events.k8s.io/v1 shapes) and their messages."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from odh.training.durations import parse_timestamp
from odh.training.paths import as_dict

_SCHEDULING = re.compile(r"\d+/\d+ nodes are available: (?P<reasons>.*?)\.?(?: preemption:.*)?$",
                         re.DOTALL)


def involved(event: dict) -> dict:
    return as_dict(event.get("involvedObject") or event.get("regarding"))


def message(event: dict) -> str:
    return str(event.get("message") or event.get("note") or "")


def event_time(event: dict) -> datetime | None:
    series = as_dict(event.get("series"))
    for value in (series.get("lastObservedTime"), event.get("lastTimestamp"),
                  event.get("eventTime"), event.get("firstTimestamp"),
                  as_dict(event.get("metadata")).get("creationTimestamp")):
        moment = parse_timestamp(value)
        if moment is not None:
            return moment
    return None


def events_for(events: list[dict], kind: str, names: set[str], namespace: str = "") -> list[dict]:
    """Events about objects of this kind and these names (in this namespace), oldest first."""
    chosen = []
    for event in events:
        about = involved(event)
        if about.get("kind") != kind or about.get("name") not in names:
            continue
        if namespace and about.get("namespace") not in (None, "", namespace):
            continue
        chosen.append(event)
    return sorted(chosen, key=lambda e: event_time(e) or datetime.min.replace(tzinfo=UTC))


def scheduling_reasons(text: str) -> str:
    """"Insufficient nvidia.com/gpu" from the scheduler's "0/6 nodes are available: 2
    Insufficient nvidia.com/gpu. preemption: ..."; the message itself when it is not one."""
    match = _SCHEDULING.match(text.strip())
    if not match:
        return text.strip()
    reasons: list[str] = []
    for part in match.group("reasons").split(", "):
        reason = re.sub(r"^\d+ ", "", part.strip())
        if reason and reason not in reasons:
            reasons.append(reason)
    return ", ".join(reasons)


def quota_detail(text: str) -> str | None:
    """What a quota refusal says after "exceeded quota:", or None if it is not one."""
    for marker in ("exceeded quota: ", "failed quota: "):
        at = text.find(marker)
        if at >= 0:
            return text[at + len(marker):].strip()
    return None
