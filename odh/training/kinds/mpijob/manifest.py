"""The kubeflow.org/v2beta1 MPIJob manifest, built from an `MPIJobSpec` and read back.

A spec read from a manifest remembers that manifest (`base`). Building it again starts from
a copy of the base and rewrites only the settings whose value changed, so every field the
model does not know (and the exact spelling of those it does, such as `cpu: 1` against
`cpu: "1"`) survives a clone or an edit.

Where Launcher and Worker templates differ, the Launcher's container is read for what runs
(image, command, env, volumes) and the Worker's template for where it runs (node selector,
tolerations, priority class). Writing sets both.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from odh.training.i18n import _
from odh.training.kinds.base import (
    CREATED_BY_ANNOTATION,
    DESCRIPTION_ANNOTATION,
    PRIORITY_LABEL,
    QUEUE_LABEL,
)
from odh.training.kinds.jobspec import (
    EnvVar,
    ManifestError,
    Toleration,
    node_requirements_path,
    read_node_requirements,
)
from odh.training.kinds.manifestparts import (
    cloned,
    gpus,
    read_claims,
    read_env_from,
    read_source_volumes,
    rebuild,
    resource,
    set_resource,
    str_dict,
    str_list,
    whole,
    write_claims,
    write_env_from,
    write_metadata_map,
    write_source_volumes,
)
from odh.training.kinds.mpijob.kind import API_VERSION, KIND
from odh.training.kinds.mpijob.model import LAUNCHER, ROLES, WORKER, MPIJobSpec
from odh.training.paths import as_dict, as_list, get_path, put_path
from odh.training.quantity import GPU_RESOURCE

SIDECAR_ANNOTATION = "sidecar.istio.io/inject"


# --- reading -----------------------------------------------------------------------------

def _replica(manifest: dict, role: str) -> dict:
    return as_dict(get_path(manifest, ["spec", "mpiReplicaSpecs", role]))


def _template(manifest: dict, role: str) -> dict:
    return as_dict(_replica(manifest, role).get("template"))


def _first_container(template: dict) -> dict:
    return as_dict(get_path(template, ["spec", "containers", 0]))


def _resource(container: dict, name: str) -> str:
    return resource(as_dict(container.get("resources")), name)


def read_manifest(manifest: dict) -> MPIJobSpec:
    """The spec a manifest describes; a copy of the manifest becomes the spec's base."""
    if not isinstance(manifest, dict):
        raise ManifestError(_("an MPIJob manifest must be a mapping"))
    if manifest.get("kind") != KIND or manifest.get("apiVersion") != API_VERSION:
        raise ManifestError(
            _("expected kind MPIJob with apiVersion %(expected)s, got kind %(kind)r with "
              "apiVersion %(api_version)r") % {"expected": API_VERSION,
                                               "kind": manifest.get("kind"),
                                               "api_version": manifest.get("apiVersion")})
    meta = as_dict(manifest.get("metadata"))
    job_spec = as_dict(manifest.get("spec"))
    run_policy = as_dict(job_spec.get("runPolicy"))
    has_worker = bool(_replica(manifest, WORKER))
    launcher_template = _template(manifest, LAUNCHER)
    worker_template = _template(manifest, WORKER)
    launcher = _first_container(launcher_template if launcher_template else worker_template)
    worker = _first_container(worker_template)
    placement = as_dict((worker_template if has_worker else launcher_template).get("spec"))
    templates = [t for t in (launcher_template, worker_template) if t]
    image = str(launcher.get("image", ""))
    gpus_per_worker = gpus(as_dict(worker.get("resources")))
    return MPIJobSpec(
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace", "")),
        image=image,
        command=str_list(launcher.get("command")) + str_list(launcher.get("args")),
        workers=whole(_replica(manifest, WORKER).get("replicas"), 0) or 0,
        cpu_per_worker=_resource(worker, "cpu"),
        memory_per_worker=_resource(worker, "memory"),
        gpus_per_worker=gpus_per_worker,
        launcher_cpu=_resource(launcher, "cpu"),
        launcher_memory=_resource(launcher, "memory"),
        # The CRD defaults slotsPerWorker to 1 when it is left out.
        slots_per_worker=whole(job_spec.get("slotsPerWorker", 1), 1),
        mpi_implementation=str(job_spec.get("mpiImplementation", "OpenMPI")),
        env=[EnvVar.from_manifest(e) for e in as_list(launcher.get("env"))
             if isinstance(e, dict)],
        volumes=read_claims(get_path(launcher_template, ["spec", "volumes"]),
                            launcher.get("volumeMounts")),
        node_selector=str_dict(placement.get("nodeSelector")),
        tolerations=[Toleration.from_manifest(t) for t in as_list(placement.get("tolerations"))
                     if isinstance(t, dict)],
        priority_class=str(placement.get("priorityClassName", "")),
        labels=str_dict(meta.get("labels")),
        annotations=str_dict(meta.get("annotations")),
        # The operator's in-memory default, whatever the field comment says (BEHAVIOR.md).
        clean_pod_policy=str(run_policy.get("cleanPodPolicy", "None")),
        ttl_seconds_after_finished=whole(run_policy.get("ttlSecondsAfterFinished"), None),
        backoff_limit=whole(run_policy.get("backoffLimit"), None),
        launcher_creation_policy=str(job_spec.get("launcherCreationPolicy", "AtStartup")),
        disable_sidecar_injection=bool(templates) and all(
            get_path(t, ["metadata", "annotations", SIDECAR_ANNOTATION]) == "false"
            for t in templates),
        worker_image=str(worker.get("image", "")) if has_worker else "",
        image_pull_secret=str(as_dict(next(iter(as_list(placement.get("imagePullSecrets"))),
                                           {})).get("name", "")),
        working_dir=str(launcher.get("workingDir", "")),
        env_from=read_env_from(launcher.get("envFrom")),
        node_affinity=read_node_requirements(placement),
        source_volumes=read_source_volumes(get_path(launcher_template, ["spec", "volumes"]),
                                           launcher.get("volumeMounts")),
        base=copy.deepcopy(manifest),
    )


# --- writing -----------------------------------------------------------------------------

def _replica_specs(manifest: dict) -> dict:
    specs = get_path(manifest, ["spec", "mpiReplicaSpecs"])
    if not isinstance(specs, dict):
        specs = {}
        put_path(manifest, ["spec", "mpiReplicaSpecs"], specs)
    return specs


def _present_roles(manifest: dict) -> list[str]:
    specs = as_dict(get_path(manifest, ["spec", "mpiReplicaSpecs"]))
    return [role for role in ROLES if isinstance(specs.get(role), dict)]


def _template_for(manifest: dict, role: str, spec: MPIJobSpec) -> dict:
    specs = _replica_specs(manifest)
    if not isinstance(specs.get(role), dict):
        # A replica spec the base lacked is generated whole, with every setting applied.
        specs[role] = _generate(spec)["spec"]["mpiReplicaSpecs"][role]
    replica = specs[role]
    if not isinstance(replica.get("template"), dict):
        replica["template"] = {}
    return replica["template"]


def _pod_spec(manifest: dict, role: str, spec: MPIJobSpec) -> dict:
    template = _template_for(manifest, role, spec)
    if not isinstance(template.get("spec"), dict):
        template["spec"] = {}
    return template["spec"]


def _container(manifest: dict, role: str, spec: MPIJobSpec) -> dict:
    pod_spec = _pod_spec(manifest, role, spec)
    containers = pod_spec.get("containers")
    if not isinstance(containers, list):
        containers = pod_spec["containers"] = []
    if not containers or not isinstance(containers[0], dict):
        containers[:1] = [{"name": role.lower()}]
    return containers[0]


def _set_resource(container: dict, name: str, value: str | int | None) -> None:
    if not isinstance(container.get("resources"), dict):
        container["resources"] = {}
    set_resource(container["resources"], name, value)
    if not container["resources"]:
        del container["resources"]


def _write_labels(m: dict, s: MPIJobSpec) -> None:
    write_metadata_map(m, "labels", s.labels, QUEUE_LABEL, PRIORITY_LABEL)


def _write_annotations(m: dict, s: MPIJobSpec) -> None:
    write_metadata_map(m, "annotations", s.annotations, CREATED_BY_ANNOTATION,
                       DESCRIPTION_ANNOTATION)


def _write_images(m: dict, s: MPIJobSpec) -> None:
    put_path(_container(m, LAUNCHER, s), ["image"], s.image)
    put_path(_container(m, WORKER, s), ["image"], s.effective_worker_image)


def _write_command(m: dict, s: MPIJobSpec) -> None:
    container = _container(m, LAUNCHER, s)
    container.pop("args", None)
    put_path(container, ["command"], list(s.command))


def _write_working_dir(m: dict, s: MPIJobSpec) -> None:
    # every container: mpirun starts the ranks on the Workers in the Launcher's directory
    for role in _present_roles(m):
        put_path(_container(m, role, s), ["workingDir"], s.working_dir)


def _write_env_from(m: dict, s: MPIJobSpec) -> None:
    for role in _present_roles(m):
        container = _container(m, role, s)
        put_path(container, ["envFrom"], write_env_from(container.get("envFrom"), s.env_from))


def _write_source_volumes(m: dict, s: MPIJobSpec) -> None:
    for role in _present_roles(m):
        pod_spec = _pod_spec(m, role, s)
        container = _container(m, role, s)
        volumes, mounts = write_source_volumes(pod_spec.get("volumes"),
                                               container.get("volumeMounts"), s.source_volumes)
        put_path(pod_spec, ["volumes"], volumes)
        put_path(container, ["volumeMounts"], mounts)


def _write_env(m: dict, s: MPIJobSpec) -> None:
    for role in _present_roles(m):
        put_path(_container(m, role, s), ["env"], [e.to_manifest() for e in s.env])


def _write_volumes(m: dict, s: MPIJobSpec) -> None:
    for role in _present_roles(m):
        pod_spec = _pod_spec(m, role, s)
        container = _container(m, role, s)
        volumes, mounts = write_claims(pod_spec.get("volumes"), container.get("volumeMounts"),
                                       s.volumes)
        put_path(pod_spec, ["volumes"], volumes)
        put_path(container, ["volumeMounts"], mounts)


def _write_placement(key: str, value: Callable[[MPIJobSpec], object]):
    return _write_placement_path([key], value)


def _write_placement_path(path: list[str], value: Callable[[MPIJobSpec], object]):
    def write(m: dict, s: MPIJobSpec) -> None:
        for role in _present_roles(m):
            put_path(_pod_spec(m, role, s), path, value(s))
    return write


def _write_sidecar(m: dict, s: MPIJobSpec) -> None:
    path = ["metadata", "annotations", SIDECAR_ANNOTATION]
    for role in _present_roles(m):
        template = _template_for(m, role, s)
        if s.disable_sidecar_injection:
            put_path(template, path, "false")
        elif get_path(template, path) == "false":
            put_path(template, path, None)


def _put(path: list[str], value: Callable[[MPIJobSpec], object]):
    def write(m: dict, s: MPIJobSpec) -> None:
        put_path(m, path, value(s))
    return write


def _put_resource(role: str, name: str, value: Callable[[MPIJobSpec], str | int | None]):
    def write(m: dict, s: MPIJobSpec) -> None:
        _set_resource(_container(m, role, s), name, value(s))
    return write


def _write_workers(m: dict, s: MPIJobSpec) -> None:
    _template_for(m, WORKER, s)
    _replica_specs(m)[WORKER]["replicas"] = s.workers


# (what the setting is, how to write it): a setting is written onto a base only when its
# value differs from what the base says, so untouched parts keep their exact spelling.
_WRITERS: list[tuple[Callable[[MPIJobSpec], object], Callable[[dict, MPIJobSpec], None]]] = [
    (lambda s: s.name, _put(["metadata", "name"], lambda s: s.name)),
    (lambda s: s.namespace, _put(["metadata", "namespace"], lambda s: s.namespace)),
    (lambda s: s.labels, _write_labels),
    (lambda s: s.queue_name,
     _put(["metadata", "labels", QUEUE_LABEL], lambda s: s.queue_name)),
    (lambda s: s.queue_priority,
     _put(["metadata", "labels", PRIORITY_LABEL], lambda s: s.queue_priority)),
    (lambda s: s.annotations, _write_annotations),
    (lambda s: s.created_by,
     _put(["metadata", "annotations", CREATED_BY_ANNOTATION], lambda s: s.created_by)),
    (lambda s: s.description,
     _put(["metadata", "annotations", DESCRIPTION_ANNOTATION], lambda s: s.description)),
    (lambda s: s.effective_slots, _put(["spec", "slotsPerWorker"], lambda s: s.effective_slots)),
    (lambda s: s.clean_pod_policy,
     _put(["spec", "runPolicy", "cleanPodPolicy"], lambda s: s.clean_pod_policy)),
    (lambda s: s.ttl_seconds_after_finished,
     _put(["spec", "runPolicy", "ttlSecondsAfterFinished"],
          lambda s: s.ttl_seconds_after_finished)),
    (lambda s: s.backoff_limit,
     _put(["spec", "runPolicy", "backoffLimit"], lambda s: s.backoff_limit)),
    (lambda s: s.mpi_implementation,
     _put(["spec", "mpiImplementation"], lambda s: s.mpi_implementation)),
    (lambda s: s.launcher_creation_policy,
     _put(["spec", "launcherCreationPolicy"], lambda s: s.launcher_creation_policy)),
    (lambda s: s.workers, _write_workers),
    (lambda s: (s.image, s.worker_image), _write_images),
    (lambda s: s.command, _write_command),
    (lambda s: s.working_dir, _write_working_dir),
    (lambda s: s.env, _write_env),
    (lambda s: s.env_from, _write_env_from),
    (lambda s: s.launcher_cpu, _put_resource(LAUNCHER, "cpu", lambda s: s.launcher_cpu)),
    (lambda s: s.launcher_memory,
     _put_resource(LAUNCHER, "memory", lambda s: s.launcher_memory)),
    (lambda s: s.cpu_per_worker, _put_resource(WORKER, "cpu", lambda s: s.cpu_per_worker)),
    (lambda s: s.memory_per_worker,
     _put_resource(WORKER, "memory", lambda s: s.memory_per_worker)),
    (lambda s: s.gpus_per_worker,
     _put_resource(WORKER, GPU_RESOURCE, lambda s: s.gpus_per_worker or None)),
    (lambda s: s.volumes, _write_volumes),
    (lambda s: s.source_volumes, _write_source_volumes),
    (lambda s: s.node_selector, _write_placement("nodeSelector", lambda s: dict(s.node_selector))),
    (lambda s: s.node_affinity,
     _write_placement_path(node_requirements_path(), lambda s: [
         {"matchExpressions": [r.to_manifest() for r in s.node_affinity]}]
         if s.node_affinity else None)),
    (lambda s: s.tolerations,
     _write_placement("tolerations", lambda s: [t.to_manifest() for t in s.tolerations])),
    (lambda s: s.priority_class, _write_placement("priorityClassName", lambda s: s.priority_class)),
    (lambda s: s.image_pull_secret,
     _write_placement("imagePullSecrets", lambda s: [{"name": s.image_pull_secret}]
                      if s.image_pull_secret else None)),
    (lambda s: s.disable_sidecar_injection, _write_sidecar),
]

# Key order of generated manifests: the order people read them in (kubectl's, roughly).
_KEY_ORDER = {key: rank for rank, key in enumerate([
    "apiVersion", "kind", "metadata", "spec", "name", "namespace", "labels", "annotations",
    "slotsPerWorker", "runPolicy", "cleanPodPolicy", "ttlSecondsAfterFinished", "backoffLimit",
    "mpiImplementation", "launcherCreationPolicy", "mpiReplicaSpecs", LAUNCHER, WORKER,
    "replicas", "template", "containers", "image", "command", "args", "workingDir", "env",
    "envFrom", "key", "operator",
    "value", "valueFrom", "effect", "tolerationSeconds", "resources", "requests", "limits",
    "cpu", "memory", GPU_RESOURCE, "volumeMounts", "mountPath", "subPath", "readOnly",
    "volumes", "persistentVolumeClaim", "claimName", "nodeSelector", "affinity", "tolerations",
    "priorityClassName",
])}
_FREE_FORM = {"labels", "annotations", "nodeSelector", "valueFrom"}


def _ordered(value: object, free_form: bool = False) -> object:
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    if not isinstance(value, dict) or free_form:
        return value
    keys = sorted(value, key=lambda k: _KEY_ORDER.get(k, len(_KEY_ORDER)))
    return {k: _ordered(value[k], k in _FREE_FORM) for k in keys}


def _generate(spec: MPIJobSpec) -> dict:
    def replica(role: str, replicas: int) -> dict:
        return {"replicas": replicas,
                "template": {"spec": {"containers": [{"name": role.lower()}]}}}

    launcher = replica(LAUNCHER, 1)
    # A failed Launcher is retried in a new pod and the failed one is kept, with its log,
    # for the diagnosis: with the operator's default (OnFailure) the pod restarts in place
    # and the Job controller deletes it when it gives up, log and exit code included.
    launcher["restartPolicy"] = "Never"
    manifest = {
        "apiVersion": API_VERSION, "kind": KIND, "metadata": {},
        "spec": {"mpiReplicaSpecs": {LAUNCHER: launcher, WORKER: replica(WORKER, spec.workers)}},
    }
    for _setting, write in _WRITERS:
        write(manifest, spec)
    ordered = _ordered(manifest)
    assert isinstance(ordered, dict)
    return ordered


def build_manifest(spec: MPIJobSpec) -> dict:
    """The kubeflow.org/v2beta1 MPIJob for a spec.

    Without a base: a complete manifest (Launcher runs the command; Workers run the
    operator's sshd; requests = limits). With a base: a copy of it with only the changed
    settings rewritten.
    """
    if spec.base is None:
        return _generate(spec)
    return rebuild(spec, _WRITERS, read_manifest)


# --- cloning -----------------------------------------------------------------------------

def clone_spec(spec: MPIJobSpec, new_name: str) -> MPIJobSpec:
    """A copy under a new name, ready to create: server-written state is dropped from the
    base, the clone is not created suspended, and its creator is whoever submits it."""
    return cloned(spec, new_name, ["spec", "runPolicy", "suspend"])
