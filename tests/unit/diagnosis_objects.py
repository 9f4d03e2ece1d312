"""Captured objects for the diagnosis rules: failed, waiting and unwell jobs as the MPI
Operator, the scheduler and the kubelet leave them (see training_objects.py)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from odh.training.diagnosis import Facts, LogTail
from tests.unit.training_objects import (
    NS,
    T0,
    at,
    condition,
    container_terminated,
    created,
    event,
    launcher,
    mpijob,
    running,
    worker,
)

Obj = dict[str, Any]
GPU_NODE = {"metadata": {"name": "gpu-a100-0", "labels": {}},
            "status": {"allocatable": {"cpu": "96", "memory": "1152Gi",
                                       "nvidia.com/gpu": "8"}}}
TEAM_QUOTA = {"metadata": {"name": "team-quota", "namespace": NS},
              "spec": {"hard": {"requests.nvidia.com/gpu": "16", "requests.memory": "1536Gi",
                                "requests.cpu": "192"}},
              "status": {"used": {"requests.nvidia.com/gpu": "8", "requests.memory": "600Gi",
                                  "requests.cpu": "80"}}}
BACKOFF = condition("Failed", "True", "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit", 700)


def failed_job(name: str = "gpt2", workers: int = 4, gpus: int = 1, memory: str = "48Gi",
               command: list[str] | None = None, reason: Obj = BACKOFF) -> Obj:
    job = mpijob(name, workers=workers, gpus=gpus,
                 conditions=[created(name), running(name, 60, "False"), reason],
                 status={"startTime": at(1), "completionTime": at(700)})
    specs = job["spec"]["mpiReplicaSpecs"]
    specs["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = memory
    specs["Launcher"]["template"]["spec"]["containers"][0]["command"] = command or [
        "mpirun", "-np", str(workers), "python", "/workspace/train.py", "--batch-size", "64"]
    return job


def running_job(name: str = "bert", workers: int = 2, gpus: int = 1) -> Obj:
    return mpijob(name, workers=workers, gpus=gpus,
                  conditions=[created(name), running(name, 60)], status={"startTime": at(1)})


def pending_job(name: str = "vit", workers: int = 2, gpus: int = 1) -> Obj:
    return mpijob(name, workers=workers, gpus=gpus, conditions=[created(name)],
                  status={"startTime": at(1)})


def with_memory(pod: Obj, memory: str) -> Obj:
    pod["spec"]["containers"][0]["resources"].setdefault("limits", {})["memory"] = memory
    return pod


def failed_launcher(name: str, code: int = 1, restarts: int = 0) -> Obj:
    return launcher(name, phase="Failed", state=container_terminated("Error", code),
                    restarts=restarts)


def tail(pod: Obj, lines: list[str], start: float = 600, previous: bool = False) -> LogTail:
    """A log tail read with timestamps, one line a second from `start`."""
    text = "\n".join(f"{at(start + i)} {line}" for i, line in enumerate(lines))
    return LogTail.from_text(pod["metadata"]["name"], text, previous)


def facts(job: Obj, pods: list[Obj], events: list[Obj] | None = None, *,
          logs: list[LogTail] | None = None, seconds: float = 800, **kwargs: Any) -> Facts:
    return Facts(job, pods, events or [], now=T0 + timedelta(seconds=seconds),
                 logs={t.pod + ("#previous" if t.previous else ""): t for t in logs or []}
                 if logs is not None else None, **kwargs)


def job_event(name: str, reason: str, message: str, seconds: float = 30) -> Obj:
    return event("MPIJob", name, reason, message, seconds)


def pod_event(pod: Obj, reason: str, message: str, seconds: float = 30,
              kind_of_event: str = "Warning") -> Obj:
    found = event("Pod", pod["metadata"]["name"], reason, message, seconds, kind_of_event)
    found["involvedObject"]["uid"] = pod["metadata"]["uid"]
    return found


__all__ = ["BACKOFF", "GPU_NODE", "NS", "T0", "TEAM_QUOTA", "at", "condition",
           "container_terminated", "facts", "failed_job", "failed_launcher", "job_event",
           "launcher", "pending_job", "pod_event", "running_job", "tail", "with_memory",
           "worker"]
