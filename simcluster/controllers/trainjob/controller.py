"""Kubeflow Trainer v2's TrainJob controller (trainer.kubeflow.org/v1alpha1), as upstream's
trainjob_controller reconciles.

One reconcile: read the TrainJob (skip it when `spec.managedBy` names another controller);
unless it has finished, find its runtime (`spec.runtimeRef`: ClusterTrainingRuntime by
default, or the namespaced TrainingRuntime), build the JobSet and, for MPI runtimes, the
SSH Secret (created once: it is immutable) and the hostfile ConfigMap
(trainjob_objects.py), and create them; an existing JobSet is only rewritten while the
TrainJob or the JobSet is suspended (upstream's rule: a running JobSet is left alone).
Then the status: `Created` (JobsCreationSucceeded, or JobsBuildFailed/JobsCreationFailed
with a Warning `TrainJobResourcesCreationFailed` event), `Suspended`/Resumed, and
`Complete`/`Failed`/`jobsStatus` read back from the JobSet (trainjob_status.py). The JobSet
itself is run by the JobSet controller, not here.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable
from typing import Any

from simcluster import errors
from simcluster.apiserver.store import Change
from simcluster.controllers.base import Controller, Key
from simcluster.controllers.conditions import is_controlled_by, service_account
from simcluster.controllers.trainjob import objects
from simcluster.controllers.trainjob import status as tstatus

log = logging.getLogger("simcluster.trainer")

Obj = dict[str, Any]

TRAINJOB_API_VERSION = "trainer.kubeflow.org/v1alpha1"
MANAGED_BY = "trainer.kubeflow.org/trainjob-controller"
COMPONENT = "trainjob-controller"
MESSAGE_LIMIT = 950


class ReconcileError(Exception):
    def __init__(self, message: str, reason: tuple[str, str]) -> None:
        super().__init__(message)
        self.reason = reason


class TrainJobController(Controller):
    name = "trainer"

    def __init__(self, cluster: Any) -> None:
        super().__init__(cluster)
        self.user = service_account("kubeflow-system", "kubeflow-trainer-controller-manager")
        self.trainjobs = cluster.rt("trainjobs", "trainer.kubeflow.org")
        self.cluster_runtimes = cluster.rt("clustertrainingruntimes", "trainer.kubeflow.org")
        self.runtimes = cluster.rt("trainingruntimes", "trainer.kubeflow.org")
        self.jobsets = cluster.rt("jobsets", "jobset.x-k8s.io")
        self.configmaps = cluster.rt("configmaps", "")
        self.secrets = cluster.rt("secrets", "")

    # -- routing ---------------------------------------------------------------------------------
    def watches(self) -> Iterable[tuple[str, Any]]:
        yield "trainer.kubeflow.org/trainjobs", self.own_key
        for path in ("jobset.x-k8s.io/jobsets", "/configmaps", "/secrets"):
            yield path, self._owning_trainjob
        yield "trainer.kubeflow.org/trainingruntimes", self._runtime_users
        yield "trainer.kubeflow.org/clustertrainingruntimes", self._runtime_users

    @staticmethod
    def _owning_trainjob(change: Change) -> Iterable[Key]:
        meta = change.obj["metadata"]
        for ref in meta.get("ownerReferences") or []:
            if ref.get("controller") and ref.get("kind") == "TrainJob" and \
                    ref.get("apiVersion") == TRAINJOB_API_VERSION:
                yield (meta.get("namespace", ""), ref["name"])

    def _runtime_users(self, change: Change) -> Iterable[Key]:
        """TrainJobs that wait for this runtime (their JobSet could not be built yet)."""
        kind = change.obj.get("kind")
        meta = change.obj["metadata"]
        for job in self.store.iter_raw(self.trainjobs, meta.get("namespace") or None):
            ref = (job.get("spec") or {}).get("runtimeRef") or {}
            if ref.get("name") == meta["name"] and \
                    ref.get("kind", "ClusterTrainingRuntime") == kind:
                created = tstatus.find((job.get("status") or {}).get("conditions") or [],
                                       tstatus.CREATED)
                if created is None or created.get("status") != "True":
                    yield (job["metadata"]["namespace"], job["metadata"]["name"])

    # -- the reconcile ---------------------------------------------------------------------------
    def reconcile(self, key: Key) -> float | None:
        ns, name = key
        stored = self.store.get_raw(self.trainjobs, ns, name)
        if stored is None or stored["metadata"].get("deletionTimestamp"):
            return None
        job = copy.deepcopy(stored)
        spec = job.get("spec") or {}
        if spec.get("managedBy", MANAGED_BY) != MANAGED_BY:
            return None
        status: Obj = job.setdefault("status", {})
        now = self.clock.timestamp()
        # an external change may take the job out of Failed (upstream removes it each time)
        status["conditions"] = [c for c in status.get("conditions") or []
                                if c.get("type") != tstatus.FAILED]
        if not status["conditions"]:
            status.pop("conditions")
        retry = None
        jobset = self.store.get_raw(self.jobsets, ns, name)
        if not tstatus.finished(stored.get("status") or {}):
            try:
                jobset = self._reconcile_objects(job, jobset)
                tstatus.set_status_condition(status, tstatus.CREATED, "True",
                                             *tstatus.CREATION_SUCCEEDED, now)
            except ReconcileError as e:
                message = f"TrainJob resources reconciliation failed: {str(e)[:MESSAGE_LIMIT]}"
                if len(str(e)) > MESSAGE_LIMIT:
                    message += " ..."
                self.events.record(job, "Warning", "TrainJobResourcesCreationFailed", message,
                                   COMPONENT)
                tstatus.set_status_condition(status, tstatus.CREATED, "False", *e.reason, now)
                retry = 10.0
        tstatus.set_suspended(status, bool(spec.get("suspend")), now)
        if jobset is not None and is_controlled_by(jobset, job):
            tstatus.from_jobset(status, jobset, now)
        for c in (stored.get("status") or {}).get("conditions") or []:
            if c.get("type") == tstatus.FAILED and tstatus.find(
                    status.get("conditions") or [], tstatus.FAILED) is None and \
                    jobset is None:
                status.setdefault("conditions", []).append(c)  # JobSet gone (TTL): keep it
        self._write_status(stored, status)
        return retry

    def _reconcile_objects(self, job: Obj, jobset: Obj | None) -> Obj | None:
        runtime = self._runtime(job)
        try:
            want, others = objects.build(job, runtime)
        except objects.BuildError as e:
            raise ReconcileError(str(e), tstatus.BUILD_FAILED) from None
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        if objects.mpi_policy(runtime) is not None and \
                self.store.get_raw(self.secrets, ns, name + objects.SSH_SUFFIX) is None:
            self._create(objects.ssh_secret(job))
        for obj in others:
            self._apply(self.configmaps, job, obj)
        if jobset is None:
            return self._create(want)
        if not is_controlled_by(jobset, job):
            raise ReconcileError(f'jobsets.jobset.x-k8s.io "{name}" already exists and is not '
                                 'owned by the TrainJob', tstatus.CREATION_FAILED)
        suspend = bool((job.get("spec") or {}).get("suspend"))
        if not suspend and not (jobset.get("spec") or {}).get("suspend"):
            return jobset  # upstream leaves a running JobSet alone

        def rewrite(obj: Obj) -> bool | None:
            if obj.get("spec") == want["spec"]:
                return False
            obj["spec"] = want["spec"]
            for k in ("labels", "annotations"):
                if want["metadata"].get(k):
                    obj["metadata"][k] = {**(obj["metadata"].get(k) or {}),
                                          **want["metadata"][k]}
            return None
        return self.store.mutate(self.jobsets, ns, name, rewrite) or jobset

    def _runtime(self, job: Obj) -> Obj:
        try:
            kind, ns, name = objects.runtime_ref(job)
        except objects.BuildError as e:
            raise ReconcileError(str(e), tstatus.BUILD_FAILED) from None
        rt = self.runtimes if kind == "TrainingRuntime" else self.cluster_runtimes
        found = self.store.get_raw(rt, ns, name)
        if found is None:
            raise ReconcileError(f'{rt.plural}.trainer.kubeflow.org "{name}" not found',
                                 tstatus.BUILD_FAILED)
        return found

    def _create(self, obj: Obj) -> Obj:
        try:
            return self.cluster.create_as(self.user, obj)
        except errors.ApiError as e:
            raise ReconcileError(e.message, tstatus.CREATION_FAILED) from None

    def _apply(self, rt: Any, job: Obj, obj: Obj) -> None:
        ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        current = self.store.get_raw(rt, ns, name)
        if current is None:
            self._create(obj)
            return
        if not is_controlled_by(current, job):
            raise ReconcileError(f'{rt.plural} "{name}" already exists and is not owned by '
                                 'the TrainJob', tstatus.CREATION_FAILED)
        if current.get("data") != obj["data"]:
            def fix(o: Obj) -> None:
                o["data"] = obj["data"]
            self.store.mutate(rt, ns, name, fix)

    def _write_status(self, stored: Obj, status: Obj) -> None:
        if (stored.get("status") or {}) == status:
            return

        def write(obj: Obj) -> bool | None:
            if (obj.get("status") or {}) == status:
                return False
            obj["status"] = copy.deepcopy(status)
            return None
        m = stored["metadata"]
        self.store.mutate(self.trainjobs, m["namespace"], m["name"], write)
