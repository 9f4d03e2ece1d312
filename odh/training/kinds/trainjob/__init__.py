"""The TrainJob kind: what it is (kind.py), the spec people fill in (model.py), the
trainer.kubeflow.org/v1alpha1 manifest built from it and read back (manifest.py), its own
rules (rules.py), the runtimes it runs on (runtimes.py) and how the command line speaks of
it (commandline.py).

Created by the wizard (its runtime chosen on the Configuration step, its nodes on
Resources), its clones, retries and imports, the SDK and the CLI: all through the one
create path."""

from __future__ import annotations

from odh.training.kinds.base import JOBSET_NAME_LABEL
from odh.training.kinds.jobspec import SpecModel
from odh.training.kinds.trainjob.commandline import COMMAND_LINE
from odh.training.kinds.trainjob.kind import GROUP, KIND, VERSION, TrainJobKind
from odh.training.kinds.trainjob.manifest import build_manifest, clone_spec, read_manifest
from odh.training.kinds.trainjob.model import TrainJobSpec
from odh.training.kinds.trainjob.rules import OWN_FIELDS, RULES
from odh.training.kinds.trainjob.runtimes import check_runtime

__all__ = ["TRAINJOB", "TrainJobSpec"]

TRAINJOB = TrainJobKind(
    slug="trainjob", kind=KIND, group=GROUP, version=VERSION, plural="trainjobs",
    label="TrainJob", roles=("Launcher", "Worker"), role_words=(("Worker", "Node"),),
    pod_job_label=JOBSET_NAME_LABEL,
    suspend_path=("suspend",), wizard_ready=True, counts_nodes=True,
    sdk_class="TrainJob",
    spec_model=SpecModel(TrainJobSpec, build_manifest, read_manifest, clone_spec, RULES,
                         own_fields=OWN_FIELDS, sizes_launcher=False,
                         cluster_rules=(check_runtime,),
                         unset_fields=frozenset({"launcher_cpu", "launcher_memory",
                                                 "priority_class"}),
                         command_line=COMMAND_LINE),
)
TrainJobSpec.kind = TRAINJOB
