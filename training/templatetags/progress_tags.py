"""The training progress bar (odh.training.logs.progress) on the Overview and in list rows."""

from __future__ import annotations

from datetime import UTC, datetime

from django import template
from django.utils.translation import gettext as _

from odh.training.durations import format_duration
from odh.training.logs.running import describe

register = template.Library()


@register.filter
def progress_of(progress_by_job, job) -> object | None:
    """`progress|progress_of:job`: this job's Progress from a {"ns/kind/name": ...} map."""
    if not progress_by_job:
        return None
    return progress_by_job.get(f"{job.namespace}/{job.kind.slug}/{job.name}")


@register.inclusion_tag("training/partials/progress_bar.html")
def progress_bar(progress, dom_id: str, now: datetime | None = None,
                 compact: bool = False) -> dict:
    """A PatternFly progress bar (role="progressbar", aria-value*) with the time left."""
    if progress is None:
        return {"progress": None}
    now = now or datetime.now(UTC)
    left = progress.eta_at(now)
    label = describe(progress)
    eta = format_duration(left) if left is not None else ""
    if progress.fraction is not None and progress.fraction >= 1.0:
        eta_text = _("finishing")
    elif eta:
        eta_text = _("about %(duration)s left") % {"duration": eta}
    else:
        eta_text = ""
    percent = progress.percent
    value_text = f"{label}, {eta_text}" if eta_text else label
    if percent is not None:
        value_text = f"{value_text} ({percent}%)"
    return {"progress": progress, "dom_id": dom_id, "label": label, "eta_text": eta_text,
            "percent": percent, "value_text": value_text, "compact": compact}


@register.inclusion_tag("training/partials/progress_bar.html")
def row_progress(progress_by_job, job, now: datetime | None = None) -> dict:
    """The compact bar in a job list row (nothing when the job shows no progress)."""
    progress = progress_of(progress_by_job, job)
    dom_id = f"job-progress-{job.namespace}-{job.kind.slug}-{job.name}"
    return progress_bar(progress, dom_id, now, compact=True)
