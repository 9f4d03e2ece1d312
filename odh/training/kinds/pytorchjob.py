"""The PyTorchJob (`kubeflow.org/v1`, the Training Operator): a Master and Workers. Listed,
watched and diagnosed here; created with kubectl or the Kubeflow SDK."""

from __future__ import annotations

from odh.training.kinds.base import JobKind

PYTORCHJOB = JobKind(
    slug="pytorchjob", kind="PyTorchJob", group="kubeflow.org", version="v1",
    plural="pytorchjobs", replica_specs_field="pytorchReplicaSpecs", label="PyTorchJob",
    operator_name="pytorchjob-controller", roles=("Master", "Worker"),
)
