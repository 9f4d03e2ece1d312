"""Kueue's admission (kueue.x-k8s.io/v1beta1), as upstream Kueue does it, for clusters
that serve the `kueue` API (`apis: [kueue]` in the scenario). The facts relied on, read
from upstream's source and docs, are in simcluster/README.md ("Kueue").

- A training job (MPIJob, PyTorchJob, TFJob, TrainJob: kueue_jobs.py) created with the
  label `kueue.x-k8s.io/queue-name` is suspended at once (upstream's webhook), and gets a
  Workload `<kind>-<name>-<5 hex>` (owned by the job, label `kueue.x-k8s.io/job-uid`) with
  its pod sets (`launcher`, `worker`; a TrainJob's replicated jobs), its queue and its
  priority (label `kueue.x-k8s.io/priority-class`: a WorkloadPriorityClass).
- Each ClusterQueue admits its pending Workloads in order (higher priority first, then
  the older), when every pod set fits the unused nominal quota of one flavor per resource
  group (flavors tried in the order the queue lists them): `status.admission`,
  `QuotaReserved` and `Admitted` True; the job gets the flavor's node labels as node
  selectors (as its kind takes them) and is unsuspended. One that does not fit gets
  `QuotaReserved` False, reason `Pending`, with upstream's message ("couldn't assign
  flavors to pod set worker: insufficient unused quota for nvidia.com/gpu in flavor a100,
  8 more needed"); under `StrictFIFO` it blocks the ones behind it, under `BestEffortFIFO`
  (the default) they are tried. A queue that does not exist: reason `Inadmissible`,
  "LocalQueue x doesn't exist".
- A finished job's Workload is `Finished` and its quota released; the queues' status
  counts it all (`flavorsReservation`, `flavorsUsage`, pending, reserving, admitted).

One controller keyed once ("", "kueue") recomputes the whole of it after any change of
the objects involved: what a real Kueue keeps in its cache is read from the store each
time (simulated clusters hold hundreds of workloads, not millions).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simcluster.apiserver.store import Change
from simcluster.controllers.base import Controller, Key
from simcluster.placement import kueue_jobs, scheduling
from simcluster.placement.kueue_jobs import queued
from simcluster.placement.kueue_quota import (
    GROUP,
    JOB_UID_LABEL,
    KEY,
    PRIORITY_LABEL,
    WPC_SOURCE,
    QuotaArithmetic,
    condition_of,
    holds,
    workload_name,
)
from simcluster.placement.kueue_status import QueueStatus

Obj = dict[str, Any]

class KueueController(QuotaArithmetic, QueueStatus, Controller):
    name = "kueue-controller-manager"

    def __init__(self, cluster: Any) -> None:
        super().__init__(cluster)
        self.workloads = cluster.rt("workloads", GROUP)
        self.cqs = cluster.rt("clusterqueues", GROUP)
        self.lqs = cluster.rt("localqueues", GROUP)
        self.flavors = cluster.rt("resourceflavors", GROUP)
        self.priorities = cluster.rt("workloadpriorityclasses", GROUP)
        self.kinds = kueue_jobs.kinds(cluster)
        self.jobs = {kind: cluster.rt(k.plural, k.group) for kind, k in self.kinds.items()}
        # uid -> the resourceVersion it was created at: creation order, finer than the
        # creationTimestamp's seconds (upstream's queue heap keeps arrival order)
        self._arrived: dict[str, int] = {}
        # uid -> (what it was tried against, Kueue's message) for workloads that did not fit
        self._no_fit: dict[str, tuple[tuple, str]] = {}

    def watches(self) -> Iterable[tuple[str, Any]]:
        for plural in ("clusterqueues", "localqueues", "resourceflavors",
                       "workloadpriorityclasses"):
            yield f"{GROUP}/{plural}", self._any
        yield f"{GROUP}/workloads", self._workload
        for k in self.kinds.values():
            yield f"{k.group}/{k.plural}", self._queued_job
        if "TrainJob" in self.kinds:  # a TrainJob's pod sets wait for its runtime
            for plural in ("trainingruntimes", "clustertrainingruntimes"):
                yield f"trainer.kubeflow.org/{plural}", self._any

    @staticmethod
    def _any(_change: Change) -> Iterable[Key]:
        yield KEY

    def _workload(self, change: Change) -> Iterable[Key]:
        self._note_arrival(change)
        yield KEY

    def _queued_job(self, change: Change) -> Iterable[Key]:
        if queued(change.obj) or (change.old is not None and queued(change.old)):
            self._note_arrival(change)
            yield KEY

    def _note_arrival(self, change: Change) -> None:
        uid = change.obj["metadata"].get("uid", "")
        if change.type == "ADDED":
            self._arrived[uid] = change.rv
        elif change.type == "DELETED":
            self._arrived.pop(uid, None)
            self._no_fit.pop(uid, None)

    def _arrival(self, obj: Obj) -> int:
        return self._arrived.get(obj["metadata"].get("uid", ""), 0)

    # -- the whole reconcile ------------------------------------------------------------------
    def reconcile(self, key: Key) -> float | None:
        jobs = self._queued_jobs()
        self._sync_workloads(jobs)
        # read-only (every write goes through store.mutate): copying each Workload on
        # every reconcile made admitting 1,000 queued jobs quadratic in deep copies
        workloads = list(self.store.iter_raw(self.workloads))
        self._admit(workloads, jobs)
        self._start_admitted(jobs)
        self._write_queue_status()
        return None

    def _queued_jobs(self) -> dict[str, tuple[str, Obj]]:
        """uid -> (kind, job) of every job with a queue, in the order they were created."""
        found = []
        for kind, rt in self.jobs.items():
            for job in self.store.iter_raw(rt):
                if queued(job) and not job["metadata"].get("deletionTimestamp"):
                    found.append((kind, job))
        found.sort(key=lambda kj: self._arrival(kj[1]))
        return {job["metadata"]["uid"]: (kind, job) for kind, job in found}

    # -- workloads for jobs -------------------------------------------------------------------
    def _sync_workloads(self, jobs: dict[str, tuple[str, Obj]]) -> None:
        have = {(w["metadata"].get("labels") or {}).get(JOB_UID_LABEL): w
                for w in self.store.iter_raw(self.workloads)}
        for uid, (kind, job) in jobs.items():
            workload = have.get(uid)
            if workload is None:
                self._create_workload(kind, job)
            elif not holds(workload, "Finished"):
                finished = self.kinds[kind].finished(job)
                if finished is not None:
                    self._finish(workload, *finished)
        for uid, workload in have.items():  # a workload whose job is gone goes with it
            if uid and uid not in jobs and self.store.by_uid(uid) is None:
                meta = workload["metadata"]
                self.store.delete(self.workloads, meta["namespace"], meta["name"])

    def _create_workload(self, kind: str, job: Obj) -> None:
        pod_sets = self.kinds[kind].pod_sets(job)
        if pod_sets is None:  # e.g. a TrainJob's runtime not there (yet)
            return
        meta = job["metadata"]
        spec: Obj = {"queueName": queued(job), "podSets": pod_sets, "priority": 0,
                     "active": True}
        wpc_name = (meta.get("labels") or {}).get(PRIORITY_LABEL)
        wpc = self.store.get_raw(self.priorities, "", wpc_name) if wpc_name else None
        if wpc is not None:
            spec.update(priorityClassName=wpc_name, priorityClassSource=WPC_SOURCE,
                        priority=int(wpc.get("value") or 0))
        group = job["apiVersion"].split("/")[0]
        workload = {
            "apiVersion": f"{GROUP}/v1beta1", "kind": "Workload",
            "metadata": {"name": workload_name(kind, group, meta["name"], meta["uid"]),
                         "namespace": meta["namespace"],
                         "labels": {JOB_UID_LABEL: meta["uid"]},
                         "ownerReferences": [{"apiVersion": job["apiVersion"], "kind": kind,
                                              "name": meta["name"], "uid": meta["uid"],
                                              "controller": True,
                                              "blockOwnerDeletion": True}]},
            "spec": spec}
        created = self.store.create(self.workloads, workload)
        self.events.record(job, "Normal", "CreatedWorkload",
                           f"Created Workload: {meta['namespace']}/"
                           f"{created['metadata']['name']}", self.name)

    def _finish(self, workload: Obj, outcome: str, message: str) -> None:
        def finish(w: Obj) -> None:
            self._set(w, "Finished", "True", outcome, message or f"Job {outcome.lower()}")
        self._mutate(workload, finish)

    # -- admission ----------------------------------------------------------------------------
    def _admit(self, workloads: list[Obj], jobs: dict[str, tuple[str, Obj]]) -> None:
        usage = self._usage(workloads)
        pending: dict[str, list[Obj]] = {}
        for w in workloads:
            if holds(w, "QuotaReserved") or holds(w, "Finished") or \
                    not (w.get("spec") or {}).get("active", True):
                continue
            cq_name, problem = self._cluster_queue_of(w)
            if problem:
                self._pending(w, "Inadmissible", problem)
                continue
            pending.setdefault(cq_name, []).append(w)
        # Upstream keeps a workload that did not fit aside (inadmissible) until something
        # that could change that happens: here, a workload tried against the same quotas,
        # the same usage and the same workloads' priorities is not tried again.
        quotas = repr(sorted((c["metadata"]["name"], repr(c.get("spec")))
                             for c in self.store.iter_raw(self.cqs)))
        admitted = self._admitted_priorities(workloads)  # (admissions below change usage)
        for cq_name, waiting in sorted(pending.items()):
            cq = self.store.get_raw(self.cqs, "", cq_name)
            strict = (cq.get("spec") or {}).get("queueingStrategy") == "StrictFIFO"
            waiting.sort(key=lambda w: (*self.order(w), self._arrival(w)))
            for w in waiting:
                tried = (w["metadata"].get("resourceVersion"), quotas,
                         repr(sorted(usage.items())), admitted)
                known = self._no_fit.get(w["metadata"]["uid"])
                if known is not None and known[0] == tried:
                    if strict:
                        break
                    continue
                assignment, message = self._assign(cq, w, usage)
                if assignment is None:
                    if self._preempt_for(cq, w, usage, workloads):
                        break  # its quota is released: the next pass admits it
                    self._pending(w, "Pending", message)
                    stored = self.store.get_raw(self.workloads, w["metadata"]["namespace"],
                                                w["metadata"]["name"])
                    if stored is not None:  # as written (its resourceVersion moved)
                        self._no_fit[w["metadata"]["uid"]] = (
                            (stored["metadata"].get("resourceVersion"), *tried[1:]), message)
                    if strict:
                        break
                    continue
                self._no_fit.pop(w["metadata"]["uid"], None)
                self._reserve(w, cq_name, assignment, usage)

    @staticmethod
    def _admitted_priorities(workloads: list[Obj]) -> str:
        """What preemption depends on besides usage: the admitted workloads' priorities."""
        return repr(sorted((w["metadata"].get("uid", ""), (w.get("spec") or {}).get("priority"))
                           for w in workloads if holds(w, "QuotaReserved")))

    def pending_in(self, cq_name: str) -> list[Obj]:
        """The ClusterQueue's pending Workloads in its order (the visibility API's)."""
        pending = [w for w in self.store.iter_raw(self.workloads)
                   if not holds(w, "QuotaReserved") and not holds(w, "Finished")
                   and (w.get("spec") or {}).get("active", True)
                   and self._cluster_queue_of(w)[0] == cq_name]
        return sorted(pending, key=lambda w: (*self.order(w), self._arrival(w)))

    @staticmethod
    def order(w: Obj) -> tuple:
        """Upstream's queue order: higher priority first, then the older."""
        spec = w.get("spec") or {}
        return (-int(spec.get("priority") or 0), w["metadata"].get("creationTimestamp", ""))

    def _cluster_queue_of(self, w: Obj) -> tuple[str, str]:
        """(ClusterQueue name, "") or ("", why it cannot be admitted)."""
        lq_name = str((w.get("spec") or {}).get("queueName") or "")
        lq = self.store.get_raw(self.lqs, w["metadata"]["namespace"], lq_name)
        if lq is None:
            return "", f"LocalQueue {lq_name} doesn't exist"
        cq_name = str((lq.get("spec") or {}).get("clusterQueue") or "")
        if self.store.get_raw(self.cqs, "", cq_name) is None:
            return "", f"ClusterQueue {cq_name} doesn't exist"
        return cq_name, ""

    def _evict(self, target: Obj, message: str) -> None:
        def evict(obj: Obj) -> None:
            self._set(obj, "Evicted", "True", "Preempted", message)
            self._set(obj, "Preempted", "True", "InClusterQueue", message)
            obj.setdefault("status", {}).pop("admission", None)
            self._set(obj, "QuotaReserved", "False", "Pending", message)
            self._set(obj, "Admitted", "False", "NoReservation",
                      "The workload has no reservation")
            self._set(obj, "Requeued", "True", "Preempted", message)
        stored = self._mutate(target, evict)
        if stored is None:
            return
        self.events.record(stored, "Normal", "Preempted", message, self.name)
        uid = (stored["metadata"].get("labels") or {}).get(JOB_UID_LABEL, "")
        found = self.store.by_uid(uid)
        if found is not None:
            self._stop(found[0], found[1], stored, message)

    def _stop(self, rt, job: Obj, workload: Obj, message: str) -> None:
        """Suspend the job again, the flavor's node selectors taken off."""
        queued_kind = self.kinds.get(job.get("kind", ""))
        if queued_kind is None or queued_kind.group != rt.group:
            return
        meta = job["metadata"]
        stored = self.store.mutate(rt, meta["namespace"], meta["name"],
                                   lambda j: queued_kind.stop(j, workload))
        if stored is not None:
            self.events.record(stored, "Normal", "Stopped", message, self.name)

    def _reserve(self, w: Obj, cq_name: str, assignment: list[Obj], usage: dict) -> None:
        for ps in assignment:
            for r, flavor in ps["flavors"].items():
                key = (cq_name, flavor, r)
                usage[key] = usage.get(key, 0) + scheduling.milli(ps["resourceUsage"][r])

        def reserve(obj: Obj) -> None:
            obj.setdefault("status", {})["admission"] = {"clusterQueue": cq_name,
                                                         "podSetAssignments": assignment}
            for type_ in ("Evicted", "Preempted"):  # admitted again after a preemption
                before = condition_of(obj, type_)
                if before is not None and before.get("status") == "True":
                    self._set(obj, type_, "False", "QuotaReserved",
                              f"Previously: {before.get('message', '')}")
            self._set(obj, "QuotaReserved", "True", "QuotaReserved",
                      f"Quota reserved in ClusterQueue {cq_name}")
            self._set(obj, "Admitted", "True", "Admitted", "The workload is admitted")
        stored = self._mutate(w, reserve)
        if stored is not None:
            self.events.record(stored, "Normal", "QuotaReserved",
                               f"Quota reserved in ClusterQueue {cq_name}", self.name)
            self.events.record(stored, "Normal", "Admitted",
                               f"Admitted by ClusterQueue {cq_name}", self.name)

    def _pending(self, w: Obj, reason: str, message: str) -> None:
        c = condition_of(w, "QuotaReserved")
        if c is not None and c.get("reason") == reason and c.get("message") == message:
            return

        def pend(obj: Obj) -> None:
            self._set(obj, "QuotaReserved", "False", reason, message)
            self._set(obj, "Admitted", "False", "NoReservation",
                      "The workload has no reservation")
        stored = self._mutate(w, pend)
        if stored is not None:
            self.events.record(stored, "Warning", "Pending", message, self.name)

    # -- admitted jobs run --------------------------------------------------------------------
    def _start_admitted(self, jobs: dict[str, tuple[str, Obj]]) -> None:
        for w in self.store.iter_raw(self.workloads):
            if not holds(w, "Admitted") or holds(w, "Finished"):
                continue
            found = jobs.get((w["metadata"].get("labels") or {}).get(JOB_UID_LABEL, ""))
            if found is None:
                continue
            kind, job = found
            if not self.kinds[kind].suspended(job):
                continue
            admission = (w.get("status") or {}).get("admission") or {}
            selectors = {}
            for ps in admission.get("podSetAssignments") or []:
                labels: dict[str, str] = {}
                for flavor in sorted(set((ps.get("flavors") or {}).values())):
                    rf = self.store.get_raw(self.flavors, "", flavor) or {}
                    labels.update((rf.get("spec") or {}).get("nodeLabels") or {})
                selectors[ps["name"]] = labels
            self._run(kind, job, selectors, admission.get("clusterQueue", ""))

    def _run(self, kind: str, job: Obj, selectors: dict[str, dict[str, str]],
             cq_name: str) -> None:
        meta = job["metadata"]
        stored = self.store.mutate(self.jobs[kind], meta["namespace"], meta["name"],
                                   lambda j: self.kinds[kind].run(j, selectors))
        if stored is not None:
            self.events.record(stored, "Normal", "Started",
                               f"Admitted by clusterQueue {cq_name}", self.name)

    # -- writing ------------------------------------------------------------------------------
    def _write_status(self, rt, obj: Obj, status: Obj) -> None:
        current = dict(obj.get("status") or {})
        old = [{k: v for k, v in c.items() if k != "lastTransitionTime"}
               for c in current.get("conditions") or []]
        if {**current, "conditions": old} == status:
            return

        def write(o: Obj) -> None:
            was = {c.get("type"): c for c in (o.get("status") or {}).get("conditions") or []}
            for c in status["conditions"]:
                before = was.get(c["type"])
                c["lastTransitionTime"] = before["lastTransitionTime"] if before and \
                    before.get("status") == c["status"] else self.clock.timestamp()
            o["status"] = status
        meta = obj["metadata"]
        self.store.mutate(rt, meta.get("namespace", ""), meta["name"], write)

    def _set(self, obj: Obj, type_: str, status: str, reason: str, message: str) -> None:
        conditions = obj.setdefault("status", {}).setdefault("conditions", [])
        for c in conditions:
            if c.get("type") == type_:
                if c.get("status") != status:
                    c["lastTransitionTime"] = self.clock.timestamp()
                c.update(status=status, reason=reason, message=message)
                return
        conditions.append({"type": type_, "status": status, "reason": reason,
                           "message": message, "lastTransitionTime": self.clock.timestamp()})

    def _mutate(self, w: Obj, fn) -> Obj | None:
        meta = w["metadata"]
        return self.store.mutate(self.workloads, meta["namespace"], meta["name"], fn)
