"""The trainer.kubeflow.org/v1alpha1 TrainJob manifest, built from a `TrainJobSpec` and read
back.

    spec.runtimeRef        {name, kind, apiGroup}: the runtime
    spec.trainer           image, command, env, numNodes, numProcPerNode, resourcesPerNode
    spec.podSpecOverrides  the entry targeting the `node` job: volumes (and the node
                           container's mounts), nodeSelector, tolerations, imagePullSecrets

As for the MPIJob, a spec read from a manifest remembers it (`base`) and a rebuild rewrites
only the settings whose value changed, so every other field (runtimePatches,
podTemplateOverrides, initializer, managedBy, a trainer's args as written...) survives a
clone or an edit.
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
from odh.training.kinds.jobspec import EnvVar, ManifestError, Toleration
from odh.training.kinds.manifestparts import (
    cloned,
    gpus,
    read_claims,
    rebuild,
    resource,
    set_resource,
    str_dict,
    str_list,
    whole,
    write_claims,
    write_metadata_map,
)
from odh.training.kinds.trainjob.kind import API_VERSION, GROUP, KIND
from odh.training.kinds.trainjob.model import CLUSTER_RUNTIME, NODE, TrainJobSpec
from odh.training.paths import as_dict, as_list, get_path, put_path
from odh.training.quantity import GPU_RESOURCE

TRAINER = ["spec", "trainer"]


# --- reading -----------------------------------------------------------------------------

def node_override(manifest: dict) -> dict:
    """The podSpecOverrides entry that targets the node job ({} when there is none)."""
    for entry in as_list(get_path(manifest, ["spec", "podSpecOverrides"])):
        if isinstance(entry, dict) and any(
                isinstance(t, dict) and t.get("name") == NODE
                for t in as_list(entry.get("targetJobs"))):
            return entry
    return {}


def override_container(entry: dict) -> dict:
    return next((c for c in as_list(entry.get("containers"))
                 if isinstance(c, dict) and c.get("name") == NODE), {})


def read_manifest(manifest: dict) -> TrainJobSpec:
    """The spec a manifest describes; a copy of the manifest becomes the spec's base."""
    if not isinstance(manifest, dict):
        raise ManifestError(_("a TrainJob manifest must be a mapping"))
    if manifest.get("kind") != KIND or manifest.get("apiVersion") != API_VERSION:
        raise ManifestError(
            _("expected kind TrainJob with apiVersion %(expected)s, got kind %(kind)r with "
              "apiVersion %(api_version)r") % {"expected": API_VERSION,
                                               "kind": manifest.get("kind"),
                                               "api_version": manifest.get("apiVersion")})
    meta = as_dict(manifest.get("metadata"))
    ref = as_dict(get_path(manifest, ["spec", "runtimeRef"]))
    trainer = as_dict(get_path(manifest, TRAINER))
    resources = as_dict(trainer.get("resourcesPerNode"))
    override = node_override(manifest)
    procs = trainer.get("numProcPerNode")
    return TrainJobSpec(
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace", "")),
        runtime=str(ref.get("name", "")),
        runtime_kind=str(ref.get("kind") or CLUSTER_RUNTIME),
        image=str(trainer.get("image", "")),
        command=str_list(trainer.get("command")) + str_list(trainer.get("args")),
        # the Trainer's default: one node
        workers=whole(trainer.get("numNodes", 1), 0) or 0,
        cpu_per_worker=resource(resources, "cpu"),
        memory_per_worker=resource(resources, "memory"),
        gpus_per_worker=gpus(resources),
        # "auto" and the like (v2.0's int-or-string) are the runtime's choice
        slots_per_worker=whole(procs, None) if procs is not None else None,
        env=[EnvVar.from_manifest(e) for e in as_list(trainer.get("env"))
             if isinstance(e, dict)],
        volumes=read_claims(override.get("volumes"),
                            override_container(override).get("volumeMounts")),
        node_selector=str_dict(override.get("nodeSelector")),
        tolerations=[Toleration.from_manifest(t) for t in as_list(override.get("tolerations"))
                     if isinstance(t, dict)],
        labels=str_dict(meta.get("labels")),
        annotations=str_dict(meta.get("annotations")),
        image_pull_secret=str(as_dict(next(iter(as_list(override.get("imagePullSecrets"))),
                                           {})).get("name", "")),
        base=copy.deepcopy(manifest),
    )


# --- writing -----------------------------------------------------------------------------

def _trainer(m: dict) -> dict:
    if not isinstance(m.get("spec"), dict):
        m["spec"] = {}
    if not isinstance(m["spec"].get("trainer"), dict):
        m["spec"]["trainer"] = {}
    return m["spec"]["trainer"]


def _write_override(m: dict, key: str, value: object) -> None:
    """Set one field of the node job's podSpecOverrides entry (made when needed; an entry
    left with nothing but its target is removed)."""
    entry = node_override(m)
    if not entry:
        if value in (None, [], {}, ""):
            return
        entry = {"targetJobs": [{"name": NODE}]}
        if not isinstance(get_path(m, ["spec", "podSpecOverrides"]), list):
            m["spec"]["podSpecOverrides"] = []
        m["spec"]["podSpecOverrides"].append(entry)
    put_path(entry, [key], value)
    if set(entry) == {"targetJobs"}:
        m["spec"]["podSpecOverrides"].remove(entry)
        put_path(m, ["spec", "podSpecOverrides"], m["spec"]["podSpecOverrides"] or None)


def _write_volumes(m: dict, s: TrainJobSpec) -> None:
    entry = node_override(m)
    container = override_container(entry)
    volumes, mounts = write_claims(entry.get("volumes"), container.get("volumeMounts"),
                                   s.volumes)
    others = [c for c in as_list(entry.get("containers")) if c is not container]
    if mounts:
        container = {**container, "name": NODE, "volumeMounts": mounts}
    else:
        container = {k: v for k, v in container.items() if k != "volumeMounts"}
    kept = others + ([container] if set(container) - {"name"} else [])
    _write_override(m, "volumes", volumes)
    _write_override(m, "containers", kept)


def _write_resource(name: str, value: Callable[[TrainJobSpec], str | int | None]):
    def write(m: dict, s: TrainJobSpec) -> None:
        trainer = _trainer(m)
        resources = as_dict(trainer.get("resourcesPerNode"))
        set_resource(resources, name, value(s))
        put_path(trainer, ["resourcesPerNode"], resources)
    return write


def _write_command(m: dict, s: TrainJobSpec) -> None:
    trainer = _trainer(m)
    trainer.pop("args", None)
    put_path(trainer, ["command"], list(s.command))


def _put(path: list[str], value: Callable[[TrainJobSpec], object]):
    def write(m: dict, s: TrainJobSpec) -> None:
        put_path(m, path, value(s))
    return write


def _put_trainer(key: str, value: Callable[[TrainJobSpec], object]):
    def write(m: dict, s: TrainJobSpec) -> None:
        put_path(_trainer(m), [key], value(s))
    return write


def _put_override(key: str, value: Callable[[TrainJobSpec], object]):
    def write(m: dict, s: TrainJobSpec) -> None:
        _write_override(m, key, value(s))
    return write


# (what the setting is, how to write it): written onto a base only when it changed
_WRITERS: list[tuple[Callable[[TrainJobSpec], object], Callable[[dict, TrainJobSpec], None]]] = [
    (lambda s: s.name, _put(["metadata", "name"], lambda s: s.name)),
    (lambda s: s.namespace, _put(["metadata", "namespace"], lambda s: s.namespace)),
    (lambda s: s.labels, lambda m, s: write_metadata_map(m, "labels", s.labels, QUEUE_LABEL,
                                                         PRIORITY_LABEL)),
    (lambda s: s.queue_name,
     _put(["metadata", "labels", QUEUE_LABEL], lambda s: s.queue_name)),
    (lambda s: s.queue_priority,
     _put(["metadata", "labels", PRIORITY_LABEL], lambda s: s.queue_priority)),
    (lambda s: s.annotations, lambda m, s: write_metadata_map(m, "annotations", s.annotations,
                                                              CREATED_BY_ANNOTATION,
                                                              DESCRIPTION_ANNOTATION)),
    (lambda s: s.created_by,
     _put(["metadata", "annotations", CREATED_BY_ANNOTATION], lambda s: s.created_by)),
    (lambda s: s.description,
     _put(["metadata", "annotations", DESCRIPTION_ANNOTATION], lambda s: s.description)),
    (lambda s: s.runtime, _put(["spec", "runtimeRef", "name"], lambda s: s.runtime)),
    (lambda s: s.runtime_kind, _put(["spec", "runtimeRef", "kind"], lambda s: s.runtime_kind)),
    (lambda s: s.image, _put_trainer("image", lambda s: s.image)),
    (lambda s: s.command, _write_command),
    (lambda s: s.env, _put_trainer("env", lambda s: [e.to_manifest() for e in s.env])),
    (lambda s: s.workers, _put_trainer("numNodes", lambda s: s.workers)),
    (lambda s: s.slots_per_worker, _put_trainer("numProcPerNode", lambda s: s.slots_per_worker)),
    (lambda s: s.cpu_per_worker, _write_resource("cpu", lambda s: s.cpu_per_worker)),
    (lambda s: s.memory_per_worker, _write_resource("memory", lambda s: s.memory_per_worker)),
    (lambda s: s.gpus_per_worker,
     _write_resource(GPU_RESOURCE, lambda s: s.gpus_per_worker or None)),
    (lambda s: s.volumes, _write_volumes),
    (lambda s: s.node_selector, _put_override("nodeSelector", lambda s: dict(s.node_selector))),
    (lambda s: s.tolerations,
     _put_override("tolerations", lambda s: [t.to_manifest() for t in s.tolerations])),
    (lambda s: s.image_pull_secret,
     _put_override("imagePullSecrets", lambda s: [{"name": s.image_pull_secret}]
                   if s.image_pull_secret else None)),
]


def _generate(spec: TrainJobSpec) -> dict:
    manifest: dict = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {},
                      "spec": {"runtimeRef": {"name": spec.runtime, "apiGroup": GROUP,
                                              "kind": spec.runtime_kind},
                               "trainer": {}}}
    for _setting, write in _WRITERS:
        write(manifest, spec)
    # numNodes is always said, even at the Trainer's default of 1
    _trainer(manifest)["numNodes"] = spec.workers
    return manifest


def build_manifest(spec: TrainJobSpec) -> dict:
    """The trainer.kubeflow.org/v1alpha1 TrainJob for a spec: without a base, a complete
    manifest (resourcesPerNode requests = limits); with one, a copy of it with only the
    changed settings rewritten."""
    if spec.base is None:
        return _generate(spec)
    return rebuild(spec, _WRITERS, read_manifest)


def clone_spec(spec: TrainJobSpec, new_name: str) -> TrainJobSpec:
    """A copy under a new name, ready to create: server-written state is dropped from the
    base, the clone is not created suspended, and its creator is whoever submits it."""
    return cloned(spec, new_name, ["spec", "suspend"])
