"""The TrainJob's own rules: its runtime reference, its nodes, and the settings a TrainJob
leaves to its runtime (the Launcher's size, a PriorityClass). validation.py runs them with
the shared rules, asked through the kind (`SpecModel.rules`); the shared rules' findings on
the fields named in `OWN_FIELDS` are left to these. What needs the cluster (does the runtime
exist, does it run MPI) is `runtimes.check_runtime`, run by the preflight."""

from __future__ import annotations

import re
from collections.abc import Iterator

from odh.training.findings import FieldError, ValidationContext
from odh.training.i18n import _, shown
from odh.training.kinds.trainjob.model import RUNTIME_KINDS, TrainJobSpec

MAX_NODES = 2**31 - 1
# a runtime's name: a DNS-1123 subdomain
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# the shared rules' findings on these are replaced by this module's
OWN_FIELDS = frozenset({"workers", "command", "launcher_cpu", "launcher_memory",
                        "priority_class"})


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_runtime(spec: TrainJobSpec, context: ValidationContext) -> Iterator[FieldError]:
    name = spec.runtime if isinstance(spec.runtime, str) else ""
    if not name:
        yield FieldError("runtime", _('Choose the runtime the TrainJob runs on, for example '
                                      '"mpi-distributed" or "torch-distributed" (odh training '
                                      "list runtimes shows them)."))
    elif len(name) > 253 or _SUBDOMAIN.fullmatch(name) is None:
        yield FieldError("runtime", _('Runtime "%(name)s" is not a valid name: runtimes are '
                                      "named with lower-case letters, digits, \"-\" and \".\".")
                         % {"name": shown(name)})
    if spec.runtime_kind not in RUNTIME_KINDS:
        yield FieldError("runtime_kind", _('Runtime kind "%(value)s" is not supported: choose '
                                           "ClusterTrainingRuntime (the cluster's runtimes) or "
                                           "TrainingRuntime (the project's).")
                         % {"value": shown(spec.runtime_kind)})


def check_nodes(spec: TrainJobSpec, context: ValidationContext) -> Iterator[FieldError]:
    nodes = spec.workers
    if not _whole(nodes) or not 1 <= nodes <= MAX_NODES:
        yield FieldError("workers", _("A TrainJob needs at least 1 node: set the number of "
                                      "nodes (numNodes) to a whole number of 1 or more (you "
                                      "entered %(value)s).") % {"value": shown(nodes)})


def check_command(spec: TrainJobSpec, context: ValidationContext) -> Iterator[FieldError]:
    command = spec.command if isinstance(spec.command, list) else []
    if command and not str(command[0]).strip():
        yield FieldError("command", _("The command starts with an empty word: give the program "
                                      "first, or leave the command out to run the runtime's."))


def check_left_to_runtime(spec: TrainJobSpec, context: ValidationContext
                          ) -> Iterator[FieldError]:
    for field in ("launcher_cpu", "launcher_memory"):
        if getattr(spec, field):
            yield FieldError(field, _("A TrainJob's runtime sizes its launcher: leave the "
                                      "Launcher's CPUs and memory empty and set the nodes' "
                                      "resources (resourcesPerNode)."))
    if spec.priority_class:
        yield FieldError("priority_class", _(
            "A TrainJob takes its pods' PriorityClass from its runtime: leave it empty, or "
            "give a Kueue priority (queue_priority) instead."))


RULES = (check_runtime, check_nodes, check_command, check_left_to_runtime)
