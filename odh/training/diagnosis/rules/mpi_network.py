"""MPI could not reach its Workers: the Launcher's ssh or the ranks' TCP connections
refused or timed out, and what stands in the way (a NetworkPolicy, a sidecar, a Worker not
ready), as odh.training.diagnosis.rules.failures tries it among the failures."""


from __future__ import annotations

from odh.training.diagnosis import fixes as f
from odh.training.diagnosis import logs, suggest
from odh.training.diagnosis.common import (
    labels,
    launcher_tails,
    names,
    quote,
    raw_pod,
    replica_for_host,
)
from odh.training.diagnosis.facts import Facts
from odh.training.diagnosis.model import Culprit, Diagnosis, Evidence, Severity
from odh.training.diagnosis.rules.netpol import blocking_policies
from odh.training.diagnosis.rules.shared import consequence
from odh.training.i18n import _
from odh.training.paths import as_dict, get_path
from odh.training.spec import SIDECAR_ANNOTATION
from odh.training.status.pods import (
    JOB_NAME_LABEL,
    JOB_ROLE_LABEL,
    OPERATOR_NAME_LABEL,
    REPLICA_INDEX_LABEL,
    ReplicaState,
)
from odh.training.status.summary import JobStatus


# -- MPI could not reach its Workers ------------------------------------------------------------
def mpi_communication(facts: Facts) -> Diagnosis | None:
    if not facts.s.kind.runs_mpirun:
        return None
    trouble = None
    for tail in launcher_tails(facts):
        trouble = logs.mpi_trouble(tail.texts)
        if trouble:
            break
    if trouble is None:
        return None
    launcher = facts.s.launcher
    if facts.s.status == JobStatus.RUNNING and not (launcher and launcher.restarts):
        return None  # mpirun still retries: only a failed or restarted Launcher counts
    worker = replica_for_host(facts, trouble.host) if trouble.host else None
    who = worker.label if worker else _("its Workers")
    headlines = {
        "refused": _("The Launcher could not reach %(pod)s over SSH (connection refused)"),
        "timeout": _("The Launcher could not reach %(pod)s over SSH (connection timed out)"),
        "unreachable": _("The Launcher could not reach %(pod)s: no route to it"),
        "reset": _("The Launcher's SSH connection to %(pod)s was reset"),
        "resolve": _("The Launcher could not find %(pod)s by its host name"),
        "auth": _("The Launcher was refused SSH login to %(pod)s"),
        "orte": _("mpirun could not start its daemons on %(pod)s"),
    }
    evidence = [Evidence("log", quote(trouble.line), _("Launcher"))]
    addresses = _addresses(facts, worker)
    if addresses:
        evidence.append(Evidence("number", addresses))
    blockers = _blocking(facts, worker)
    sidecar = _sidecar_on(facts.job)
    culprit = Culprit.PLATFORM
    found = []
    if blockers:
        culprit = Culprit.CONFIGURATION
        evidence.append(Evidence("state", _("NetworkPolicy %(names)s selects the Workers and "
                                            "admits no SSH (TCP 22) from the Launcher.")
                                 % {"names": ", ".join(blockers)}, _("Project")))
        found.append(suggest.advice(_("Allow the job's own pods to reach each other on TCP "
                                      "22 (and the ports MPI uses): ask a project "
                                      "administrator to change %(names)s.")
                                    % {"names": ", ".join(blockers)},
                                    f"oc get networkpolicy -n {facts.s.namespace}"))
    elif facts.network_policies is not None:
        evidence.append(Evidence("state", _("No NetworkPolicy of the project blocks SSH "
                                            "between the job's pods."), _("Project")))
    if sidecar != "false":
        if sidecar == "true":
            culprit = Culprit.CONFIGURATION
            evidence.append(Evidence("state", _("The pods ask for the Istio sidecar "
                                                "(%(annotation)s: \"true\"): its proxy breaks "
                                                "mpirun's SSH connections.")
                                     % {"annotation": SIDECAR_ANNOTATION}, _("Job")))
        found += suggest.fix(f.sidecar_fix())
    found += suggest.logs(worker)
    found.append(suggest.advice(_("Use the same MPI implementation and version in the "
                                  "Launcher's and the Workers' images.")))
    found.append(suggest.guide("mpi-communication"))
    affected = [worker] if worker else []
    return Diagnosis("mpi-communication", Severity.ERROR, culprit,
                     headlines[trouble.kind] % {"pod": who}, consequence(facts, evidence),
                     names(affected), labels(affected), found, raw_message=quote(trouble.line))


def _addresses(facts: Facts, worker: ReplicaState | None) -> str:
    parts = []
    for replica in [facts.s.launcher, worker]:
        if replica is None:
            continue
        ip = get_path(raw_pod(facts, replica.name), ["status", "podIP"])
        if ip:
            parts.append(f"{replica.label} {ip}")
    return _("Pod addresses: %(addresses)s") % {"addresses": ", ".join(parts)} if parts else ""


def _mpi_pod(facts: Facts, replica: ReplicaState) -> dict:
    """The pod, or (removed already) what the MPI Operator labels it with."""
    pod = raw_pod(facts, replica.name)
    if pod:
        return pod
    labels = {JOB_NAME_LABEL: facts.s.name, OPERATOR_NAME_LABEL: "mpi-operator",
              JOB_ROLE_LABEL: replica.role.lower()}
    if replica.index is not None:
        labels[REPLICA_INDEX_LABEL] = str(replica.index)
    return {"metadata": {"name": replica.name, "labels": labels}}


def _blocking(facts: Facts, worker: ReplicaState | None) -> list[str]:
    if not facts.network_policies or facts.s.launcher is None:
        return []
    source = _mpi_pod(facts, facts.s.launcher)
    targets = [_mpi_pod(facts, worker)] if worker else \
        [_mpi_pod(facts, r) for r in facts.s.workers]
    found: set[str] = set()
    for target in targets:
        if source and target:
            found.update(blocking_policies(facts.network_policies, source, target))
    return sorted(found)


def _sidecar_on(job: dict) -> str:
    """"false" when every pod template opts out of the Istio sidecar, "true" when one opts
    in, "" when they say nothing."""
    values = []
    for role in as_dict(get_path(job, ["spec", "mpiReplicaSpecs"])).values():
        values.append(str(get_path(role, ["template", "metadata", "annotations",
                                          SIDECAR_ANNOTATION], "")))
    if "true" in values:
        return "true"
    return "false" if values and all(v == "false" for v in values) else ""
