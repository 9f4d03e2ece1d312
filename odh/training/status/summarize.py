"""The status summary the job list and detail pages show, from a job, its pods and events.

Works for MPIJob, the kubeflow.org/v1 PyTorchJob and TFJob (same condition types), and
TrainJob (conditions Suspended, Complete, Failed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from odh.training.durations import parse_timestamp
from odh.training.kinds import CREATED_BY_ANNOTATION, QUEUE_LABEL, JobKind, kind_for_object
from odh.training.logs.progress import reported_progress
from odh.training.paths import as_dict, as_list, get_path
from odh.training.status.lifecycle import lifecycle_step
from odh.training.status.pods import (
    ReplicaState,
    placeholder,
    pods_of_job,
    replica_from_pod,
)
from odh.training.status.summary import Condition, JobStatus, JobSummary

__all__ = ["Condition", "JobPod", "JobStatus", "JobSummary", "ReplicaState", "job_pods",
           "summarize"]

_TERMINAL = {"Succeeded": JobStatus.SUCCEEDED, "Complete": JobStatus.SUCCEEDED,
             "Failed": JobStatus.FAILED}
# Restarting (v1 kinds) means the operator is recreating pods of a job that is under way.
_ONGOING = (("Suspended", JobStatus.SUSPENDED), ("Running", JobStatus.RUNNING),
            ("Restarting", JobStatus.RUNNING))


def read_conditions(job: dict) -> list[Condition]:
    return [
        Condition(type=str(c.get("type", "")), status=str(c.get("status", "")),
                  reason=str(c.get("reason") or ""), message=str(c.get("message") or ""),
                  last_transition=parse_timestamp(c.get("lastTransitionTime")))
        for c in as_list(get_path(job, ["status", "conditions"])) if isinstance(c, dict)
    ]


def suspended_in_spec(job: dict) -> bool:
    """runPolicy.suspend (MPIJob and the kubeflow.org/v1 kinds) or spec.suspend (TrainJob)."""
    return get_path(job, ["spec", "runPolicy", "suspend"]) is True or \
        get_path(job, ["spec", "suspend"]) is True


def held_by_queue(job: dict) -> bool:
    """Kueue keeps a job that names a LocalQueue suspended until the queue admits it."""
    return bool(get_path(job, ["metadata", "labels", QUEUE_LABEL])) and suspended_in_spec(job)


def decide_status(kind: JobKind, job: dict,
                  conditions: list[Condition]) -> tuple[JobStatus, Condition | None]:
    """The status and the condition that decided it (None for Pending)."""
    decisive = None
    for condition in conditions:
        if condition.is_true and condition.type in _TERMINAL:
            decisive = condition
    if decisive is not None:
        return _TERMINAL[decisive.type], decisive
    for kind_of_condition, status in _ONGOING:
        for condition in reversed(conditions):
            if condition.type == kind_of_condition and condition.is_true:
                if status == JobStatus.SUSPENDED and get_path(
                        job, ["metadata", "labels", QUEUE_LABEL]):
                    # Kueue holds a queued job suspended until it is admitted: to its
                    # owner it waits to start (waiting.py: "Waiting in the Kueue queue")
                    return JobStatus.PENDING, None
                return status, condition
    if kind.running_without_condition(job):
        return JobStatus.RUNNING, None
    return JobStatus.PENDING, None


def _role_rank(kind: JobKind, role: str) -> int:
    return kind.roles.index(role) if role in kind.roles else len(kind.roles)


def collect_replicas(kind: JobKind, job: dict, pods: list[dict], active: bool,
                     layout: dict | None = None,
                     ) -> tuple[ReplicaState | None, list[ReplicaState], int]:
    """(launcher, the other pods in display order, earlier launcher attempts); `layout`:
    the object the kind's `layout_ref` names, as read."""
    name = str(get_path(job, ["metadata", "name"], ""))
    states = [replica_from_pod(kind, pod) for pod in pods_of_job(kind, job, pods)]
    launchers = sorted((s for s in states if s.role == "Launcher"),
                       key=lambda s: (s.created or datetime.min.replace(tzinfo=UTC), s.name))
    others = [s for s in states if s.role != "Launcher"]
    launcher = launchers[-1] if launchers else None
    if active:
        present = {(s.role, s.index) for s in others}
        for role, count, gpus in kind.expected_replicas(job, layout):
            if role == "Launcher":
                if launcher is None:  # shown before it exists
                    launcher = placeholder(kind.placeholder_name(name, role, None), role, None,
                                           gpus)
                continue
            for index in range(count):
                if (role, index) not in present:
                    others.append(placeholder(kind.placeholder_name(name, role, index),
                                              role, index, gpus, kind.word_for(role)))
    others.sort(key=lambda s: (_role_rank(kind, s.role), s.role,
                               -1 if s.index is None else s.index, s.name))
    return launcher, others, max(0, len(launchers) - 1)


@dataclass(frozen=True)
class JobPod:
    """A pod of a job that exists, named by its role: what the Logs tab offers and
    TrainingClient.logs reads."""

    name: str
    role: str
    index: int | None
    status: str
    containers: tuple[str, ...] = ()
    # "Launcher", "Worker 2", "Node 2" (ReplicaState.label); not what tells two pods apart
    label: str = field(default="", compare=False)

    @property
    def container(self) -> str:
        """The main container (the first), "" when the pod names none."""
        return self.containers[0] if self.containers else ""

    @property
    def tag(self) -> str:
        """The prefix of this pod's lines among several pods' logs: "launcher", "worker-2"."""
        role = (self.role or "pod").lower()
        return role if self.index is None else f"{role}-{self.index}"


def job_pods(kind: JobKind, job: dict, pods: list[dict]) -> list[JobPod]:
    """Which pod is the Launcher, which Worker N: the job's pods that exist, the Launcher
    first, then the others in the order the job's page lists them.

    A retried Launcher leaves earlier pods behind; the newest is the Launcher (as in the
    summary). Only `job`'s metadata (name, namespace) is read.
    """
    launcher, others, _retries = collect_replicas(kind, job, pods, active=False)
    by_name = {str(as_dict(p.get("metadata")).get("name", "")): p for p in pods}
    found = []
    for state in ([launcher] if launcher else []) + others:
        pod = by_name.get(state.name)
        if pod is None:
            continue
        containers = tuple(str(as_dict(c).get("name", "")) for c in
                           as_list(get_path(pod, ["spec", "containers"])))
        found.append(JobPod(state.name, state.role, state.index, state.status, containers,
                            state.label))
    return found


def summarize(job: dict, pods: list[dict], events: list[dict] | None = None,
              now: datetime | None = None, layout: dict | None = None) -> JobSummary:
    """Everything the list and detail pages say about a job's state. `layout`: the object
    the job's kind leaves its layout to (`JobKind.layout_ref`: a TrainJob's runtime), as
    read; without it the pods the spec alone asks for are expected."""
    kind = kind_for_object(job)
    if kind is None:
        raise ValueError(f"not a training job: {job.get('apiVersion')} {job.get('kind')}")
    meta = as_dict(job.get("metadata"))
    job_status = as_dict(job.get("status"))
    conditions = read_conditions(job)
    status, decisive = decide_status(kind, job, conditions)
    created = parse_timestamp(meta.get("creationTimestamp"))
    started = parse_timestamp(job_status.get("startTime"))
    finished = parse_timestamp(job_status.get("completionTime"))
    terminal = status in (JobStatus.SUCCEEDED, JobStatus.FAILED)
    if terminal and finished is None and decisive is not None:
        finished = decisive.last_transition  # an evicted MPIJob gets no completionTime
    launcher, workers, retries = collect_replicas(
        kind, job, pods, active=not terminal and status != JobStatus.SUSPENDED, layout=layout)
    expected = kind.expected_replicas(job, layout)
    current = [r for r in ([launcher] if launcher else []) + workers if r.exists]
    ready = sum(r.ready for r in current)
    total = sum(count for _, count, _ in expected)
    if any(role == "Launcher" for role, _, _ in expected):  # counted apart from the Workers
        workers_total = sum(count for role, count, _ in expected if role == "Worker")
        workers_ready = sum(r.ready for r in current if r.role == "Worker")
    else:
        workers_total, workers_ready = total, ready
    summary = JobSummary(
        kind=kind, name=str(meta.get("name", "")), namespace=str(meta.get("namespace", "")),
        uid=str(meta.get("uid", "")), status=status,
        reason=decisive.reason if decisive else "", message=decisive.message if decisive else "",
        since=decisive.last_transition if decisive else (
            started if status == JobStatus.RUNNING else created),
        created=created, started=started, finished=finished if terminal else None,
        lifecycle_step="", launcher=launcher, workers=workers, ready=ready, total=total,
        workers_ready=workers_ready, workers_total=workers_total,
        restarts=sum(r.restarts for r in current) + retries,
        gpus=sum(count * gpus for _, count, gpus in expected),
        created_by=str(as_dict(meta.get("annotations")).get(CREATED_BY_ANNOTATION, "")),
        conditions=conditions, observed_at=now or datetime.now(UTC),
        queue=str(as_dict(meta.get("labels")).get(QUEUE_LABEL, "")),
        held_by_queue=status == JobStatus.PENDING and held_by_queue(job), layout=layout,
        reported_progress=reported_progress(kind, job),
    )
    step, reason, message = lifecycle_step(summary, decisive, events)
    summary.lifecycle_step = step
    if status == JobStatus.PENDING:
        summary.reason, summary.message = reason, message
    return summary
