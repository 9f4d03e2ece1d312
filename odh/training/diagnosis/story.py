"""One story per job: the one line that says where a job is and why, the same in every
place that says it (the job list's row, the Status card, the administrator's waiting
table, `odh training describe` and `list -o wide`, the SDK's `status()`, the reason label
of /metrics).

The line comes from the diagnosis when it has something to say (a failure, a job that
waits for a reason, a pod in trouble): its headline, in our words. Else a job Kueue holds
is "Queued" (with its place in the queue where the caller could read it), and any other
job says what it is doing (the lifecycle step, `odh.training.status.lifecycle`). The cluster's own
words (reasons, messages) are the diagnosis's evidence, never the line.

    told = tell(summary, diagnosis, queued="Queued: 2 of 5 in gpu-queue")
    told.line, told.severity, told.scenario, told.title
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from odh.training.diagnosis.common import short_of_gpus
from odh.training.diagnosis.guide import page_title
from odh.training.i18n import LazyText, gettext_lazy
from odh.training.status.summary import JobStatus, JobSummary

if TYPE_CHECKING:
    from odh.training.diagnosis import Diagnosis

__all__ = ["Story", "tell"]

# the scenarios of a job doing what it should (no diagnosis to tell)
QUEUED = "queued"
SUSPENDED = "suspended"
STARTING = "starting"
RUNNING = "running"
SUCCEEDED = "succeeded"
FAILED = "failed"

_PLAIN = {JobStatus.PENDING: STARTING, JobStatus.RUNNING: RUNNING,
          JobStatus.SUCCEEDED: SUCCEEDED, JobStatus.FAILED: FAILED,
          JobStatus.SUSPENDED: SUSPENDED}


@dataclass(frozen=True)
class Story:
    """`line`: what every place says; `severity`: the diagnosis's ("error", "warning",
    "info") or "" for a job doing what it should; `scenario`: the diagnosis's scenario
    (its troubleshooting page), else one of queued, suspended, starting, running,
    succeeded, failed; `title`: a few words naming the scenario (the administrator's "why
    it waits" column)."""

    line: str | LazyText
    severity: str
    scenario: str
    title: str | LazyText

    @property
    def is_problem(self) -> bool:
        return self.severity in ("error", "warning")

    def __str__(self) -> str:
        return str(self.line)


_TITLES = {
    QUEUED: gettext_lazy("Queued"),
    SUSPENDED: gettext_lazy("Suspended"),
    STARTING: gettext_lazy("Starting"),
    RUNNING: gettext_lazy("Running"),
    SUCCEEDED: gettext_lazy("Succeeded"),
    FAILED: gettext_lazy("Failed"),
}


def _title(scenario: str, summary: JobSummary) -> str | LazyText:
    if scenario == "waiting-for-capacity":
        if short_of_gpus(summary.replicas):
            return gettext_lazy("Not enough GPUs")
        return gettext_lazy("Not enough CPU or memory")
    if scenario == "quota":
        return gettext_lazy("Quota exceeded")
    if scenario in _TITLES:
        return _TITLES[scenario]
    return page_title(scenario)


def tell(summary: JobSummary, diagnosis: Diagnosis | None = None,
         queued: str | LazyText | None = None) -> Story:
    """The job's one line. `diagnosis`: what the caller diagnosed (None: nothing to say, or
    not asked); `queued`: where a job Kueue holds stands in its queue, when the caller
    could read it ("Queued: 2 of 5 in gpu-queue")."""
    if diagnosis is not None and diagnosis.is_problem:
        scenario = diagnosis.scenario
        return Story(diagnosis.headline, str(diagnosis.severity), scenario,
                     _title(scenario, summary))
    if summary.held_by_queue:
        line = queued or gettext_lazy("Queued in %(queue)s", queue=summary.queue)
        return Story(line, "", QUEUED, _TITLES[QUEUED])
    scenario = _PLAIN[summary.status]
    return Story(summary.lifecycle_step, "", scenario, _title(scenario, summary))

