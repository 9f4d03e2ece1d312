"""What one pod of a training job is doing, read from the pod as the kubelet reports it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from odh.training.durations import parse_timestamp
from odh.training.kinds import pod_job_labels
from odh.training.kinds.base import (  # noqa: F401 - the labels' names, known from here
    COMPLETION_INDEX_LABEL,
    JOB_NAME_LABEL,
    JOB_ROLE_LABEL,
    JOBSET_NAME_LABEL,
    OPERATOR_NAME_LABEL,
    REPLICA_INDEX_LABEL,
    REPLICA_TYPE_LABEL,
    REPLICATED_JOB_LABEL,
    JobKind,
    pod_gpus,
    pod_label,
    role_name,
)
from odh.training.paths import as_dict, as_list

NOT_CREATED = "Not created"
PULL_REASONS = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName",
                          "ErrImageNeverPull"})
CREATING_REASONS = frozenset({"ContainerCreating", "PodInitializing"})
PROBLEM_REASONS = PULL_REASONS | frozenset({
    "OOMKilled", "Error", "CrashLoopBackOff", "Unschedulable", "Evicted", "ContainerCannotRun",
    "CreateContainerConfigError", "CreateContainerError", "RunContainerError", "StartError",
    "DeadlineExceeded", "NodeLost", "UnexpectedAdmissionError", "NodeAffinity",
})
@dataclass
class ReplicaState:
    name: str
    role: str
    index: int | None = None
    status: str = "Pending"
    reason: str = ""
    message: str = ""
    node: str = ""
    gpus: int = 0
    restarts: int = 0
    ready: bool = False
    exit_code: int | None = None
    started: datetime | None = None
    finished: datetime | None = None
    created: datetime | None = None
    # what the job's kind calls the role, where it has a word of its own ("Node")
    word: str = ""

    @property
    def label(self) -> str:
        """"Launcher", "Worker 2", a TrainJob's "Node 2": how the product names this pod in
        sentences, in the reader's language."""
        return pod_label(self.word or self.role, self.index)

    @property
    def exists(self) -> bool:
        return self.reason != NOT_CREATED

    @property
    def scheduled(self) -> bool:
        return bool(self.node)

    @property
    def problem(self) -> bool:
        """Failed, crash-looping, unable to pull its image, unschedulable, evicted..."""
        if self.status in ("Failed", "Unknown"):
            return True
        return self.reason.removeprefix("Init:") in PROBLEM_REASONS


def role_and_index(kind: JobKind, pod: dict) -> tuple[str, int | None]:
    labels = as_dict(as_dict(pod.get("metadata")).get("labels"))
    role = kind.pod_role(labels)
    raw_index = labels.get(REPLICA_INDEX_LABEL, labels.get(COMPLETION_INDEX_LABEL))
    index = int(raw_index) if str(raw_index).isdecimal() else None
    if role == "Launcher":
        index = None
    return role, index


def _condition(status: dict, kind: str) -> dict:
    for condition in as_list(status.get("conditions")):
        if isinstance(condition, dict) and condition.get("type") == kind:
            return condition
    return {}


def _container_verdict(statuses: list, init: bool) -> tuple[int, str, str, int | None]:
    """(severity, reason, message, exit code) of the most telling container state."""
    best: tuple[int, str, str, int | None] = (-1, "", "", None)
    prefix = "Init:" if init else ""
    for cs in statuses:
        if not isinstance(cs, dict):
            continue
        state = as_dict(cs.get("state"))
        waiting = as_dict(state.get("waiting"))
        terminated = as_dict(state.get("terminated"))
        last = as_dict(as_dict(cs.get("lastState")).get("terminated"))
        candidate: tuple[int, str, str, int | None] = (-1, "", "", None)
        if waiting:
            reason = str(waiting.get("reason", ""))
            severity = 1 if reason in CREATING_REASONS or not reason else 3
            candidate = (severity, prefix + reason if severity == 3 else reason,
                         str(waiting.get("message", "")), last.get("exitCode"))
        elif terminated:
            code = terminated.get("exitCode")
            if code == 0:
                if not init:
                    candidate = (0, str(terminated.get("reason") or "Completed"), "", 0)
            else:
                reason = str(terminated.get("reason") or "Error")
                candidate = (3, prefix + reason, str(terminated.get("message", "")), code)
        if candidate[0] > best[0]:
            best = candidate
    return best


def _main_container_times(statuses: list) -> tuple[datetime | None, datetime | None]:
    for cs in statuses:
        state = as_dict(as_dict(cs).get("state"))
        for key in ("running", "terminated"):
            block = as_dict(state.get(key))
            if block:
                return (parse_timestamp(block.get("startedAt")),
                        parse_timestamp(block.get("finishedAt")))
    return None, None


def replica_from_pod(kind: JobKind, pod: dict) -> ReplicaState:
    meta = as_dict(pod.get("metadata"))
    spec = as_dict(pod.get("spec"))
    status = as_dict(pod.get("status"))
    role, index = role_and_index(kind, pod)
    phase = str(status.get("phase") or "Pending")
    if phase not in ("Pending", "Running", "Succeeded", "Failed"):
        phase = "Unknown"
    shown = "Terminating" if meta.get("deletionTimestamp") and phase in (
        "Pending", "Running") else phase

    containers = as_list(status.get("containerStatuses"))
    init_containers = as_list(status.get("initContainerStatuses"))
    reason, message, exit_code = "", "", None
    scheduled = _condition(status, "PodScheduled")
    verdicts = [_container_verdict(init_containers, True), _container_verdict(containers, False)]
    severity, c_reason, c_message, c_exit = max(verdicts, key=lambda v: v[0])
    if status.get("reason"):
        # Evicted, NodeLost, DeadlineExceeded...: the pod as a whole, not a container.
        reason, message = str(status["reason"]), str(status.get("message", ""))
        exit_code = c_exit
    elif severity >= 0:
        reason, message, exit_code = c_reason, c_message, c_exit
    elif scheduled.get("status") == "False":
        reason = str(scheduled.get("reason", "Unschedulable"))
        message = str(scheduled.get("message", ""))
    elif phase == "Pending" and spec.get("nodeName"):
        reason = "ContainerCreating"
    started, finished = _main_container_times(containers)
    ready = _condition(status, "Ready").get("status") == "True"
    restarts = sum(int(cs.get("restartCount") or 0) for cs in containers + init_containers
                   if isinstance(cs, dict))
    return ReplicaState(
        name=str(meta.get("name", "")), role=role, index=index, status=shown, reason=reason,
        message=message.strip(), node=str(spec.get("nodeName", "")), gpus=pod_gpus(spec),
        restarts=restarts, ready=ready,
        exit_code=exit_code if isinstance(exit_code, int) else None,
        started=started or parse_timestamp(status.get("startTime")),
        finished=finished if phase in ("Succeeded", "Failed") else None,
        created=parse_timestamp(meta.get("creationTimestamp")), word=kind.word_for(role),
    )


def placeholder(name: str, role: str, index: int | None, gpus: int = 0,
                word: str = "") -> ReplicaState:
    """A pod the job should have but that does not exist (yet)."""
    return ReplicaState(name=name, role=role, index=index, reason=NOT_CREATED, gpus=gpus,
                        word=word)


PodGroups = dict[tuple[str, str, str], list[dict]]


def group_pods_by_job(pods: list[dict]) -> PodGroups:
    """The pods by (job-name label, namespace, job name), in one pass: with thousands of
    jobs, each job's `pods_of_job` then looks at its own few pods, not at all of them."""
    groups: PodGroups = {}
    for pod in pods:
        meta = as_dict(pod.get("metadata"))
        labels = as_dict(meta.get("labels"))
        for label in pod_job_labels():
            name = labels.get(label)
            if name:
                groups.setdefault((label, str(meta.get("namespace") or ""), str(name)),
                                  []).append(pod)
    return groups


def candidate_pods(kind: JobKind, job: dict, groups: PodGroups) -> list[dict]:
    """The pods `group_pods_by_job` put under this job's name (pods_of_job then checks the
    operator)."""
    meta = as_dict(job.get("metadata"))
    key = (kind.pod_job_label, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
    return groups.get(key, [])


def pods_of_job(kind: JobKind, job: dict, pods: list[dict]) -> list[dict]:
    """The pods that belong to this job, by the labels its operator puts on them."""
    meta = as_dict(job.get("metadata"))
    name, namespace = meta.get("name"), meta.get("namespace")
    selected = []
    for pod in pods:
        pod_meta = as_dict(pod.get("metadata"))
        labels = as_dict(pod_meta.get("labels"))
        if labels.get(kind.pod_job_label) != name:
            continue
        if namespace and pod_meta.get("namespace") not in (None, namespace):
            continue
        operator = labels.get(OPERATOR_NAME_LABEL)
        if kind.operator_name and operator and operator != kind.operator_name:
            continue  # a same-named job of another kind
        selected.append(pod)
    return selected
