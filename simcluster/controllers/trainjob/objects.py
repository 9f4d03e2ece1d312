"""What Kubeflow Trainer v2 builds for a TrainJob: the JobSet from its runtime's template,
and for MPI runtimes the SSH Secret and the hostfile ConfigMap.

The shapes follow upstream's runtime framework (pkg/runtime/core and the jobset, mpi and
torch plugins): the JobSet is named as the TrainJob and owned by it; the replicated job
labelled `trainer.kubeflow.org/trainjob-ancestor-step: trainer` (or, when no replicated job
carries the label, the one named `node`) gets the TrainJob's trainer image, command, args, env and
resourcesPerNode on its `node` container; numNodes becomes the `node` job's parallelism
and completions (MPI with runLauncherAsNode: numNodes - 1, at least 1); endpoints are
`<trainjob>-<replicated job>-0-<i>.<subdomain>`.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from simcluster.controllers.conditions import controller_ref
from simcluster.controllers.mpijob.objects import ssh_key_pair

Obj = dict[str, Any]

JOBSET_API_VERSION = "jobset.x-k8s.io/v1alpha2"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_TRAINER = "trainer"
DATASET_INITIALIZER = "dataset-initializer"
MODEL_INITIALIZER = "model-initializer"
NODE = "node"
LAUNCHER = "launcher"
TRAINER_PORT = 29500
SIM_PREFIX = "simcluster.io/"

SSH_SUFFIX = "-mpi-ssh-auth"
SSH_VOLUME = "mpi-ssh-auth"
HOSTFILE_SUFFIX = "-mpi-hostfile"
HOSTFILE_VOLUME = "mpi-hostfile"
HOSTFILE_DIR = "/etc/mpi"
HOSTFILE_NAME = "hostfile"
RSH_ARGS = "-o ConnectionAttempts=10"
COMPLETION_INDEX_PATH = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


class BuildError(Exception):
    """The runtime cannot be turned into a JobSet for this TrainJob."""


# -- helpers -------------------------------------------------------------------------------------
RUNTIME_PLURALS = {"ClusterTrainingRuntime": "clustertrainingruntimes",
                   "TrainingRuntime": "trainingruntimes"}


def runtime_ref(job: Obj) -> tuple[str, str, str]:
    """(kind, namespace, name) of the TrainJob's runtime (`spec.runtimeRef`)."""
    ref = (job.get("spec") or {}).get("runtimeRef") or {}
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    if kind not in RUNTIME_PLURALS:
        raise BuildError(f"unsupported runtime: {kind}")
    namespace = job["metadata"]["namespace"] if kind == "TrainingRuntime" else ""
    return kind, namespace, ref.get("name", "")


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def trainer_spec(job: Obj) -> Obj:
    return (job.get("spec") or {}).get("trainer") or {}


def ml_policy(runtime: Obj) -> Obj:
    return (runtime.get("spec") or {}).get("mlPolicy") or {}


def num_nodes(job: Obj, runtime: Obj) -> int:
    return _int(trainer_spec(job).get("numNodes"), _int(ml_policy(runtime).get("numNodes"), 1))


def resources_per_node(job: Obj, runtime_template: Obj) -> Obj:
    if "resourcesPerNode" in trainer_spec(job):
        return trainer_spec(job)["resourcesPerNode"] or {}
    steps = trainer_steps(runtime_template)
    for rjob in runtime_template.get("replicatedJobs") or []:
        if rjob.get("name") in steps:
            for c in _containers(rjob):
                if c.get("name") == NODE:
                    return c.get("resources") or {}
    return {}


def gpus(resources: Obj) -> int:
    for part in ("limits", "requests"):
        value = (resources.get(part) or {}).get("nvidia.com/gpu")
        if value is not None:
            try:
                return int(str(value))
            except ValueError:
                return 0
    return 0


def _ancestor(rjob: Obj) -> str | None:
    labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
    return labels.get(ANCESTOR_LABEL)


def trainer_steps(spec: Obj) -> set[str]:
    """The replicated jobs labelled as the trainer step; lacking any, the `node` job."""
    rjobs = spec.get("replicatedJobs") or []
    labelled = {r.get("name", "") for r in rjobs if _ancestor(r) == ANCESTOR_TRAINER}
    return labelled or {NODE}


def _pod_spec(rjob: Obj) -> Obj:
    tmpl = rjob.setdefault("template", {}).setdefault("spec", {}).setdefault("template", {})
    return tmpl.setdefault("spec", {})


def _containers(rjob: Obj) -> list[Obj]:
    return (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get(
        "spec", {}).get("containers") or []


def _upsert(items: list[Obj], new: list[Obj], key: str = "name") -> list[Obj]:
    out = [i for i in items if i.get(key) not in {n.get(key) for n in new}]
    return out + copy.deepcopy(new)


def _meta(job: Obj, name: str) -> Obj:
    return {"name": name, "namespace": job["metadata"]["namespace"],
            "ownerReferences": [controller_ref(job)]}


def sim_annotations(job: Obj) -> dict[str, str]:
    """simcluster.io/* annotations of the TrainJob (how the simulated pods behave)."""
    return {k: str(v) for k, v in (job["metadata"].get("annotations") or {}).items()
            if k.startswith(SIM_PREFIX)}


# -- MPI -----------------------------------------------------------------------------------------
def mpi_policy(runtime: Obj) -> Obj | None:
    mpi = ml_policy(runtime).get("mpi")
    if mpi is None:
        return None
    mpi = dict(mpi)
    mpi.setdefault("numProcPerNode", 1)
    mpi.setdefault("mpiImplementation", "OpenMPI")
    mpi.setdefault("sshAuthMountPath", "/root/.ssh")
    mpi.setdefault("runLauncherAsNode", False)
    return mpi


def mpi_slots(job: Obj, runtime: Obj, mpi: Obj) -> int:
    asked = trainer_spec(job).get("numProcPerNode")
    if asked is not None:
        return _int(asked, 1) if not isinstance(asked, str) or not asked.isdigit() else int(asked)
    slots = _int(mpi.get("numProcPerNode"), 1)
    if slots == 1:
        template = ((runtime.get("spec") or {}).get("template") or {}).get("spec") or {}
        n = gpus(resources_per_node(job, template))
        if n > 1:
            return n
    return slots


def subdomain(job: Obj, spec: Obj) -> str:
    return (spec.get("network") or {}).get("subdomain") or job["metadata"]["name"]


def endpoints(job: Obj, spec: Obj, rjob: Obj) -> list[str]:
    count = _int((rjob.get("template") or {}).get("spec", {}).get("parallelism"), 1)
    name, sub = job["metadata"]["name"], subdomain(job, spec)
    return [f"{name}-{rjob['name']}-0-{i}.{sub}" for i in range(count)]


def hostfile(job: Obj, spec: Obj, mpi: Obj, slots: int) -> str:
    lines = []
    for rjob in spec.get("replicatedJobs") or []:
        if rjob.get("name") == NODE or (mpi["runLauncherAsNode"] and rjob.get("name") == LAUNCHER):
            if mpi["mpiImplementation"] == "OpenMPI":
                lines += [f"{e} slots={slots}\n" for e in endpoints(job, spec, rjob)]
    return "".join(lines)


def hostfile_config_map(job: Obj, text: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": _meta(job, job["metadata"]["name"] + HOSTFILE_SUFFIX),
            "data": {HOSTFILE_NAME: text}}


def ssh_secret(job: Obj) -> Obj:
    private, public = ssh_key_pair()
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": _meta(job, job["metadata"]["name"] + SSH_SUFFIX),
            "type": "kubernetes.io/ssh-auth", "immutable": True,
            "data": {"ssh-privatekey": base64.b64encode(private).decode(),
                     "ssh-publickey": base64.b64encode(public).decode()}}


def _apply_mpi(job: Obj, spec: Obj, mpi: Obj, slots: int) -> None:
    name = job["metadata"]["name"]
    ssh_volume = {"name": SSH_VOLUME, "secret": {
        "secretName": name + SSH_SUFFIX, "defaultMode": 0o640,
        "items": [{"key": "ssh-privatekey", "path": "id_rsa"},
                  {"key": "ssh-publickey", "path": "id_rsa.pub"},
                  {"key": "ssh-publickey", "path": "authorized_keys"}]}}
    hostfile_volume = {"name": HOSTFILE_VOLUME, "configMap": {
        "name": name + HOSTFILE_SUFFIX,
        "items": [{"key": HOSTFILE_NAME, "path": HOSTFILE_NAME, "mode": 0o444}]}}
    if mpi["mpiImplementation"] != "OpenMPI":
        raise BuildError(f"MPI implementation for {mpi['mpiImplementation']} doesn't supported")
    for rjob in spec.get("replicatedJobs") or []:
        if rjob.get("name") not in (NODE, LAUNCHER):
            continue
        launcher = rjob["name"] == LAUNCHER
        pod = _pod_spec(rjob)
        volumes = [ssh_volume] + ([hostfile_volume] if launcher else [])
        pod["volumes"] = _upsert(pod.get("volumes") or [], volumes)
        for c in pod.get("containers") or []:
            if c.get("name") != NODE:
                continue
            mounts = [{"name": SSH_VOLUME, "mountPath": mpi["sshAuthMountPath"]}]
            if launcher:
                mounts.append({"name": HOSTFILE_VOLUME, "mountPath": HOSTFILE_DIR})
                c["env"] = _upsert(c.get("env") or [], [
                    {"name": "OMPI_MCA_orte_default_hostfile",
                     "value": f"{HOSTFILE_DIR}/{HOSTFILE_NAME}"},
                    {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
                    {"name": "OMPI_MCA_orte_set_default_slots", "value": str(slots)},
                    {"name": "OMPI_MCA_plm_rsh_args", "value": RSH_ARGS}])
            c["volumeMounts"] = _upsert(c.get("volumeMounts") or [], mounts)


# -- torch ---------------------------------------------------------------------------------------
def torch_nproc(job: Obj, torch: Obj, resources: Obj) -> str:
    value = trainer_spec(job).get("numProcPerNode", torch.get("numProcPerNode", "auto"))
    if value in ("auto", "gpu"):
        n = gpus(resources)
        return str(n) if n else "auto"
    return str(value)


def _apply_torch(job: Obj, spec: Obj, torch: Obj, nodes: int, resources: Obj) -> None:
    name, sub = job["metadata"]["name"], subdomain(job, spec)
    env = [{"name": "PET_NNODES", "value": str(nodes)},
           {"name": "PET_NPROC_PER_NODE", "value": torch_nproc(job, torch, resources)},
           {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {
               "fieldPath": COMPLETION_INDEX_PATH}}},
           {"name": "PET_MASTER_ADDR", "value": f"{name}-{NODE}-0-0.{sub}"},
           {"name": "PET_MASTER_PORT", "value": str(TRAINER_PORT)}]
    steps = trainer_steps(spec)
    for rjob in spec.get("replicatedJobs") or []:
        if rjob.get("name") not in steps:
            continue
        for c in _pod_spec(rjob).get("containers") or []:
            if c.get("name") == NODE:
                c["env"] = _upsert(c.get("env") or [], env)
                c["ports"] = _upsert(c.get("ports") or [], [{"containerPort": TRAINER_PORT}],
                                     key="containerPort")


# -- the JobSet ----------------------------------------------------------------------------------
def _apply_trainer(job: Obj, rjob: Obj, mpi: Obj | None, step: bool) -> None:
    trainer = trainer_spec(job)
    mpi_node = mpi is not None and rjob.get("name") == NODE
    for c in _pod_spec(rjob).get("containers") or []:
        if c.get("name") != NODE or not (step or mpi_node):
            continue
        if trainer.get("image"):
            c["image"] = trainer["image"]
        if "resourcesPerNode" in trainer and (mpi is None or mpi_node or
                                              mpi["runLauncherAsNode"]):
            c["resources"] = copy.deepcopy(trainer["resourcesPerNode"])
        if not step:
            continue
        if trainer.get("command"):
            c["command"] = list(trainer["command"])
        if trainer.get("args"):
            c["args"] = list(trainer["args"])
        if trainer.get("env"):
            c["env"] = _upsert(c.get("env") or [], trainer["env"])


def _apply_initializers(job: Obj, rjob: Obj) -> None:
    init = (job.get("spec") or {}).get("initializer") or {}
    source = {DATASET_INITIALIZER: init.get("dataset"),
              MODEL_INITIALIZER: init.get("model")}.get(rjob.get("name", ""))
    if not source:
        return
    for c in _pod_spec(rjob).get("containers") or []:
        if c.get("name") != rjob["name"]:
            continue
        env = []
        if source.get("storageUri"):
            env.append({"name": "STORAGE_URI", "value": source["storageUri"]})
        env += source.get("env") or []
        if source.get("secretRef"):
            c["envFrom"] = list(c.get("envFrom") or []) + [
                {"secretRef": {"name": source["secretRef"]["name"]}}]
        c["env"] = _upsert(c.get("env") or [], env)


def _apply_overrides(job: Obj, rjob: Obj) -> None:
    """Trainer v2.0's `spec.podSpecOverrides`, in order, on the replicated jobs they target
    (Kueue adds its node selectors this way): nodeSelector entries merged, tolerations,
    scheduling gates and image pull secrets appended, volumes and the named containers'
    env and volumeMounts upserted, serviceAccountName and affinity replaced."""
    for override in (job.get("spec") or {}).get("podSpecOverrides") or []:
        if rjob.get("name") not in {t.get("name") for t in override.get("targetJobs") or []}:
            continue
        pod = _pod_spec(rjob)
        if override.get("nodeSelector"):
            pod["nodeSelector"] = {**(pod.get("nodeSelector") or {}), **override["nodeSelector"]}
        for key in ("serviceAccountName", "affinity"):
            if override.get(key):
                pod[key] = copy.deepcopy(override[key])
        for key in ("tolerations", "schedulingGates", "imagePullSecrets"):
            if override.get(key):
                pod[key] = list(pod.get(key) or []) + copy.deepcopy(override[key])
        if override.get("volumes"):
            pod["volumes"] = _upsert(pod.get("volumes") or [], override["volumes"])
        for key in ("containers", "initContainers"):
            for wanted in override.get(key) or []:
                for c in pod.get(key) or []:
                    if c.get("name") == wanted.get("name"):
                        for part in ("env", "volumeMounts"):
                            if wanted.get(part):
                                c[part] = _upsert(c.get(part) or [], wanted[part])


def build(job: Obj, runtime: Obj) -> tuple[Obj, list[Obj]]:
    """(the JobSet, the other objects: MPI's SSH Secret and hostfile ConfigMap)."""
    rt_spec = runtime.get("spec") or {}
    template = copy.deepcopy(rt_spec.get("template") or {})
    spec: Obj = template.get("spec") or {}
    if not spec.get("replicatedJobs"):
        raise BuildError("the runtime's template has no replicatedJobs")
    resources = resources_per_node(job, spec)
    mpi = mpi_policy(runtime)
    nodes = num_nodes(job, runtime)
    sim = sim_annotations(job)
    steps = trainer_steps(spec)
    for rjob in spec["replicatedJobs"]:
        rjob.setdefault("replicas", 1)
        name = rjob.get("name", "")
        jt = rjob.setdefault("template", {})
        labels = jt.setdefault("metadata", {}).setdefault("labels", {})
        if name in (DATASET_INITIALIZER, MODEL_INITIALIZER):
            labels.setdefault(ANCESTOR_LABEL, name)
        if name == NODE:
            count = nodes
            if mpi is not None and mpi["runLauncherAsNode"]:
                count = max(nodes - 1, 1)
            jt.setdefault("spec", {})["parallelism"] = count
            jt["spec"]["completions"] = count
        if name in steps:
            labels.setdefault(ANCESTOR_LABEL, ANCESTOR_TRAINER)
        _apply_trainer(job, rjob, mpi, name in steps)
        _apply_initializers(job, rjob)
        _apply_overrides(job, rjob)
        ptmpl = jt.setdefault("spec", {}).setdefault("template", {})
        pmeta = ptmpl.setdefault("metadata", {})
        if ANCESTOR_LABEL in labels:
            pmeta.setdefault("labels", {})[ANCESTOR_LABEL] = labels[ANCESTOR_LABEL]
        if sim:
            pmeta["annotations"] = {**(pmeta.get("annotations") or {}), **sim}
    others: list[Obj] = []
    if mpi is not None:
        slots = mpi_slots(job, runtime, mpi)
        _apply_mpi(job, spec, mpi, slots)
        others.append(hostfile_config_map(job, hostfile(job, spec, mpi, slots)))
    elif ml_policy(runtime).get("torch") is not None:
        _apply_torch(job, spec, ml_policy(runtime)["torch"], nodes, resources)
    jspec = job.get("spec") or {}
    labels = {**((template.get("metadata") or {}).get("labels") or {}),
              **(jspec.get("labels") or {})}
    annotations = {**((template.get("metadata") or {}).get("annotations") or {}),
                   **(jspec.get("annotations") or {}), **sim}
    spec["suspend"] = bool(jspec.get("suspend"))
    meta = _meta(job, job["metadata"]["name"])
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    jobset = {"apiVersion": JOBSET_API_VERSION, "kind": "JobSet", "metadata": meta,
              "spec": spec}
    return jobset, others
