"""The Trainer's runtimes a TrainJob runs on, as a person may see them: the cluster's
ClusterTrainingRuntimes and the project's TrainingRuntimes, each with its framework (the
`trainer.kubeflow.org/framework` label, else its mlPolicy: mpi, torch...) and description
(the `description` or `openshift.io/description` annotation).

Someone who may not list the ClusterTrainingRuntimes (403) still sees the runtimes they may
use: the project's TrainingRuntimes, and the ClusterTrainingRuntimes the project's
TrainJobs run on (each read by name where a get is allowed, else known by its name
alone); `Runtimes.cluster_listed` says the list is partial.

`check_runtime` is the create path's check of a TrainJob against its runtime (run by the
preflight through `SpecModel.cluster_rules`): a runtime that is not there, MPI asked of a
runtime that does not run MPI, and a cluster without the Trainer's API (`errors.NotServed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from odh.training import errors
from odh.training.findings import FieldError
from odh.training.i18n import _
from odh.training.kinds.trainjob.kind import GROUP, VERSION
from odh.training.kinds.trainjob.model import CLUSTER_RUNTIME, NAMESPACED_RUNTIME, TrainJobSpec
from odh.training.paths import as_dict, get_path

if TYPE_CHECKING:
    from odh.training.cluster.client import ClusterClient

FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
DESCRIPTION_ANNOTATIONS = ("description", "openshift.io/description")
PLURALS = {CLUSTER_RUNTIME: "clustertrainingruntimes", NAMESPACED_RUNTIME: "trainingruntimes"}
# the mlPolicy's sources of a framework, in the order upstream's plugins look
_POLICIES = ("mpi", "torch", "flux")


@dataclass(frozen=True)
class Runtime:
    name: str
    kind: str  # ClusterTrainingRuntime or TrainingRuntime
    framework: str = ""  # "mpi", "torch", "deepspeed"...; "" when unknown
    description: str = ""
    num_nodes: int | None = None  # mlPolicy.numNodes, the default of its TrainJobs
    mpi_implementation: str = ""  # for an MPI runtime: OpenMPI, Intel, MPICH
    readable: bool = True  # False: known by name only (may not be read)

    @property
    def runs_mpi(self) -> bool:
        return bool(self.mpi_implementation)


@dataclass
class Runtimes:
    items: list[Runtime] = field(default_factory=list)
    # False: the ClusterTrainingRuntimes could not be listed (403); `items` holds those the
    # project's TrainJobs use
    cluster_listed: bool = True


def runtime_of(obj: dict, kind: str) -> Runtime:
    """A runtime object as the cluster returns it, read."""
    meta = as_dict(obj.get("metadata"))
    policy = as_dict(get_path(obj, ["spec", "mlPolicy"]))
    framework = str(as_dict(meta.get("labels")).get(FRAMEWORK_LABEL) or "")
    if not framework:
        framework = next((p for p in _POLICIES if isinstance(policy.get(p), dict)), "")
    annotations = as_dict(meta.get("annotations"))
    description = next((str(annotations[a]) for a in DESCRIPTION_ANNOTATIONS
                        if annotations.get(a)), "")
    mpi = policy.get("mpi")
    nodes = policy.get("numNodes")
    return Runtime(
        name=str(meta.get("name", "")), kind=kind, framework=framework,
        description=description,
        num_nodes=nodes if isinstance(nodes, int) and not isinstance(nodes, bool) else None,
        mpi_implementation=str(as_dict(mpi).get("mpiImplementation") or "OpenMPI")
        if isinstance(mpi, dict) else "")


def _trainer_missing() -> errors.NotServed:
    return errors.NotServed(_(
        "This cluster does not serve the Kubeflow Trainer API (trainer.kubeflow.org/v1alpha1), "
        "so it cannot run TrainJobs: ask your cluster administrator to install Kubeflow "
        "Trainer, or create an MPIJob instead (odh training create mpijob ...)."), status=404)


def _get(client: ClusterClient, kind: str, name: str, namespace: str) -> dict:
    scope = namespace if kind == NAMESPACED_RUNTIME else ""
    return client.get_custom(GROUP, VERSION, PLURALS[kind], name, scope)


def _used_by_trainjobs(client: ClusterClient, namespace: str, plural: str) -> list[str]:
    try:
        jobs = client.list_custom(GROUP, VERSION, plural, namespace)
    except errors.Forbidden:
        return []
    return sorted({str(get_path(j, ["spec", "runtimeRef", "name"]) or "") for j in jobs
                   if (get_path(j, ["spec", "runtimeRef", "kind"]) or CLUSTER_RUNTIME)
                   == CLUSTER_RUNTIME} - {""})


def read_runtimes(client: ClusterClient, namespace: str, trainjobs: str = "trainjobs"
                  ) -> Runtimes:
    """The runtimes a person may run TrainJobs of `namespace` on (see the module's
    docstring); NotServed when the cluster has no Trainer."""
    found = Runtimes()
    try:
        cluster = [runtime_of(o, CLUSTER_RUNTIME)
                   for o in client.list_custom(GROUP, VERSION, PLURALS[CLUSTER_RUNTIME])]
    except errors.NotFound:
        raise _trainer_missing() from None
    except errors.Forbidden:
        found.cluster_listed = False
        cluster = []
        for name in _used_by_trainjobs(client, namespace, trainjobs):
            try:
                cluster.append(runtime_of(_get(client, CLUSTER_RUNTIME, name, ""),
                                          CLUSTER_RUNTIME))
            except errors.Forbidden:
                cluster.append(Runtime(name=name, kind=CLUSTER_RUNTIME, readable=False))
            except errors.NotFound:
                continue
    try:
        project = [runtime_of(o, NAMESPACED_RUNTIME) for o in client.list_custom(
            GROUP, VERSION, PLURALS[NAMESPACED_RUNTIME], namespace)] if namespace else []
    except errors.Forbidden:
        project = []
    found.items = sorted(cluster, key=lambda r: r.name) + sorted(project, key=lambda r: r.name)
    return found


def _find(client: ClusterClient, spec: TrainJobSpec) -> Runtime | None:
    """The spec's runtime; None when there is none; NotServed without a Trainer; Forbidden
    when it may not be read."""
    try:
        return runtime_of(_get(client, spec.runtime_kind, spec.runtime, spec.namespace),
                          spec.runtime_kind)
    except errors.NotServed:
        raise
    except errors.NotFound:
        if not any(k.group == GROUP for k in client.served_kinds()):
            raise _trainer_missing() from None
        return None


def _missing(client: ClusterClient, spec: TrainJobSpec) -> FieldError:
    values = {"name": spec.runtime, "project": spec.namespace, "kind": spec.runtime_kind}
    other = NAMESPACED_RUNTIME if spec.runtime_kind == CLUSTER_RUNTIME else CLUSTER_RUNTIME
    try:
        _get(client, other, spec.runtime, spec.namespace)
        values["other"] = other
        return FieldError("runtime_kind", _(
            'There is no %(kind)s "%(name)s", but there is a %(other)s of that name: set the '
            "runtime kind to %(other)s.") % values)
    except (errors.NotFound, errors.Forbidden):
        pass
    try:
        names = [r.name for r in read_runtimes(client, spec.namespace).items]
    except errors.ClusterError:
        names = []
    values["names"] = ", ".join(dict.fromkeys(names)) or "-"
    return FieldError("runtime", _(
        'There is no runtime "%(name)s" (neither a ClusterTrainingRuntime nor a '
        "TrainingRuntime in %(project)s): choose one of %(names)s (odh training list runtimes "
        "-n %(project)s shows them), or ask your administrator to add it.") % values)


def check_runtime(client: ClusterClient, spec: TrainJobSpec) -> list[FieldError]:
    """The TrainJob against its runtime, read with the person's credentials (a runtime they
    may not read is not checked: the Trainer decides)."""
    if not spec.runtime or spec.runtime_kind not in PLURALS:
        return []  # the rules without the cluster say it
    try:
        runtime = _find(client, spec)
    except errors.Forbidden:
        return []
    if runtime is None:
        return [_missing(client, spec)]
    values = {"name": runtime.name, "framework": runtime.framework or "-",
              "wanted": spec.mpi_implementation, "has": runtime.mpi_implementation}
    if spec.mpi_implementation and not runtime.runs_mpi:
        return [FieldError("mpi_implementation", _(
            'Runtime "%(name)s" runs %(framework)s, not MPI, so it takes no MPI implementation: '
            'leave it out, or choose an MPI runtime such as "mpi-distributed".') % values)]
    if spec.mpi_implementation and spec.mpi_implementation != runtime.mpi_implementation:
        return [FieldError("mpi_implementation", _(
            'Runtime "%(name)s" runs %(has)s, not %(wanted)s: leave the MPI implementation out, '
            "or choose a runtime that runs %(wanted)s.") % values)]
    return []
