"""The MPIJob kind: what it is (kind.py), the spec people fill in (model.py), the
kubeflow.org/v2beta1 manifest built from it and read back (manifest.py) and how the
command line speaks of it (commandline.py)."""

from __future__ import annotations

from odh.training.kinds.jobspec import SpecModel
from odh.training.kinds.mpijob.commandline import COMMAND_LINE
from odh.training.kinds.mpijob.kind import GROUP, KIND, VERSION, MPIJobKind
from odh.training.kinds.mpijob.manifest import build_manifest, clone_spec, read_manifest
from odh.training.kinds.mpijob.model import MPIJobSpec
from odh.training.kinds.mpijob.rules import RULES

__all__ = ["MPIJOB", "MPIJobSpec"]

MPIJOB = MPIJobKind(
    slug="mpijob", kind=KIND, group=GROUP, version=VERSION, plural="mpijobs",
    replica_specs_field="mpiReplicaSpecs", label="MPIJob", operator_name="mpi-operator",
    roles=("Launcher", "Worker"), runs_mpirun=True, wizard_ready=True,
    spec_model=SpecModel(MPIJobSpec, build_manifest, read_manifest, clone_spec, RULES,
                         command_line=COMMAND_LINE),
)
# The spec names its kind (what creates, lists and audits it ask); the kind is made here,
# after the spec class it carries.
MPIJobSpec.kind = MPIJOB
