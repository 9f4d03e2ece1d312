"""The TrainJob spec model: a TrainJob as a person describes it, in the fields every kind's
spec has (`JobSpec`) and its own two: the runtime it runs on and that runtime's kind.

The shared fields map onto `spec.trainer`: `workers` is numNodes, `slots_per_worker`
numProcPerNode (None: the runtime's), the per-Worker CPU, memory and GPUs its
resourcesPerNode. A TrainJob sizes no Launcher of its own (the runtime's template does), so
`launcher_cpu` and `launcher_memory` stay "". `command` may be empty: the runtime's
container then runs its own command.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from odh.training.kinds.base import JobKind
from odh.training.kinds.jobspec import EnvVar, PVCVolume, Toleration
from odh.training.kinds.manifestparts import lift_metadata

CLUSTER_RUNTIME, NAMESPACED_RUNTIME = "ClusterTrainingRuntime", "TrainingRuntime"
RUNTIME_KINDS = (CLUSTER_RUNTIME, NAMESPACED_RUNTIME)
DEFAULT_RUNTIME = "mpi-distributed"
# the replicated job of a runtime's JobSet that runs the nodes (upstream's name)
NODE = "node"


@dataclass
class TrainJobSpec:
    """A TrainJob as a person describes it (see the module's docstring for the mapping).

    Resource strings are Kubernetes quantities; "" means "not set". `base` is the manifest
    the spec was read from (provenance, not part of equality).
    """

    kind: ClassVar[JobKind]  # bound to TRAINJOB where the kind is made (its __init__.py)

    name: str = ""
    namespace: str = ""
    runtime: str = DEFAULT_RUNTIME
    runtime_kind: str = CLUSTER_RUNTIME
    image: str = ""
    command: list[str] = field(default_factory=list)
    workers: int = 1
    cpu_per_worker: str = ""
    memory_per_worker: str = ""
    gpus_per_worker: int = 0
    slots_per_worker: int | None = None
    env: list[EnvVar] = field(default_factory=list)
    volumes: list[PVCVolume] = field(default_factory=list)
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[Toleration] = field(default_factory=list)
    queue_name: str = ""
    queue_priority: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    created_by: str = ""
    # what the job is for (the annotation opendatahub.io/description)
    description: str = ""
    image_pull_secret: str = ""
    # what a TrainJob does not set itself (the runtime does): kept for the shared readers
    launcher_cpu: str = ""
    launcher_memory: str = ""
    priority_class: str = ""
    # the MPI implementation the job needs ("": any, or no MPI): not part of the manifest
    # (the runtime's mlPolicy says it), checked against the runtime when it is created
    mpi_implementation: str = field(default="", compare=False)
    base: dict | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("cpu_per_worker", "memory_per_worker"):
            value = getattr(self, name)
            if not isinstance(value, str):
                setattr(self, name, "" if value is None else str(value))
        lift_metadata(self)

    @property
    def default_slots(self) -> int:
        """The processes per node when numProcPerNode is left to the runtime (as the
        runtimes' own defaults do: one per GPU, else 1)."""
        return self.gpus_per_worker if isinstance(self.gpus_per_worker, int) \
            and self.gpus_per_worker > 0 else 1

    @property
    def effective_slots(self) -> int:
        return self.default_slots if self.slots_per_worker is None else self.slots_per_worker
