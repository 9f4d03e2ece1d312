"""How far a running job's training has got, read as one person: as the job reports it of
itself (a TrainJob's trainerStatus), else from its lead pod's log tail (the Launcher's,
a Master's or Chief's, else the first Worker's), as the Overview's progress bar reads it.
One read of a log tail at most; the parsing is `odh.training.logs.progress`'s."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from odh.training.i18n import _
from odh.training.logs.progress import (
    EPOCH,
    REPORTED,
    Progress,
    parse_progress,
    progress_source,
)

if TYPE_CHECKING:
    from odh.training.status.summary import JobSummary

LOG_LINES = 200  # of a running job's lead pod: enough lines for a rate between two points


def running_progress(client: Any, summary: JobSummary,
                     hints: tuple[int | None, int | None] = (None, None),
                     on_tail: Callable[[str, str], None] | None = None) -> Progress | None:
    """The progress of a Running job (its `summary`, read with `client`, a ClusterClient),
    or None: not running, no lead pod running, nothing the log says. `hints`: (epochs,
    steps) its command names (`hints_from_job`); `on_tail(pod, text)` is given the tail
    read. Raises the client's errors (odh.training.errors) from reading the log."""
    if summary.status != "Running":
        return None
    if summary.reported_progress is not None:
        return summary.reported_progress
    source = progress_source(summary.replicas)
    if source is None or getattr(source, "status", "") != "Running":
        return None
    text = str(client.read_log(summary.namespace, source.name, tail_lines=LOG_LINES,
                               timestamps=True))
    if on_tail is not None:
        on_tail(source.name, text)
    return parse_progress(text.splitlines(), total_hint=hints[0], step_hint=hints[1])


def describe(progress: Progress) -> str:
    """"Epoch 3 of 40", "Step 1,200 of 5,000", "Epoch 3" (total unknown), or the trainer's
    own report: the progress bar's label on the Overview, in list rows and in the SDK."""
    values = {"current": f"{progress.current:,}", "total": f"{progress.total or 0:,}"}
    if progress.unit == REPORTED:  # a percentage, shown beside the bar
        return _("Progress reported by the trainer")
    if progress.unit == EPOCH:
        if progress.total:
            return _("Epoch %(current)s of %(total)s") % values
        return _("Epoch %(current)s") % values
    if progress.total:
        return _("Step %(current)s of %(total)s") % values
    return _("Step %(current)s") % values
