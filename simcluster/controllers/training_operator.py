"""The training-operator's common job controller (ReconcileJobs), shared by PyTorchJob and
TFJob in kubeflow_v1.py: pods and headless services per replica, replicaStatuses,
Created/Running/Succeeded/Failed/Restarting/Suspended conditions and cleanPodPolicy.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from simcluster import behaviour, errors
from simcluster.controllers.base import Controller, Key
from simcluster.controllers.conditions import (
    controller_ref,
    int_or,
    is_controlled_by,
    is_true,
    new_condition,
    service_account,
    set_condition,
)

Obj = dict[str, Any]

OPERATOR_NAME_LABEL = "training.kubeflow.org/operator-name"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
CREATE_BATCH = 100  # pods and services created per reconcile at most (then requeued)
BATCH_REQUEUE = 0.01


class TrainingJobController(Controller):
    """ReconcileJobs of the training-operator's common job controller."""

    kind = ""
    plural = ""
    replica_field = ""
    replica_types: tuple[str, ...] = ()
    container = ""
    port_name = ""
    port = 0
    default_restart = "Never"

    def __init__(self, cluster: Any) -> None:
        super().__init__(cluster)
        self.name = f"{self.kind.lower()}-controller"
        self.user = service_account("kubeflow", "training-operator")
        self.rt_jobs = cluster.rt(self.plural, "kubeflow.org")
        self.pods = cluster.rt("pods", "")
        self.services = cluster.rt("services", "")
        self._budget = CREATE_BATCH

    def watches(self) -> Iterable[tuple[str, Any]]:
        yield f"kubeflow.org/{self.plural}", self.own_key
        yield "/pods", self.owner_key(self.kind)
        yield "/services", self.owner_key(self.kind)

    # -- framework specifics -------------------------------------------------------------------
    def master_types(self) -> tuple[str, ...]:
        return ()

    def is_master_role(self, replicas: Obj, rtype: str, index: int) -> bool:
        return rtype in self.master_types()

    def cluster_env(self, job: Obj, replicas: Obj, rtype: str, index: int,
                    container: Obj) -> list[Obj]:
        return []

    def succeeded_now(self, job: Obj, replicas: Obj, counts: Obj, pods: list[Obj]) -> bool:
        return False

    def running_message(self, job: Obj) -> str:
        return f"{self.kind} {job['metadata']['name']} is running."

    def success_message(self, job: Obj) -> str:
        m = job["metadata"]
        return f"{self.kind} {m['namespace']}/{m['name']} successfully completed."

    def failure_message(self, job: Obj, failed: int, rtype: str) -> str:
        return (f"{self.kind} {job['metadata']['name']} is failed because {failed} {rtype} "
                "replica(s) failed.")

    # -- helpers -------------------------------------------------------------------------------
    def _event(self, job: Obj, type_: str, reason: str, message: str) -> None:
        self.events.record(job, type_, reason, message, self.name)

    def _reason(self, what: str) -> str:
        return f"{self.kind}{what}"

    def _labels(self, job_name: str) -> dict[str, str]:
        return {OPERATOR_NAME_LABEL: self.name, JOB_NAME_LABEL: job_name.replace("/", "-")}

    def _replicas(self, job: Obj) -> tuple[Obj, str]:
        """Defaulted replica specs (replicas 1, the framework's restart policy), or an error."""
        specs = (job.get("spec") or {}).get(self.replica_field)
        if not isinstance(specs, dict) or not specs:
            return {}, f"{self.replica_field} must be specified"
        out: Obj = {}
        for rtype, rs in specs.items():
            if rtype not in self.replica_types:
                return {}, (f"{self.replica_field} is not valid: {rtype} is not a valid "
                            f"replica type; expected one of {', '.join(self.replica_types)}")
            if not isinstance(rs, dict):
                return {}, f"{self.replica_field}[{rtype}] must be an object"
            rs = copy.deepcopy(rs)
            rs["requested"] = int_or(rs.get("replicas"), 1)
            rs["replicas"] = min(rs["requested"], behaviour.MAX_REPLICAS)
            rs.setdefault("restartPolicy", self.default_restart)
            containers = ((rs.get("template") or {}).get("spec") or {}).get("containers")
            if not isinstance(containers, list) or not containers:
                return {}, f"{self.replica_field}[{rtype}].template.spec.containers is required"
            main = next((c for c in containers if isinstance(c, dict)
                         and c.get("name") == self.container), None)
            if main is None:
                return {}, (f"There is no container named {self.container} in {rtype}")
            ports = main.setdefault("ports", [])
            if not any(p.get("name") == self.port_name for p in ports if isinstance(p, dict)):
                ports.append({"name": self.port_name, "containerPort": self.port,
                              "protocol": "TCP"})
            out[rtype] = rs
        return out, ""

    def _port(self, replicas: Obj, rtype: str) -> int:
        for c in replicas[rtype]["template"]["spec"]["containers"]:
            if c.get("name") == self.container:
                for p in c.get("ports") or []:
                    if p.get("name") == self.port_name:
                        return int(p.get("containerPort") or self.port)
        return self.port

    def _owned(self, job: Obj, rt: Any) -> list[Obj]:
        out = []
        for dep_rt, ns, name in self.cluster.gc.dependents(job["metadata"]["uid"]):
            obj = self.store.get_raw(rt, ns, name) if dep_rt is rt else None
            if obj is not None and is_controlled_by(obj, job):
                out.append(obj)
        return out

    def _delete(self, rt: Any, obj: Obj) -> None:
        meta = obj["metadata"]
        try:
            self.cluster.deleter.delete(rt, meta["namespace"], meta["name"], None)
        except errors.ApiError:
            pass

    # -- reconcile -----------------------------------------------------------------------------
    def reconcile(self, key: Key) -> float | None:
        stored = self.store.get_raw(self.rt_jobs, *key)
        if stored is None or stored["metadata"].get("deletionTimestamp"):
            return None
        job = copy.deepcopy(stored)
        replicas, problem = self._replicas(job)
        if problem:
            self._event(job, "Warning", self._reason("FailedValidation"),
                        f"{self.kind} failed validation because {problem}")
            return None
        status: Obj = job.get("status") or {}
        job["status"] = status
        old = copy.deepcopy(status)
        now = self.clock.timestamp()
        name = job["metadata"]["name"]
        if not status.get("conditions"):
            set_condition(status, new_condition("Created", "True", self._reason("Created"),
                                                f"{self.kind} {name} is created.", now), mpi=False)
            self._simulation_warnings(job, replicas)
        policy = (job.get("spec") or {}).get("runPolicy") or {}
        pods = self._owned(job, self.pods)
        statuses = status.setdefault("replicaStatuses", {})
        if is_true(status, "Succeeded") or is_true(status, "Failed"):
            self._clean_up(policy.get("cleanPodPolicy") or "None", pods)
            if is_true(status, "Succeeded"):
                for counts in statuses.values():
                    if counts.get("active"):
                        counts["succeeded"] = counts.get("succeeded", 0) + counts.pop("active")
            return self._write(job, status, old)
        if policy.get("suspend"):
            return self._suspend(job, status, old, pods)
        if is_true(status, "Suspended"):
            msg = f"{self.kind} {name} is resumed."
            set_condition(status, new_condition("Suspended", "False", self._reason("Resumed"),
                                                msg, now), mpi=False)
            status["startTime"] = now
            self._event(job, "Normal", self._reason("Resumed"), msg)
        if not status.get("startTime"):
            status["startTime"] = now
        self._budget = CREATE_BATCH
        for rtype, rs in replicas.items():
            counts = self._reconcile_pods(job, replicas, rtype, rs, pods)
            statuses[rtype] = counts
            self._reconcile_services(job, replicas, rtype, rs)
        if self._budget < 0:  # more to create: persist what we have, come back
            self._write(job, status, old)
            return BATCH_REQUEUE
        self._update_conditions(job, status, replicas, pods, now)
        return self._write(job, status, old)

    def _spend(self) -> bool:
        """Whether this reconcile may create one more object (else it is requeued)."""
        self._budget -= 1
        return self._budget >= 0

    def _simulation_warnings(self, job: Obj, replicas: Obj) -> None:
        """What the job asks of simcluster that it does not do as written (not upstream)."""
        for reason, message in behaviour.annotation_warnings(job):
            self._event(job, "Warning", reason, message)
        for rtype, rs in replicas.items():
            if rs["requested"] > rs["replicas"]:
                self._event(job, "Warning", "SimclusterReplicaLimit",
                            behaviour.replicas_warning(self.kind, rtype, rs["requested"]))

    def _write(self, job: Obj, status: Obj, old: Obj) -> None:
        if status == old:
            return None

        def write(obj: Obj) -> bool | None:
            if obj.get("status") == status:
                return False
            obj["status"] = copy.deepcopy(status)
            return None
        self.store.mutate(self.rt_jobs, job["metadata"]["namespace"], job["metadata"]["name"],
                          write)
        return None

    def _clean_up(self, policy: str, pods: list[Obj]) -> None:
        if policy not in ("All", "Running"):
            return
        for pod in pods:
            phase = (pod.get("status") or {}).get("phase")
            if policy == "Running" and phase not in ("Running", "Pending"):
                continue
            self._delete(self.pods, pod)
            svc = self.store.get_raw(self.services, pod["metadata"]["namespace"],
                                     pod["metadata"]["name"])
            if svc is not None:
                self._delete(self.services, svc)

    def _suspend(self, job: Obj, status: Obj, old: Obj, pods: list[Obj]) -> None:
        for pod in pods:
            self._delete(self.pods, pod)
        for svc in self._owned(job, self.services):
            self._delete(self.services, svc)
        for counts in (status.get("replicaStatuses") or {}).values():
            counts.pop("active", None)
        now = self.clock.timestamp()
        msg = f"{self.kind} {job['metadata']['name']} is suspended."
        reason = self._reason("Suspended")
        if is_true(status, "Running"):
            set_condition(status, new_condition("Running", "False", reason, msg, now), mpi=False)
        if not is_true(status, "Suspended"):
            set_condition(status, new_condition("Suspended", "True", reason, msg, now), mpi=False)
        self._event(job, "Normal", reason, msg)
        return self._write(job, status, old)

    def _reconcile_pods(self, job: Obj, replicas: Obj, rtype: str, rs: Obj,
                        pods: list[Obj]) -> Obj:
        rt_lower = rtype.lower()
        mine = {}
        for pod in pods:
            labels = pod["metadata"].get("labels") or {}
            if labels.get(REPLICA_TYPE_LABEL) == rt_lower:
                mine[labels.get(REPLICA_INDEX_LABEL, "")] = pod
        counts: Obj = {}
        for index, pod in mine.items():
            if not index.isdigit() or int(index) >= rs["replicas"]:
                self._delete(self.pods, pod)
                continue
            phase = (pod.get("status") or {}).get("phase")
            key = {"Running": "active", "Succeeded": "succeeded", "Failed": "failed"}.get(
                phase or "")
            if key:
                counts[key] = counts.get(key, 0) + 1
        for i in range(rs["replicas"]):
            if str(i) not in mine and self._spend():
                self._create_pod(job, replicas, rtype, rs, i)
        selector = {**self._labels(job["metadata"]["name"]), REPLICA_TYPE_LABEL: rt_lower}
        counts["selector"] = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
        return counts

    def _create_pod(self, job: Obj, replicas: Obj, rtype: str, rs: Obj, index: int) -> None:
        name = f"{job['metadata']['name']}-{rtype.lower()}-{index}".replace("/", "-")
        template = copy.deepcopy(rs.get("template") or {})
        tmeta = template.get("metadata") or {}
        labels = dict(tmeta.get("labels") or {})
        labels.update(self._labels(job["metadata"]["name"]))
        labels[REPLICA_TYPE_LABEL] = rtype.lower()
        labels[REPLICA_INDEX_LABEL] = str(index)
        if self.is_master_role(replicas, rtype, index):
            labels[JOB_ROLE_LABEL] = "master"
        spec = template.get("spec") or {}
        for c in spec.get("containers") or []:
            extra = self.cluster_env(job, replicas, rtype, index, c)
            if extra:
                c["env"] = list(c.get("env") or []) + extra
        if spec.get("restartPolicy"):
            self._event(job, "Warning", "SettedPodTemplateRestartPolicy",
                        "Restart policy in pod template will be overwritten by restart policy "
                        "in replica spec")
        policy = rs.get("restartPolicy")
        spec["restartPolicy"] = "Never" if policy == "ExitCode" else policy
        meta: Obj = {"name": name, "namespace": job["metadata"]["namespace"], "labels": labels,
                     "ownerReferences": [controller_ref(job)]}
        if tmeta.get("annotations"):
            meta["annotations"] = dict(tmeta["annotations"])
        try:
            self.cluster.create_as(self.user, {"apiVersion": "v1", "kind": "Pod",
                                               "metadata": meta, "spec": spec})
        except errors.ApiError as e:
            if e.code != 409:
                self._event(job, "Warning", "FailedCreatePod", f"Error creating: {e.message}")
            return
        self._event(job, "Normal", "SuccessfulCreatePod", f"Created pod: {name}")

    def _reconcile_services(self, job: Obj, replicas: Obj, rtype: str, rs: Obj) -> None:
        ns = job["metadata"]["namespace"]
        for i in range(rs["replicas"]):
            name = f"{job['metadata']['name']}-{rtype.lower()}-{i}".replace("/", "-")
            if self.store.get_raw(self.services, ns, name) is not None:
                continue
            if not self._spend():
                return
            labels = {**self._labels(job["metadata"]["name"]),
                      REPLICA_TYPE_LABEL: rtype.lower(), REPLICA_INDEX_LABEL: str(i)}
            ports = [{"name": self.port_name, "port": self._port(replicas, rtype)}]
            svc = {"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": name, "namespace": ns, "labels": labels,
                                "ownerReferences": [controller_ref(job)]},
                   "spec": {"clusterIP": "None", "selector": dict(labels), "ports": ports}}
            try:
                self.cluster.create_as(self.user, svc)
            except errors.ApiError as e:
                self._event(job, "Warning", "FailedCreateService", f"Error creating: {e.message}")
                continue
            self._event(job, "Normal", "SuccessfulCreateService", f"Created service: {name}")

    def _update_conditions(self, job: Obj, status: Obj, replicas: Obj, pods: list[Obj],
                           now: str) -> None:
        statuses = status["replicaStatuses"]
        masters = [t for t in self.master_types() if t in replicas]
        lead = masters or (["Worker"] if "Worker" in replicas else [])
        if any(statuses.get(t, {}).get("active") for t in lead):
            set_condition(status, new_condition("Running", "True", self._reason("Running"),
                                                self.running_message(job), now), mpi=False)
        if self.succeeded_now(job, replicas, statuses, pods):
            msg = self.success_message(job)
            self._event(job, "Normal", self._reason("Succeeded"), msg)
            status.setdefault("completionTime", now)
            set_condition(status, new_condition("Succeeded", "True", self._reason("Succeeded"),
                                                msg, now), mpi=False)
            return
        for rtype in self.replica_types:
            if rtype not in replicas:
                continue
            counts = statuses.get(rtype, {})
            failed = counts.get("failed", 0)
            if not failed:
                continue
            if replicas[rtype]["restartPolicy"] in ("Never", "ExitCode"):
                msg = self.failure_message(job, failed, rtype)
                self._event(job, "Normal", self._reason("Failed"), msg)
                status.setdefault("completionTime", now)
                set_condition(status, new_condition("Failed", "True", self._reason("Failed"),
                                                    msg, now), mpi=False)
            else:
                msg = (f"{self.kind} {job['metadata']['name']} is restarting because {failed} "
                       f"{rtype} replica(s) failed.")
                self._event(job, "Warning", self._reason("Restarting"), msg)
                set_condition(status, new_condition("Restarting", "True",
                                                    self._reason("Restarting"), msg, now),
                              mpi=False)
