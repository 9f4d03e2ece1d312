"""What a person dismissed of a job's diagnosis, kept in their session."""

from __future__ import annotations

from django.http import HttpRequest

DISMISSED_KEY = "diagnosis_dismissed"


def dismissed(request: HttpRequest, uid: str) -> frozenset[str]:
    return dismissed_all(request).get(uid, frozenset())


def dismissed_all(request: HttpRequest) -> dict[str, frozenset[str]]:
    found = request.session.get(DISMISSED_KEY) or {}
    if not isinstance(found, dict):
        return {}
    return {str(uid): frozenset(str(s) for s in scenarios)
            for uid, scenarios in found.items() if isinstance(scenarios, list)}


def dismiss(request: HttpRequest, uid: str, scenario: str) -> None:
    found = request.session.get(DISMISSED_KEY)
    found = dict(found) if isinstance(found, dict) else {}
    found[uid] = sorted(set(found.get(uid, [])) | {scenario})
    # a session keeps the last hundred jobs' dismissals, not every job ever seen
    if len(found) > 100:
        found = dict(list(found.items())[-100:])
    request.session[DISMISSED_KEY] = found
