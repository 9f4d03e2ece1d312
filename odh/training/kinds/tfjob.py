"""The TFJob (`kubeflow.org/v1`, the Training Operator): Master or Chief, parameter servers,
Workers and an Evaluator. Listed, watched and diagnosed here; created elsewhere."""

from __future__ import annotations

from odh.training.kinds.base import JobKind

TFJOB = JobKind(
    slug="tfjob", kind="TFJob", group="kubeflow.org", version="v1", plural="tfjobs",
    replica_specs_field="tfReplicaSpecs", label="TFJob", operator_name="tfjob-controller",
    roles=("Master", "Chief", "PS", "Worker", "Evaluator"),
)
