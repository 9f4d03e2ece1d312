"""The kinds of job Kueue admits here, each as upstream's integration for it does
(kubernetes-sigs/kueue pkg/controller/jobs/<kind>): how the job is suspended, its
Workload's pod sets, how an admission's node selectors reach its pods and how they are
taken back when it is stopped (evicted), and when it has finished.

- MPIJob, PyTorchJob, TFJob (`kubeflow.org`): `spec.runPolicy.suspend`; one pod set per
  replica type, named in lower case, counting its replicas; the flavor's node labels go
  on the replica's pod template and a stop puts back the template the Workload keeps.
- TrainJob (`trainer.kubeflow.org`, Kueue v0.13/v0.14 with Trainer v2.0): `spec.suspend`;
  the pod sets are the replicated jobs of the JobSet the Trainer would build from its
  runtime (jobset's PodSets: replicas x min(parallelism, completions) pods each); the
  admission appends one `spec.podSpecOverrides` entry per pod set (`targetJobs` the
  replicated job, `nodeSelector` the flavor's labels) and records where Kueue's entries
  start in the annotation `kueue.x-k8s.io/trainjob-override-idx`; a stop cuts them off.
"""

from __future__ import annotations

import copy
from typing import Any

from simcluster.controllers.conditions import get_condition
from simcluster.controllers.trainjob import objects as trainjob_objects

Obj = dict[str, Any]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
OVERRIDE_INDEX = "kueue.x-k8s.io/trainjob-override-idx"
REPLICA_ORDER = ("launcher", "master", "chief", "ps", "worker", "evaluator")


def queued(obj: Obj) -> str:
    return str(((obj.get("metadata") or {}).get("labels") or {}).get(QUEUE_LABEL) or "")


def _outcome(job: Obj, succeeded: str) -> tuple[str, str] | None:
    """("Succeeded"|"Failed", message) once the job's condition says it finished."""
    for type_, outcome in ((succeeded, "Succeeded"), ("Failed", "Failed")):
        c = get_condition(job.get("status") or {}, type_)
        if c is not None and c.get("status") == "True":
            return outcome, str(c.get("message") or "")
    return None


class QueuedKind:
    """One kind of job Kueue manages."""

    kind = ""
    group = ""
    plural = ""

    def suspended(self, job: Obj) -> bool:
        raise NotImplementedError

    def suspend(self, job: Obj) -> None:
        raise NotImplementedError

    def pod_sets(self, job: Obj) -> list[Obj] | None:
        """The Workload's pod sets; None while they cannot be worked out."""
        raise NotImplementedError

    def run(self, job: Obj, selectors: dict[str, dict[str, str]]) -> None:
        """Admitted: node selectors per pod set on, unsuspended (`job` is mutated)."""
        raise NotImplementedError

    def stop(self, job: Obj, workload: Obj) -> None:
        """Evicted: suspended, the admission's node selectors taken off."""
        raise NotImplementedError

    def finished(self, job: Obj) -> tuple[str, str] | None:
        raise NotImplementedError


class KubeflowJob(QueuedKind):
    """MPIJob (v2beta1), PyTorchJob and TFJob (v1): replica specs and runPolicy."""

    group = "kubeflow.org"

    def __init__(self, kind: str, plural: str, specs: str) -> None:
        self.kind, self.plural, self.specs = kind, plural, specs

    def _replicas(self, job: Obj) -> dict[str, Obj]:
        return (job.get("spec") or {}).get(self.specs) or {}

    def suspended(self, job: Obj) -> bool:
        return bool(((job.get("spec") or {}).get("runPolicy") or {}).get("suspend"))

    def suspend(self, job: Obj) -> None:
        job.setdefault("spec", {}).setdefault("runPolicy", {})["suspend"] = True

    def pod_sets(self, job: Obj) -> list[Obj]:
        sets = [{"name": replica_type.lower(), "count": int(spec.get("replicas", 1)),
                 "template": copy.deepcopy(spec.get("template") or {})}
                for replica_type, spec in self._replicas(job).items()]
        order = {n: i for i, n in enumerate(REPLICA_ORDER)}
        return sorted(sets, key=lambda s: (order.get(s["name"], len(order)), s["name"]))

    def run(self, job: Obj, selectors: dict[str, dict[str, str]]) -> None:
        for replica_type, spec in self._replicas(job).items():
            labels = selectors.get(replica_type.lower()) or {}
            if labels:
                pod_spec = spec.setdefault("template", {}).setdefault("spec", {})
                # merged, the job's own keys first (upstream's MergeKeepFirst)
                pod_spec["nodeSelector"] = {**labels, **(pod_spec.get("nodeSelector") or {})}
        job["spec"].setdefault("runPolicy", {})["suspend"] = False

    def stop(self, job: Obj, workload: Obj) -> None:
        """Its pod templates as the Workload's pod sets keep them."""
        originals = {ps["name"]: ps.get("template") or {}
                     for ps in (workload.get("spec") or {}).get("podSets") or []}
        for replica_type, spec in self._replicas(job).items():
            original = originals.get(replica_type.lower())
            if original is not None:
                spec["template"] = copy.deepcopy(original)
        self.suspend(job)

    def finished(self, job: Obj) -> tuple[str, str] | None:
        return _outcome(job, "Succeeded")


class TrainJobKind(QueuedKind):
    """Kubeflow Trainer v2's TrainJob, its pod sets from the JobSet its runtime makes."""

    kind, group, plural = "TrainJob", "trainer.kubeflow.org", "trainjobs"

    def __init__(self, cluster: Any) -> None:
        self.store = cluster.store
        self.runtimes = {kind: cluster.rt(plural, self.group) for kind, plural in
                         trainjob_objects.RUNTIME_PLURALS.items()}

    def suspended(self, job: Obj) -> bool:
        return bool((job.get("spec") or {}).get("suspend"))

    def suspend(self, job: Obj) -> None:
        job.setdefault("spec", {})["suspend"] = True

    def pod_sets(self, job: Obj) -> list[Obj] | None:
        try:
            kind, ns, name = trainjob_objects.runtime_ref(job)
        except trainjob_objects.BuildError:
            return None
        runtime = self.store.get_raw(self.runtimes[kind], ns, name)
        if runtime is None:
            return None
        try:
            jobset, _others = trainjob_objects.build(job, runtime)
        except trainjob_objects.BuildError:
            return None
        sets = []
        for rjob in jobset["spec"]["replicatedJobs"]:
            spec = (rjob.get("template") or {}).get("spec") or {}
            parallelism = int(spec.get("parallelism", 1))
            per_replica = min(parallelism, int(spec.get("completions", parallelism)))
            sets.append({"name": rjob["name"], "count": int(rjob.get("replicas", 1)) * per_replica,
                         "template": copy.deepcopy(spec.get("template") or {})})
        return sets

    def run(self, job: Obj, selectors: dict[str, dict[str, str]]) -> None:
        spec = job.setdefault("spec", {})
        overrides = spec.setdefault("podSpecOverrides", [])
        annotations = job["metadata"].setdefault("annotations", {})
        annotations[OVERRIDE_INDEX] = str(len(overrides))
        for name, labels in selectors.items():
            override: Obj = {"targetJobs": [{"name": name}]}
            if labels:
                override["nodeSelector"] = dict(labels)
            overrides.append(override)
        spec["suspend"] = False

    def stop(self, job: Obj, workload: Obj) -> None:
        self.suspend(job)
        annotations = job["metadata"].get("annotations") or {}
        index = annotations.pop(OVERRIDE_INDEX, None)
        if index is not None and index.isdigit():
            job["spec"]["podSpecOverrides"] = (job["spec"].get("podSpecOverrides") or [])[
                :int(index)]

    def finished(self, job: Obj) -> tuple[str, str] | None:
        return _outcome(job, "Complete")


def kinds(cluster: Any) -> dict[str, QueuedKind]:
    """The kinds this cluster serves that Kueue manages, by kind."""
    found: list[QueuedKind] = [KubeflowJob("MPIJob", "mpijobs", "mpiReplicaSpecs"),
                               KubeflowJob("PyTorchJob", "pytorchjobs", "pytorchReplicaSpecs"),
                               KubeflowJob("TFJob", "tfjobs", "tfReplicaSpecs")]
    if cluster.registry.by_kind("trainer.kubeflow.org/v1alpha1", "TrainJob") is not None:
        found.append(TrainJobKind(cluster))
    return {k.kind: k for k in found}


def suspend_if_queued(kinds_: dict[str, QueuedKind], group: str, kind: str, obj: Obj) -> None:
    """Upstream's webhook: a job with a queue is created suspended."""
    queued_kind = kinds_.get(kind)
    if queued_kind is not None and queued_kind.group == group and queued(obj):
        queued_kind.suspend(obj)
