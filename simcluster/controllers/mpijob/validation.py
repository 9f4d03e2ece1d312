"""The MPI Operator's in-memory defaults and its validation, with Go's error wording.

Both run on every sync (pkg/apis/kubeflow/v2beta1/default.go and
pkg/apis/kubeflow/validation/validation.go at v0.8.2). Because validation runs after
defaulting, some rules can never fire in practice (an unset `replicas`, an unset
`slotsPerWorker`, an empty `sshAuthMountPath` are all defaulted first): that is how the
real operator behaves, so it is kept.

`runPolicy.managedBy` is checked before validation: a job managed by anything other than
`kubeflow.org/mpi-operator` is skipped silently (research notes, syncHandler step 2), so
the managedBy rule below only matters for the operator's own value.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from simcluster.controllers.conditions import int_or

Obj = dict[str, Any]

OPERATOR_MANAGED_BY = "kubeflow.org/mpi-operator"
VALID_MANAGED_BY = ("kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue")
VALID_CLEAN_POLICIES = ("All", "None", "Running")
VALID_IMPLEMENTATIONS = ("Intel", "MPICH", "OpenMPI")
VALID_RESTART_POLICIES = ("Never", "OnFailure")
EVENT_MESSAGE_LIMIT = 1024
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1035_MESSAGE = ("a DNS-1035 label must consist of lower case alphanumeric characters or "
                   "'-', start with an alphabetic character, and end with an alphanumeric "
                   "character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
                   "'[a-z]([-a-z0-9]*[a-z0-9])?')")


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def apply_defaults(job: Obj) -> Obj:
    """SetDefaults_MPIJob on a copy: what the operator works with, never written back."""
    job = copy.deepcopy(job)
    spec = job.setdefault("spec", {})
    if not isinstance(spec, dict):
        spec = job["spec"] = {}
    policy = spec.get("runPolicy")
    if not isinstance(policy, dict):
        policy = spec["runPolicy"] = {}
    if policy.get("cleanPodPolicy") is None:
        policy["cleanPodPolicy"] = "None"
    if policy.get("suspend") is None:
        policy["suspend"] = False
    if spec.get("slotsPerWorker") is None:
        spec["slotsPerWorker"] = 1
    if spec.get("runLauncherAsWorker") is None:
        spec["runLauncherAsWorker"] = False
    if not spec.get("sshAuthMountPath"):
        spec["sshAuthMountPath"] = "/root/.ssh"
    if not spec.get("mpiImplementation"):
        spec["mpiImplementation"] = "OpenMPI"
    if not spec.get("launcherCreationPolicy"):
        spec["launcherCreationPolicy"] = "AtStartup"
    replicas = spec.get("mpiReplicaSpecs")
    if isinstance(replicas, dict):
        for rtype, restart, count in (("Launcher", "OnFailure", 1), ("Worker", "Never", 0)):
            rs = replicas.get(rtype)
            if isinstance(rs, dict):
                if not rs.get("restartPolicy"):
                    rs["restartPolicy"] = restart
                if rs.get("replicas") is None:
                    rs["replicas"] = count
    return job


def managed_externally(job: Obj) -> str | None:
    manager = _dict(_dict(job.get("spec")).get("runPolicy")).get("managedBy")
    if manager is not None and manager != OPERATOR_MANAGED_BY:
        return str(manager)
    return None


# -- Go's field.Error wording -----------------------------------------------------------------
def go_quote(value: Any) -> str:
    return json.dumps(str(value), ensure_ascii=False)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if value is None:
        return "null"
    return go_quote(value)


def required(field: str, detail: str) -> str:
    return f"{field}: Required value: {detail}"


def invalid(field: str, value: Any, detail: str) -> str:
    return f"{field}: Invalid value: {_value(value)}: {detail}"


def not_supported(field: str, value: Any, valid: tuple[str, ...]) -> str:
    return (f"{field}: Unsupported value: {_value(value)}: supported values: "
            + ", ".join(go_quote(v) for v in valid))


def aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message, or [a, b] without duplicates."""
    seen: list[str] = []
    for e in errors:
        if e not in seen:
            seen.append(e)
    if len(errors) == 1 or len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def truncate(message: str) -> str:
    if len(message) <= EVENT_MESSAGE_LIMIT:
        return message
    return message[:EVENT_MESSAGE_LIMIT - 3] + "..."


# -- the rules ---------------------------------------------------------------------------------
def validate(job: Obj) -> list[str]:
    """ValidateMPIJob on a defaulted job: the list of error strings (empty when valid)."""
    spec = _dict(job.get("spec"))
    errs = _validate_name(job, spec)
    errs += _validate_replica_specs(spec.get("mpiReplicaSpecs"), "spec.mpiReplicaSpecs")
    slots = spec.get("slotsPerWorker")
    if slots is None:
        errs.append(required("spec.slotsPerWorker", "must have number of slots per worker"))
    elif isinstance(slots, int) and slots < 0:
        errs.append(invalid("spec.slotsPerWorker", slots, "must be greater than or equal to 0"))
    errs += _validate_run_policy(_dict(spec.get("runPolicy")), "spec.runPolicy")
    if not spec.get("sshAuthMountPath"):
        errs.append(required("spec.sshAuthMountPath",
                             "must have a mount path for SSH credentials"))
    impl = spec.get("mpiImplementation")
    if impl not in VALID_IMPLEMENTATIONS:
        errs.append(not_supported("spec.mpiImplementation", impl, VALID_IMPLEMENTATIONS))
    return errs


def _validate_name(job: Obj, spec: Obj) -> list[str]:
    name = str(job.get("metadata", {}).get("name", ""))
    replicas = 1
    worker = _dict(spec.get("mpiReplicaSpecs")).get("Worker")
    if isinstance(worker, dict):
        n = int_or(worker.get("replicas"), None)
        if n is not None and n > 0:
            replicas = n
    host = f"{name}-worker-{replicas - 1}"
    problems = []
    if len(host) > 63:
        problems.append("must be no more than 63 characters")
    if not DNS1035_LABEL.match(host):
        problems.append(DNS1035_MESSAGE)
    if problems:
        return [invalid("metadata.name", name, "will not able to create pod and service with "
                        f"invalid DNS label {go_quote(host)}: " + ", ".join(problems))]
    return []


def _validate_replica_specs(specs: Any, path: str) -> list[str]:
    if specs is None:
        return [required(path, "must have replica specs")]
    specs = _dict(specs)
    errs: list[str] = []
    launcher = specs.get("Launcher")
    lpath = f"{path}[Launcher]"
    if not isinstance(launcher, dict):
        errs.append(required(lpath, "must have Launcher replica spec"))
    else:
        errs += _validate_replica_spec(launcher, lpath)
        n = int_or(launcher.get("replicas"), None)
        if n is not None and n != 1:
            errs.append(invalid(f"{lpath}.replicas", n, "must be 1"))
    worker = specs.get("Worker")
    if isinstance(worker, dict):
        wpath = f"{path}[Worker]"
        errs += _validate_replica_spec(worker, wpath)
        n = int_or(worker.get("replicas"), None)
        if n is not None and n <= 0:
            errs.append(invalid(f"{wpath}.replicas", n, "must be greater than or equal to 1"))
    return errs


def _validate_replica_spec(spec: Obj, path: str) -> list[str]:
    errs: list[str] = []
    if spec.get("replicas") is None:
        errs.append(required(f"{path}.replicas", "must define number of replicas"))
    restart = spec.get("restartPolicy", "")
    if restart not in VALID_RESTART_POLICIES:
        errs.append(not_supported(f"{path}.restartPolicy", restart, VALID_RESTART_POLICIES))
    containers = _dict(_dict(spec.get("template")).get("spec")).get("containers")
    if not isinstance(containers, list) or not containers:
        errs.append(required(f"{path}.template.spec.containers",
                             "must define at least one container"))
    return errs


def _validate_run_policy(policy: Obj, path: str) -> list[str]:
    errs: list[str] = []
    clean = policy.get("cleanPodPolicy")
    if clean is None:
        errs.append(required(f"{path}.cleanPodPolicy", "must have clean Pod policy"))
    elif clean not in VALID_CLEAN_POLICIES:
        errs.append(not_supported(f"{path}.cleanPodPolicy", clean, VALID_CLEAN_POLICIES))
    for field in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        value = int_or(policy.get(field), None)
        if value is not None and value < 0:
            errs.append(invalid(f"{path}.{field}", value, "must be greater than or equal to 0"))
    manager = policy.get("managedBy")
    if manager is not None:
        if manager not in VALID_MANAGED_BY:
            errs.append(not_supported(f"{path}.managedBy", manager, VALID_MANAGED_BY))
        if len(str(manager)) > 63:
            errs.append(f"{path}.managedBy: Too long: may not be more than 63 bytes")
    return errs


def validation_event_message(errors: list[str]) -> str:
    return truncate(f"Found validation errors: {aggregate(errors)}")
