"""The MPIJob spec model: an MPIJob as a person describes it, free of manifest layout.

`odh.training.kinds.mpijob.manifest` builds the kubeflow.org/v2beta1 manifest from an
`MPIJobSpec` and reads one back; `odh.training.spec` offers both under one name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from odh.training.kinds.base import JobKind
from odh.training.kinds.jobspec import (
    EnvSource,
    EnvVar,
    NodeRequirement,
    PVCVolume,
    SourceVolume,
    Toleration,
)
from odh.training.kinds.manifestparts import lift_metadata

LAUNCHER, WORKER = "Launcher", "Worker"
ROLES = (LAUNCHER, WORKER)
MPI_IMPLEMENTATIONS = ("OpenMPI", "Intel", "MPICH")
CLEAN_POD_POLICIES = ("Running", "All", "None")
LAUNCHER_CREATION_POLICIES = ("AtStartup", "WaitForWorkersReady")


@dataclass
class MPIJobSpec:
    """An MPIJob as a person describes it.

    Resource strings are Kubernetes quantities; "" means "not set" (no request or limit).
    `slots_per_worker` None means the default: GPUs per worker, or 1. `worker_image` ""
    means the Workers run `image` too. `base` is provenance, not part of equality.
    """

    # the kind this spec describes: what creates, lists and audits it ask
    kind: ClassVar[JobKind]  # bound to MPIJOB where the kind is made (kinds/mpijob/__init__.py)

    name: str = ""
    namespace: str = ""
    image: str = ""
    command: list[str] = field(default_factory=list)
    workers: int = 1
    cpu_per_worker: str = "1"
    memory_per_worker: str = "2Gi"
    gpus_per_worker: int = 0
    launcher_cpu: str = "1"
    launcher_memory: str = "2Gi"
    slots_per_worker: int | None = None
    mpi_implementation: str = "OpenMPI"
    env: list[EnvVar] = field(default_factory=list)
    volumes: list[PVCVolume] = field(default_factory=list)
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[Toleration] = field(default_factory=list)
    priority_class: str = ""
    queue_name: str = ""
    queue_priority: str = ""  # a Kueue WorkloadPriorityClass (label kueue.x-k8s.io/priority-class)
    clean_pod_policy: str = "Running"
    ttl_seconds_after_finished: int | None = None
    backoff_limit: int | None = None
    launcher_creation_policy: str = "AtStartup"
    disable_sidecar_injection: bool = True
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    created_by: str = ""
    # what the job is for (the annotation opendatahub.io/description)
    description: str = ""
    worker_image: str = ""
    # a kubernetes.io/dockerconfigjson Secret of the project the pods pull their images with
    image_pull_secret: str = ""
    # the containers' working directory ("": the image's WORKDIR)
    working_dir: str = ""
    # Secrets and ConfigMaps whose every key is an environment variable (envFrom)
    env_from: list[EnvSource] = field(default_factory=list)
    # Secrets and ConfigMaps mounted as files
    source_volumes: list[SourceVolume] = field(default_factory=list)
    # node labels the pods require (node affinity, beside the node selector)
    node_affinity: list[NodeRequirement] = field(default_factory=list)
    base: dict | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Spellings that build the same manifest are made equal, so a spec survives a
        # round trip through its manifest unchanged.
        for name in ("cpu_per_worker", "memory_per_worker", "launcher_cpu", "launcher_memory"):
            value = getattr(self, name)
            if not isinstance(value, str):
                setattr(self, name, "" if value is None else str(value))
        if self.slots_per_worker is not None and self.slots_per_worker == self.default_slots:
            self.slots_per_worker = None
        if self.worker_image == self.image:
            self.worker_image = ""
        lift_metadata(self)

    @property
    def default_slots(self) -> int:
        return self.gpus_per_worker if self.gpus_per_worker > 0 else 1

    @property
    def effective_slots(self) -> int:
        return self.default_slots if self.slots_per_worker is None else self.slots_per_worker

    @property
    def effective_worker_image(self) -> str:
        return self.worker_image or self.image
