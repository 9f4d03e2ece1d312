"""PyTorchJob and TFJob (kubeflow.org/v1): small controllers shaped like training-operator v1.8.

What is kept from upstream (pkg/controller.v1/{common,pytorch,tensorflow}): pod and
headless-service names `<job>-<replica type lower>-<i>`, the `training.kubeflow.org/*`
labels (`job-role=master` on the Master/Chief pod), the env each framework gets
(PYTHONUNBUFFERED=0, MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK for PyTorch; TF_CONFIG for
TensorFlow), the condition reasons `<Kind>Created|Running|Succeeded|Failed|Suspended|
Resumed|Restarting` with their messages, replicaStatuses keyed by replica type, the
success rules (Master/Chief succeeded, otherwise all Workers; TFJob also worker 0) and
cleanPodPolicy (default None here).

Left out, by choice: elastic PyTorch (HPA, rendezvous env), the `init-pytorch` init
container, gang scheduling, backoffLimit/activeDeadlineSeconds/ttl in runPolicy, and the
retry of `ExitCode` pods with retryable exit codes (ExitCode counts as Never). A job that
fails validation gets one `<Kind>FailedValidation` Warning and is not retried.
"""

from __future__ import annotations

import json
from typing import Any

from simcluster.controllers.training_operator import TrainingJobController

Obj = dict[str, Any]


class PyTorchJobController(TrainingJobController):
    kind = "PyTorchJob"
    plural = "pytorchjobs"
    replica_field = "pytorchReplicaSpecs"
    replica_types = ("Master", "Worker")
    container = "pytorch"
    port_name = "pytorchjob-port"
    port = 23456
    default_restart = "OnFailure"

    def master_types(self) -> tuple[str, ...]:
        return ("Master",)

    def cluster_env(self, job: Obj, replicas: Obj, rtype: str, index: int,
                    container: Obj) -> list[Obj]:
        env = [{"name": "PYTHONUNBUFFERED", "value": "0"}]
        if "Master" in replicas:
            port = str(self._port(replicas, "Master"))
            master = f"{job['metadata']['name']}-master-0"
            rank = index + 1 if rtype == "Worker" else index
            world = sum(rs["replicas"] for rs in replicas.values())
            env += [{"name": "MASTER_PORT", "value": port},
                    {"name": "PET_MASTER_PORT", "value": port},
                    {"name": "MASTER_ADDR", "value": master},
                    {"name": "PET_MASTER_ADDR", "value": master},
                    {"name": "WORLD_SIZE", "value": str(world)},
                    {"name": "RANK", "value": str(rank)}]
        return env

    def succeeded_now(self, job: Obj, replicas: Obj, counts: Obj, pods: list[Obj]) -> bool:
        lead = "Master" if "Master" in replicas else "Worker"
        if lead not in replicas:
            return False
        return counts.get(lead, {}).get("succeeded", 0) >= replicas[lead]["replicas"]

    def success_message(self, job: Obj) -> str:
        rs = (job.get("spec") or {}).get(self.replica_field) or {}
        if "Master" in rs:
            return f"{self.kind} {job['metadata']['name']} is successfully completed."
        return super().success_message(job)

    def running_message(self, job: Obj) -> str:
        rs = (job.get("spec") or {}).get(self.replica_field) or {}
        if "Master" in rs:
            return super().running_message(job)
        m = job["metadata"]
        return f"{self.kind} {m['namespace']}/{m['name']} is running."


class TFJobController(TrainingJobController):
    kind = "TFJob"
    plural = "tfjobs"
    replica_field = "tfReplicaSpecs"
    replica_types = ("Chief", "Evaluator", "Master", "PS", "Worker")
    container = "tensorflow"
    port_name = "tfjob-port"
    port = 2222
    default_restart = "Never"

    def master_types(self) -> tuple[str, ...]:
        return ("Chief", "Master")

    def is_master_role(self, replicas: Obj, rtype: str, index: int) -> bool:
        if any(t in replicas for t in self.master_types()):
            return rtype in self.master_types()
        return rtype == "Worker" and index == 0

    def cluster_env(self, job: Obj, replicas: Obj, rtype: str, index: int,
                    container: Obj) -> list[Obj]:
        if container.get("name") != self.container:
            return []
        if sum(rs["replicas"] for rs in replicas.values()) <= 1:
            return []
        m = job["metadata"]
        cluster: dict[str, list[str]] = {}
        for t in sorted(replicas, key=str.lower):
            if t == "Evaluator":
                continue  # not part of the training cluster
            port = self._port(replicas, t)
            cluster[t.lower()] = [f"{m['name']}-{t.lower()}-{i}.{m['namespace']}.svc:{port}"
                                  for i in range(replicas[t]["replicas"])]
        config = {"cluster": cluster, "task": {"type": rtype.lower(), "index": index},
                  "environment": "cloud"}
        return [{"name": "TF_CONFIG", "value": json.dumps(config, separators=(",", ":"))}]

    def running_message(self, job: Obj) -> str:
        m = job["metadata"]
        return f"{self.kind} {m['namespace']}/{m['name']} is running."

    def failure_message(self, job: Obj, failed: int, rtype: str) -> str:
        m = job["metadata"]
        return (f"{self.kind} {m['namespace']}/{m['name']} has failed because {failed} {rtype} "
                "replica(s) failed.")

    def succeeded_now(self, job: Obj, replicas: Obj, counts: Obj, pods: list[Obj]) -> bool:
        for t in self.master_types():
            if t in replicas:
                return counts.get(t, {}).get("succeeded", 0) >= replicas[t]["replicas"]
        if "Worker" not in replicas:
            return False
        if counts.get("Worker", {}).get("succeeded", 0) >= replicas["Worker"]["replicas"]:
            return True
        worker0 = f"{job['metadata']['name']}-worker-0"
        return any(p["metadata"]["name"] == worker0 and
                   (p.get("status") or {}).get("phase") == "Succeeded" for p in pods)

