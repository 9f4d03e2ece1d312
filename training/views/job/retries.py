"""The "Automatic retry" card of the job page and of a finished job's history record: what
the job asked for, which retry it is ("Retry 1 of 2 of bert-a", linked to the first), and
the retries the watcher decided or started for its line (training/live/hub/keepers/retries.py),
each with why and how it went. Both pages are shown only to those who may get the job;
the rows are of the same project, kind and first job's uid, so they say nothing else."""

from __future__ import annotations

from typing import Any

from odh.training.diagnosis.guide import page_title
from odh.training.kinds import JobKind
from odh.training.manifests.retries import job_policy, lineage_of, lineage_text, wish_text
from odh.training.paths import get_path
from training.models import JobRetry


def retries_context(job: dict, namespace: str, kind: JobKind) -> dict[str, Any]:
    """The card's facts for a job (its object, or its history record's manifest with the
    record's uid put back), or {} for a job that asked for no retry and is none."""
    lineage = lineage_of(job)
    wish = wish_text(job_policy(job))
    rows = list(JobRetry.objects.filter(
        original_uid=lineage.first_uid, namespace=namespace,
        kind=kind.kind)) if lineage.first_uid else []
    if not wish and not rows and lineage.attempt < 1:
        return {}
    name = str(get_path(job, ["metadata", "name"], "") or "")
    return {"retry_card": {
        "wish": wish, "lineage": lineage_text(job), "first": lineage.first,
        "is_retry": lineage.attempt >= 1, "namespace": namespace, "slug": kind.slug,
        "rows": [{"row": row, "why": page_title(row.scenario) if row.scenario else "",
                  "current": row.name == name} for row in rows]}}
