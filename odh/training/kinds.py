"""The training job kinds the dashboard lists, and how to recognise them."""

from __future__ import annotations

from dataclasses import dataclass

# Who created a job, as the OpenShift AI dashboard records it on the object.
CREATED_BY_ANNOTATION = "opendatahub.io/username"
# The Kueue LocalQueue a job is submitted to.
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"  # a Kueue WorkloadPriorityClass


@dataclass(frozen=True)
class JobKind:
    slug: str
    kind: str
    group: str
    version: str
    plural: str
    replica_specs_field: str
    label: str
    # Value of the training.kubeflow.org/operator-name label on this kind's pods; a pod with
    # another value belongs to a same-named job of another kind.
    operator_name: str = ""
    # Replica types in the order the detail page lists them.
    roles: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


MPIJOB = JobKind(
    slug="mpijob", kind="MPIJob", group="kubeflow.org", version="v2beta1", plural="mpijobs",
    replica_specs_field="mpiReplicaSpecs", label="MPIJob", operator_name="mpi-operator",
    roles=("Launcher", "Worker"),
)
PYTORCHJOB = JobKind(
    slug="pytorchjob", kind="PyTorchJob", group="kubeflow.org", version="v1",
    plural="pytorchjobs", replica_specs_field="pytorchReplicaSpecs", label="PyTorchJob",
    operator_name="pytorchjob-controller", roles=("Master", "Worker"),
)
TFJOB = JobKind(
    slug="tfjob", kind="TFJob", group="kubeflow.org", version="v1", plural="tfjobs",
    replica_specs_field="tfReplicaSpecs", label="TFJob", operator_name="tfjob-controller",
    roles=("Master", "Chief", "PS", "Worker", "Evaluator"),
)
TRAINJOB = JobKind(
    slug="trainjob", kind="TrainJob", group="trainer.kubeflow.org", version="v1alpha1",
    plural="trainjobs", replica_specs_field="", label="TrainJob",
    roles=("Launcher", "Worker"),
)

KINDS: dict[str, JobKind] = {k.slug: k for k in (MPIJOB, PYTORCHJOB, TFJOB, TRAINJOB)}


def kind_for_slug(slug: str) -> JobKind:
    """The kind for a URL slug such as "mpijob"; KeyError for anything else."""
    return KINDS[slug]


def kind_for_object(obj: dict) -> JobKind | None:
    """The kind of a job object by its apiVersion and kind, or None if it is not one of ours."""
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    for candidate in KINDS.values():
        if candidate.api_version == api_version and candidate.kind == kind:
            return candidate
    return None
