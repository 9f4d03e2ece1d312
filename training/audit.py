"""Recording every mutation made through the dashboard: a database row and a JSON log line
(and, for creates, the submissions counter of /metrics)."""

from __future__ import annotations

import ipaddress
import json
import logging

from django.conf import settings
from django.http import HttpRequest

from training.accounts import session
from training.models import AuditEvent
from training.monitoring import exposition as monitoring

log = logging.getLogger("training.audit")


def _valid_ip(text: str | None) -> str | None:
    try:
        return str(ipaddress.ip_address((text or "").strip()))
    except ValueError:
        return None


def client_ip(request: HttpRequest) -> str | None:
    """The address the request came from, as far as it can be trusted.

    Behind the OpenShift router (TRUST_X_FORWARDED_FOR) the router appends the address it saw
    to X-Forwarded-For, so the last hop is the one to believe; earlier hops are whatever the
    client claimed. Otherwise X-Forwarded-For is the client's word and is ignored.
    """
    if settings.TRUST_X_FORWARDED_FOR:
        hops = [h for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
        if hops and _valid_ip(hops[-1]):
            return _valid_ip(hops[-1])
    return _valid_ip(request.META.get("REMOTE_ADDR"))


def record(request: HttpRequest, verb: str, kind: str, project: str, name: str,
           outcome: str, detail: str = "") -> AuditEvent:
    event = AuditEvent.objects.create(
        username=request.user.get_username() if request.user.is_authenticated else "",
        groups=session.groups(request),
        project=project,
        kind=kind,
        name=name,
        verb=verb,
        outcome=outcome,
        detail=detail[:4000],
        source_ip=client_ip(request),
        user_agent=request.META.get("HTTP_USER_AGENT", "")[:512],
        request_id=getattr(request, "request_id", ""),
    )
    monitoring.count_submission(verb, project, kind, outcome, detail)
    log.info(json.dumps({
        "audit": True, "time": event.created.isoformat(), "user": event.username,
        "groups": event.groups, "project": project, "kind": kind, "name": name, "verb": verb,
        "outcome": outcome, "detail": event.detail, "source_ip": event.source_ip,
        "user_agent": event.user_agent, "request_id": event.request_id,
    }, sort_keys=True))
    return event
