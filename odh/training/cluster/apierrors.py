"""The API server's refusals as `odh.training.errors`, in plain words where the answer
names the object (a job, a pod, a project) or the quota that refused it."""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client as k8s

from odh.training import errors
from odh.training.i18n import _
from odh.training.kinds import KINDS

_NAMED = {k.plural: k.kind for k in KINDS.values()}


def _not_found(body: dict[str, Any], namespace: str) -> str:
    """A 404 about a named object in plain words ("There is no MPIJob named “x” in
    team-nlp."), where the API names it: a job, a pod or a project."""
    details = body.get("details") if isinstance(body.get("details"), dict) else {}
    name, plural = str(details.get("name") or ""), str(details.get("kind") or "")
    if not name:
        return ""
    values = {"name": name, "namespace": namespace}
    if plural in _NAMED:
        values["kind"] = _NAMED[plural]
        return (_("There is no %(kind)s named “%(name)s” in %(namespace)s.") if namespace
                else _("There is no %(kind)s named “%(name)s”.")) % values
    if plural == "pods":
        return _("There is no pod named “%(name)s” in %(namespace)s (any more).") % values
    if plural in ("namespaces", "projects"):
        return _("There is no project named “%(name)s” (or you may not see it).") % values
    return ""


def translate(e: k8s.ApiException, namespace: str = "") -> errors.ClusterError:
    body: dict[str, Any] = {}
    try:
        body = json.loads(e.body or "{}")
    except (TypeError, ValueError):
        body = {}
    if not isinstance(body, dict):
        body = {}
    message = str(body.get("message") or e.reason or "the cluster refused the request")
    reason = str(body.get("reason") or "")
    causes = list((body.get("details") or {}).get("causes") or [])
    status = int(e.status or 0)
    kw = {"status": status, "reason": reason, "causes": causes, "namespace": namespace}
    if status == 401:
        return errors.Unauthorized(message, **kw)
    if status == 403:
        if "exceeded quota" in message and "requested: count/" in message:
            # a quota on the number of objects: the cluster's words, for support, in details
            full = errors.CountQuotaExceeded(_(
                "The quota of %(project)s on the number of jobs is full, and finished jobs "
                "count: delete finished jobs you no longer need, or ask the project's "
                "administrator for a larger quota.") % {"project": namespace or "-"}, **kw)
            full.details = message
            return full
        if "exceeded quota" in message:
            return errors.QuotaExceeded(message, **kw)
        return errors.Forbidden(message, **kw)
    if status == 404:
        found = errors.NotFound(_not_found(body, namespace) or message, **kw)
        found.details = message  # the API's own words, for support
        return found
    if status == 409:
        return errors.Conflict(message, **kw)
    if status == 422:
        return errors.Invalid(message, **kw)
    if status in (0, 502, 503, 504):
        return errors.ClusterUnavailable(message, **kw)
    return errors.ClusterError(message, **kw)
