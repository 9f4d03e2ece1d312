"""The job page's "Automatic retry" card: what the job asked for, which retry it is
("Retry 1 of 2 of bert-a", linked to the first), and the retries the watcher decided or
started for its line (training/live/hub/retries.py), each with why and how it went. The
page is shown only to those who may get the job; the rows are of the same project and the
first job's uid, so they say nothing of other projects."""

from __future__ import annotations

from typing import Any

from odh.training.diagnosis.guide import page_title
from odh.training.manifests.retries import job_policy, lineage_of, lineage_text, wish_text
from odh.training.status.queries import JobDetail
from training.models import JobRetry


def retries_context(detail: JobDetail) -> dict[str, Any]:
    """The card's facts, or {} for a job that asked for no retry and is none."""
    job = detail.job
    lineage = lineage_of(job)
    wish = wish_text(job_policy(job))
    rows = list(JobRetry.objects.filter(
        original_uid=lineage.first_uid, namespace=detail.summary.namespace,
        kind=detail.summary.kind.kind)) if lineage.first_uid else []
    if not wish and not rows and lineage.attempt < 1:
        return {}
    return {"retry_card": {
        "wish": wish, "lineage": lineage_text(job), "first": lineage.first,
        "is_retry": lineage.attempt >= 1,
        "rows": [{"row": row, "why": page_title(row.scenario) if row.scenario else "",
                  "current": row.name == detail.summary.name} for row in rows]}}
