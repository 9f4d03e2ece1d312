"""The Trainer's runtimes as the wizard offers them: the select of the Configuration step
(the cluster's ClusterTrainingRuntimes, then the project's TrainingRuntimes, each with its
framework and description), and the runtime a draft chose (whether it runs MPI decides
whether the Resources step asks for an MPI implementation). Read with the person's token
(`odh.training.kinds.read_runtimes`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.kinds import JobKind, Runtime, read_runtimes
from training.wizard.formfields import kind_fields, read_runtime, runtime_value

log = logging.getLogger("training.wizard")


@dataclass
class RuntimeChoices:
    runtimes: list[Runtime] = field(default_factory=list)
    # a sentence when they could not be read, saying what to do
    problem: str = ""
    # False: the cluster's runtimes could not be listed, only those in use are shown
    cluster_listed: bool = True

    def choices(self) -> list[tuple[str, str]]:
        return [(runtime_value(r.kind, r.name), label(r)) for r in self.runtimes]

    def chosen(self, value: str) -> Runtime | None:
        kind, name = read_runtime(value)
        return next((r for r in self.runtimes if r.name == name and (r.kind == kind or not kind)),
                    None)


def label(runtime: Runtime) -> str:
    """"mpi-distributed (mpi, the cluster's)": the select's words for a runtime."""
    values = {"name": runtime.name, "framework": runtime.framework or _("framework unknown")}
    if runtime.kind == "TrainingRuntime":
        return _("%(name)s (%(framework)s, this project's)") % values
    return _("%(name)s (%(framework)s, the cluster's)") % values


def asks_for_runtime(kind: JobKind) -> bool:
    return "runtime" in kind_fields(kind)


def runtime_choices(client: ClusterClient, namespace: str, kind: JobKind) -> RuntimeChoices:
    """The runtimes a draft of `kind` in `namespace` may choose (none for a kind without
    runtimes)."""
    if not asks_for_runtime(kind) or not namespace:
        return RuntimeChoices()
    try:
        found = read_runtimes(client, namespace)
    except errors.NotServed:
        return RuntimeChoices()  # said at the field, as the create path says it
    except errors.ClusterError as e:
        log.info("cannot read the runtimes of %s: %s", namespace, e.message)
        return RuntimeChoices(problem=_(
            "The runtimes could not be read just now (%(message)s): reload the page in a "
            "moment; what you typed is kept.") % {"message": e.message})
    return RuntimeChoices(runtimes=found.items, cluster_listed=found.cluster_listed)
