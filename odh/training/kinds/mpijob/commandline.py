"""How `odh training create mpijob` speaks of an MPIJob (odh.training.kinds.commandline):
the command line's own flags, and where each field sits in an MPIJob manifest."""

from __future__ import annotations

from odh.training.i18n import gettext_lazy
from odh.training.kinds.commandline import METADATA_FIELDS, CommandLine

_WORKER = "spec.mpiReplicaSpecs.Worker"
_LAUNCHER = "spec.mpiReplicaSpecs.Launcher"
_CONTAINER = ".template.spec.containers[0]"

COMMAND_LINE = CommandLine(
    needs_command=False,  # no command: the Launcher runs its image's entrypoint
    missing=gettext_lazy(
        "Missing %(what)s: e.g. odh training create mpijob bert --image "
        "quay.io/team/bert:1.0 --workers 2 --command \"horovodrun -np 2 python "
        "train.py\""),
    manifest_fields=METADATA_FIELDS + (
        ("image", _LAUNCHER + _CONTAINER + ".image"),
        ("worker_image", _WORKER + _CONTAINER + ".image"),
        ("command", _LAUNCHER + _CONTAINER + ".command"),
        ("working_dir", _LAUNCHER + _CONTAINER + ".workingDir"),
        ("workers", _WORKER + ".replicas"),
        ("cpu_per_worker", _WORKER + _CONTAINER + ".resources (cpu)"),
        ("memory_per_worker", _WORKER + _CONTAINER + ".resources (memory)"),
        ("gpus_per_worker", _WORKER + _CONTAINER + ".resources (nvidia.com/gpu)"),
        ("launcher_cpu", _LAUNCHER + _CONTAINER + ".resources (cpu)"),
        ("launcher_memory", _LAUNCHER + _CONTAINER + ".resources (memory)"),
        ("slots_per_worker", "spec.slotsPerWorker"),
        ("mpi_implementation", "spec.mpiImplementation"),
        ("env", _LAUNCHER + _CONTAINER + ".env"),
        ("env_from", _LAUNCHER + _CONTAINER + ".envFrom"),
        ("volumes", _WORKER + ".template.spec.volumes"),
        ("source_volumes", _WORKER + ".template.spec.volumes"),
        ("node_affinity", _WORKER + ".template.spec.affinity.nodeAffinity"),
        ("node_selector", _WORKER + ".template.spec.nodeSelector"),
        ("tolerations", _WORKER + ".template.spec.tolerations"),
        ("priority_class", _WORKER + ".template.spec.priorityClassName"),
        ("clean_pod_policy", "spec.runPolicy.cleanPodPolicy"),
        ("ttl_seconds_after_finished", "spec.runPolicy.ttlSecondsAfterFinished"),
        ("backoff_limit", "spec.runPolicy.backoffLimit"),
        ("launcher_creation_policy", "spec.launcherCreationPolicy"),
    ),
)
