"""The Python program that creates the same TrainJob through the SDK's `TrainJob` class
(the wizard's "SDK code" for a TrainJob): its constructor's arguments, named as the SDK
names them (num_nodes, resources_per_node, num_proc_per_node, queue, priority), only those
that differ from its defaults. A TrainJob with settings the constructor does not take
(tolerations, an image pull secret, a manifest's own fields) is written as its spec and
made with `TrainJob.from_spec`, so the program creates exactly what the wizard would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from odh.training.spec import JobSpec

INDENT = "    "
# the spec's attribute -> the constructor's argument
_ARGUMENTS = {"namespace": "namespace", "runtime": "runtime", "workers": "num_nodes",
              "image": "image", "command": "command", "slots_per_worker": "num_proc_per_node",
              "env": "env", "volumes": "volumes", "node_selector": "node_selector",
              "queue_name": "queue", "runtime_kind": "runtime_kind",
              "mpi_implementation": "mpi_implementation", "queue_priority": "priority",
              "labels": "labels", "annotations": "annotations"}
_RESOURCES = {"cpu_per_worker": "cpu", "memory_per_worker": "memory", "gpus_per_worker": "gpus"}
# what the dashboard records itself, not a setting of the program
_RECORDED = ("name", "created_by")
# the SDK classes whose constructor is written (`JobKind.sdk_class`)
CONSTRUCTORS = {"TrainJob": _ARGUMENTS}


def class_code(spec: JobSpec, changed: dict[str, Any], base_needed: bool,
               literal: Callable[..., str], generic: Callable[[], str]) -> str:
    """The program for a TrainJob spec: `changed` are its settings that differ from the
    spec's defaults; `generic` writes the spec itself (for settings the constructor
    does not take)."""
    settings = {k: v for k, v in changed.items() if k not in _RECORDED}
    if base_needed or set(settings) - set(_ARGUMENTS) - set(_RESOURCES):
        return generic()
    title = f"{spec.namespace}/{spec.name}" if spec.namespace else spec.name
    env = settings.get("env")
    plain_env = env is not None and all(e.value_from is None for e in env)
    names = ["TrainJob"]
    if env and not plain_env:
        names.append("EnvVar")
    if settings.get("volumes"):
        names.append("PVCVolume")
    lines = [f'"""Create the TrainJob {_clean(title)} with the training SDK."""', "",
             f"from odh.training import {', '.join(sorted(names))}", "", "job = TrainJob(",
             f"{INDENT}{literal(spec.name, 1)},"]
    resources = {word: settings[attr] for attr, word in _RESOURCES.items() if attr in settings}
    for attr, argument in _ARGUMENTS.items():
        if attr not in settings:
            continue
        value = settings[attr]
        if attr == "env" and plain_env:
            value = {e.name: e.value for e in value}
        head = f"{argument}="
        lines.append(f"{INDENT}{head}{literal(value, 1, head)},")
        if attr == "workers" and resources:
            head = "resources_per_node="
            lines.append(f"{INDENT}{head}{literal(resources, 1, head)},")
    if resources and "workers" not in settings:
        head = "resources_per_node="
        lines.append(f"{INDENT}{head}{literal(resources, 1, head)},")
    lines += [")", "job.create()", 'print("Created TrainJob", job.namespace + "/" + job.name)',
              ""]
    return "\n".join(lines)


def _clean(text: str) -> str:
    cleaned = "".join(ch for ch in text if ch.isprintable() and ch not in '"\\')
    return cleaned[:60] or "job"
