"""Advice from history in the wizard: the project's job history records read as past runs
(odh/training/advice/), for the person making the job.

Whose history: only the records of the draft's project as it is now (its uid, from the
person's own list of projects), and only when the cluster lets the person `get` jobs of
that kind there (a SelfSubjectAccessReview with their token), as a history record's own
page asks; otherwise no advice, and nothing said of the project's runs. The newest
`RECORDS` records of the kind are read; which of them are similar, and what makes advice,
is `odh.training.advice`'s to say.
"""

from __future__ import annotations

import logging

from django.http import HttpRequest

from odh.training import errors
from odh.training.advice.advise import Advice, advise
from odh.training.advice.runs import PastRun, past_run
from odh.training.cluster.access import Access
from odh.training.cluster.client import ClusterClient
from odh.training.spec import JobSpec
from training.models import JobHistory
from training.permissions import person_may
from training.projects import project_uid

log = logging.getLogger("training.wizard")

RECORDS = 500


def runs_of(records) -> list[PastRun]:
    """History records as past runs (those of a kind the dashboard reads)."""
    runs = []
    for record in records:
        run = past_run({
            "name": record.name, "spec": record.spec, "outcome": record.outcome,
            "cause_reason": record.cause_reason, "duration_seconds": record.duration_seconds,
            "peak_memory_bytes": record.peak_memory_bytes,
            "gpu_utilization": record.gpu_utilization, "finished": record.finished})
        if run is not None:
            runs.append(run)
    return runs


def advice_for_user(request: HttpRequest, client: ClusterClient, spec: JobSpec
                    ) -> Advice | None:
    """The advice for the draft's job from its project's history, if this person may read
    that history (see the module's docstring); None otherwise, or with no similar run."""
    namespace, kind = spec.namespace, spec.kind
    if not namespace or not spec.image.strip():
        return None
    try:
        if not person_may(request, client, namespace, Access("get", kind.plural, kind.group)):
            return None
        uid = project_uid(request, client, namespace)
    except errors.Unauthorized:
        raise
    except errors.ClusterError as e:  # cannot tell now: no advice rather than a guess
        log.info("advice for %s in %s: %s", request.user, namespace, e.message)
        return None
    records = JobHistory.of_project(namespace, uid).filter(kind=kind.kind)[:RECORDS]
    return advise(runs_of(records), spec)
