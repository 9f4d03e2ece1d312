"""The TrainJob kind: what it is (kind.py), the spec people fill in (model.py), the
trainer.kubeflow.org/v1alpha1 manifest built from it and read back (manifest.py), its own
rules (rules.py) and the runtimes it runs on (runtimes.py).

Created by the SDK, the CLI and a manifest import; not by the wizard, whose steps ask the
MPIJob's questions (`wizard_ready` False: a TrainJob's pages offer no wizard clone, retry or
fix, and the wizard never opens one)."""

from __future__ import annotations

from odh.training.kinds.base import JOBSET_NAME_LABEL
from odh.training.kinds.jobspec import SpecModel
from odh.training.kinds.trainjob.kind import GROUP, KIND, VERSION, TrainJobKind
from odh.training.kinds.trainjob.manifest import build_manifest, clone_spec, read_manifest
from odh.training.kinds.trainjob.model import TrainJobSpec
from odh.training.kinds.trainjob.rules import OWN_FIELDS, RULES
from odh.training.kinds.trainjob.runtimes import check_runtime

__all__ = ["TRAINJOB", "TrainJobSpec"]

TRAINJOB = TrainJobKind(
    slug="trainjob", kind=KIND, group=GROUP, version=VERSION, plural="trainjobs",
    label="TrainJob", roles=("Launcher", "Worker"), pod_job_label=JOBSET_NAME_LABEL,
    suspend_path=("suspend",),
    spec_model=SpecModel(TrainJobSpec, build_manifest, read_manifest, clone_spec, RULES,
                         own_fields=OWN_FIELDS, sizes_launcher=False,
                         cluster_rules=(check_runtime,)),
)
TrainJobSpec.kind = TRAINJOB
