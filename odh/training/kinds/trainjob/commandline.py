"""How `odh training create trainjob` speaks of a TrainJob (odh.training.kinds.commandline):
its runtime's flags, its nodes named as upstream names them (--nodes, --procs-per-node,
--cpu, --memory, --gpus), and where each field sits in a TrainJob manifest."""

from __future__ import annotations

from odh.training.i18n import gettext_lazy
from odh.training.kinds.commandline import METADATA_FIELDS, CommandLine, KindFlag
from odh.training.kinds.trainjob.model import RUNTIME_KINDS

_TRAINER = "spec.trainer"

COMMAND_LINE = CommandLine(
    missing=gettext_lazy(
        "Missing %(what)s: e.g. odh training create trainjob pi --runtime "
        "mpi-distributed --nodes 2 --gpus 1 --image quay.io/team/pi:1.0"),
    own_flags=(
        KindFlag("--runtime", "runtime", gettext_lazy(
            "TrainJob: the runtime it runs on, e.g. mpi-distributed or "
            "torch-distributed (odh training list runtimes)")),
        KindFlag("--runtime-kind", "runtime_kind", gettext_lazy(
            "TrainJob: the runtime's kind (default: "
            "ClusterTrainingRuntime, the cluster's)"), choices=RUNTIME_KINDS),
        KindFlag("--procs-per-node", "slots_per_worker", gettext_lazy(
            "TrainJob: processes per node (numProcPerNode; default: the "
            "runtime's)"), whole_number=True),
    ),
    not_for_others=gettext_lazy("%(flags)s: a TrainJob's (odh training create trainjob ...); "
                                "an %(kind)s has no runtime."),
    flags=(("workers", "--nodes"), ("cpu_per_worker", "--cpu"),
           ("memory_per_worker", "--memory"), ("gpus_per_worker", "--gpus")),
    manifest_fields=METADATA_FIELDS + (
        ("image", _TRAINER + ".image"), ("command", _TRAINER + ".command"),
        ("env", _TRAINER + ".env"), ("workers", _TRAINER + ".numNodes"),
        ("slots_per_worker", _TRAINER + ".numProcPerNode"),
        ("cpu_per_worker", _TRAINER + ".resourcesPerNode (cpu)"),
        ("memory_per_worker", _TRAINER + ".resourcesPerNode (memory)"),
        ("gpus_per_worker", _TRAINER + ".resourcesPerNode (nvidia.com/gpu)"),
        ("runtime", "spec.runtimeRef.name"), ("runtime_kind", "spec.runtimeRef.kind"),
        ("volumes", "spec.podSpecOverrides (volumes)"),
        ("node_selector", "spec.podSpecOverrides (nodeSelector)"),
        ("tolerations", "spec.podSpecOverrides (tolerations)"),
    ),
    needs_command=False,
)
