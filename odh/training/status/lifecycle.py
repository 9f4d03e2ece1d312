"""The lifecycle step: one short sentence, in the product's words, of what a job is doing.

For MPIJobs the words are Job, Launcher and Worker; the sentences never say master,
replica or node for them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from odh.training.cluster.events import (
    event_time,
    events_for,
    involved,
    message,
    quota_detail,
    scheduling_reasons,
)
from odh.training.durations import format_duration
from odh.training.i18n import LazyText, gettext_lazy
from odh.training.status.pods import CREATING_REASONS, PULL_REASONS, ReplicaState
from odh.training.status.summary import Condition, JobStatus, JobSummary

_EPOCH = datetime.min.replace(tzinfo=UTC)
# every step is made once (by the watch hub, for every viewer) and translated when shown


def _workers_first(summary: JobSummary) -> list[ReplicaState]:
    """Existing pods, Workers before the Launcher: a Worker's trouble is usually the cause."""
    launcher = [summary.launcher] if summary.launcher else []
    return [r for r in summary.workers + launcher if r.exists]


def _describe(problems: list[ReplicaState]) -> LazyText:
    first = problems[0]
    text = gettext_lazy("%(pod)s %(reason)s", pod=first.label, reason=first.reason or first.status)
    if len(problems) == 1:
        return text
    return gettext_lazy("%(first)s and %(more)d more", first=text, more=len(problems) - 1)


def _cause(replica: ReplicaState) -> LazyText:
    values = {"pod": replica.label, "reason": replica.reason or replica.status,
              "code": replica.exit_code}
    if replica.reason == "OOMKilled":
        return gettext_lazy("%(pod)s was OOMKilled", **values)
    if replica.reason == "Evicted":
        return gettext_lazy("%(pod)s was evicted", **values)
    if replica.reason in PULL_REASONS:
        return gettext_lazy("%(pod)s could not pull its image (%(reason)s)", **values)
    if replica.reason == "Unschedulable":
        return gettext_lazy("%(pod)s could not be scheduled", **values)
    if replica.exit_code:
        return gettext_lazy("%(pod)s exited with code %(code)s", **values)
    return gettext_lazy("%(pod)s %(reason)s", **values)


def failure_replica(summary: JobSummary) -> ReplicaState | None:
    """The pod that best explains a failure: a Worker's failure is the cause of the
    Launcher's (mpirun exits when a rank dies), so Workers are looked at first, and an
    out-of-memory kill or an eviction before any other failure."""
    ordered = _workers_first(summary)
    tests = (lambda r: r.reason == "OOMKilled", lambda r: r.reason == "Evicted",
             lambda r: r.status == "Failed" or r.problem)
    for test in tests:
        for replica in ordered:
            if test(replica):
                return replica
    return None


def failure_cause(summary: JobSummary) -> LazyText | None:
    """The pod that best explains a failure, in words ("Worker 2 was OOMKilled")."""
    replica = failure_replica(summary)
    return _cause(replica) if replica is not None else None


def _latest(events: list[dict], reason: str) -> dict | None:
    chosen = [e for e in events if e.get("reason") == reason]
    return chosen[-1] if chosen else None


def _pulling(creating: list[ReplicaState], pod_events: list[dict] | None) -> bool:
    """Whether a creating pod is still pulling its image; assumed when events are unknown."""
    if pod_events is None:
        return True
    for replica in creating:
        last = None
        for event in pod_events:
            if involved(event).get("name") == replica.name and \
                    event.get("reason") in ("Pulling", "Pulled"):
                last = event.get("reason")
        if last == "Pulling":
            return True
    return False


def _waiting_for_resources(summary: JobSummary, unschedulable: list[ReplicaState],
                           pod_events: list[dict]) -> tuple[LazyText, str, str]:
    first = unschedulable[0]
    text = first.message
    if not text:
        scheduling = [e for e in pod_events if e.get("reason") == "FailedScheduling"
                      and involved(e).get("name") == first.name]
        text = message(scheduling[-1]) if scheduling else ""
    why = scheduling_reasons(text) if text else ""
    if not summary.kind.runs_mpirun:
        scheduled = sum(r.scheduled for r in summary.replicas if r.exists)
        step = gettext_lazy("Waiting for resources: %(scheduled)d/%(total)d pods scheduled",
                 scheduled=scheduled, total=summary.total)
    elif any(r.role == "Worker" for r in unschedulable):
        scheduled = sum(r.scheduled for r in summary.workers if r.exists)
        step = gettext_lazy("Waiting for resources: %(scheduled)d/%(total)d Workers scheduled",
                 scheduled=scheduled, total=summary.workers_total)
    else:
        step = gettext_lazy("Waiting for resources: Launcher not scheduled")
    if why:
        step = gettext_lazy("%(step)s (%(why)s)", step=step, why=why)
    return step, "Unschedulable", text


def _refused(summary: JobSummary, job_events: list[dict]) -> tuple[LazyText, str, str] | None:
    """A pod the operator could not create: refused by the quota, a LimitRange or another
    admission check. The MPI Operator (v0.8.2) writes no condition then, only the event
    ("worker pod created failed: ... exceeded quota"), so this comes before "waiting for
    the operator"."""
    if all(r.exists for r in summary.replicas):
        return None
    quota = [e for e in job_events if quota_detail(message(e)) is not None]
    if quota:
        text = message(quota[-1])
        detail = quota_detail(text) or ""
        if "exceeded quota" in text:
            step = gettext_lazy("Quota exceeded: %(detail)s", detail=detail)
        else:
            step = gettext_lazy("Refused by quota: %(detail)s", detail=detail)
        return step, "ExceededQuota", text
    forbidden = [e for e in job_events if "is forbidden" in message(e)]
    if forbidden:
        text = message(forbidden[-1])
        return (gettext_lazy("Pods refused when created: %(detail)s",
                  detail=text.split("is forbidden:", 1)[-1].strip()), "Forbidden", text)
    return None


def _pending(summary: JobSummary, job_events: list[dict],
             pod_events: list[dict] | None) -> tuple[LazyText, str, str]:
    last_change = max((c.last_transition or _EPOCH for c in summary.conditions),
                      default=_EPOCH)
    invalid = _latest(job_events, "ValidationError")
    if invalid and (event_time(invalid) or _EPOCH) >= last_change:
        text = message(invalid)
        return (gettext_lazy("Invalid job: %(errors)s",
                  errors=text.removeprefix("Found validation errors: ")), "ValidationError", text)
    if summary.held_by_queue:
        # Kueue keeps the job suspended until its ClusterQueue admits it: no pod exists
        return gettext_lazy("Queued in %(queue)s", queue=summary.queue), "Queued", ""
    refused = _refused(summary, job_events)
    if refused is not None:
        return refused
    replicas = summary.replicas
    waiting = summary.kind.waiting_for_controller
    if not summary.conditions and waiting is not None:
        return waiting, "", ""
    unschedulable = [r for r in replicas if r.exists and r.reason == "Unschedulable"]
    if unschedulable:
        return _waiting_for_resources(summary, unschedulable, pod_events or [])
    problems = [r for r in _workers_first(summary) if r.problem]
    if problems:
        first = problems[0]
        if first.reason in PULL_REASONS:
            return (gettext_lazy("Cannot pull image: %(pod)s %(reason)s", pod=first.label,
                      reason=first.reason), first.reason, first.message)
        return (gettext_lazy("Starting with problems: %(problems)s", problems=_describe(problems)),
                first.reason, first.message)
    counts = {"ready": summary.ready, "total": summary.total}
    creating = [r for r in replicas if r.reason in CREATING_REASONS]
    if summary.ready == 0 and creating:
        if _pulling(creating, pod_events):
            return gettext_lazy("Pulling images (%(ready)d/%(total)d pods ready)", **counts), "", ""
        return (gettext_lazy("Creating containers (%(ready)d/%(total)d pods ready)", **counts),
                "", "")
    if not summary.kind.runs_mpirun:
        return gettext_lazy("Starting (%(ready)d/%(total)d pods ready)", **counts), "", ""
    if summary.workers_ready < summary.workers_total:
        return (gettext_lazy("Starting Workers (%(ready)d/%(total)d ready)",
                  ready=summary.workers_ready, total=summary.workers_total), "", "")
    if summary.launcher is None or not summary.launcher.ready:
        return gettext_lazy("Starting launcher (%(ready)d/%(total)d pods ready)", **counts), "", ""
    return gettext_lazy("Starting training (%(ready)d/%(total)d pods ready)", **counts), "", ""


def _running(summary: JobSummary, decisive: Condition | None) -> LazyText:
    if decisive is not None and decisive.type == "Restarting":
        return gettext_lazy("Restarting (%(ready)d/%(total)d pods ready)", ready=summary.ready,
                 total=summary.total)
    problems = [r for r in _workers_first(summary) if r.problem]
    if problems:
        return gettext_lazy("Running with problems: %(problems)s", problems=_describe(problems))
    if summary.kind.runs_mpirun:
        running = sum(r.status == "Running" for r in summary.workers if r.role == "Worker")
        return gettext_lazy("Training (%(running)d/%(total)d Workers running)", running=running,
                 total=summary.workers_total)
    running = sum(r.status == "Running" for r in summary.replicas)
    return gettext_lazy("Training (%(running)d/%(total)d pods running)", running=running,
             total=summary.total)


def lifecycle_step(summary: JobSummary, decisive: Condition | None,
                   events: list[dict] | None) -> tuple[LazyText, str, str]:
    """(step, reason, message); reason and message explain a Pending job. The step is
    translated when shown (LazyText), so the hub's summaries serve every language."""
    if summary.status == JobStatus.SUCCEEDED:
        start = summary.started or summary.created
        if start and summary.finished:
            took = format_duration((summary.finished - start).total_seconds())
            return gettext_lazy("Completed in %(duration)s", duration=took), "", ""
        return gettext_lazy("Completed"), "", ""
    if summary.status == JobStatus.FAILED:
        cause = failure_cause(summary) or summary.reason.rstrip("/")
        if cause:
            return gettext_lazy("Failed: %(cause)s", cause=cause), "", ""
        return gettext_lazy("Failed"), "", ""
    if summary.status == JobStatus.SUSPENDED:
        return gettext_lazy("Suspended"), "", ""
    if summary.status == JobStatus.RUNNING:
        return _running(summary, decisive), "", ""
    job_events = events_for(events or [], summary.kind.kind, {summary.name}, summary.namespace)
    pod_events = None if events is None else events_for(
        events, "Pod", {r.name for r in summary.replicas}, summary.namespace)
    return _pending(summary, job_events, pod_events)
