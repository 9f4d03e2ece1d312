"""Suspend and resume, the same for the dashboard, the SDK and the CLI: a job that has
finished is not changed (Conflict, in plain words: nothing was suspended), and a job that is
already so is left as it is and said to be (`changed` is False), so that no place reports
a change that did not happen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.i18n import _
from odh.training.kinds import JobKind
from odh.training.status.summarize import summarize, suspended_in_spec

Obj = dict[str, Any]
FINISHED = "JobFinished"  # the refusal's reason: ours, not the cluster's


@dataclass(frozen=True)
class Suspension:
    job: Obj
    changed: bool  # False: it already was so, nothing was sent


def set_suspended(cluster: ClusterClient, kind: JobKind, namespace: str, name: str,
                  suspend: bool) -> Suspension:
    job = cluster.get_job(kind, namespace, name)
    job.setdefault("apiVersion", kind.api_version)
    job.setdefault("kind", kind.kind)
    summary = summarize(job, [], None)
    if summary.is_finished:
        values = {"name": name, "status": str(summary.status)}
        raise errors.Conflict(
            (_("%(name)s has finished (%(status)s): there is nothing to suspend.") if suspend
             else _("%(name)s has finished (%(status)s): there is nothing to resume."))
            % values, status=409, reason=FINISHED, namespace=namespace)
    if suspend == suspended_in_spec(job):
        return Suspension(job, False)
    return Suspension(cluster.set_suspended(kind, namespace, name, suspend), True)
