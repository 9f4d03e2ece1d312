"""The SDK's job constructors' arguments read into a spec's values (resources, environment,
volumes, a status's name), and a spec's fields and a fix's changes named as the
constructors name them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from odh.training import errors
from odh.training.capacity.fit import Fix
from odh.training.i18n import _
from odh.training.jobstatus import Phase, ResourceSpec
from odh.training.manifests.retries import PLATFORM, check_retries, policy_of, with_retries
from odh.training.spec import EnvVar, PVCVolume

MPI_ALIASES = {"openmpi": "OpenMPI", "intelmpi": "Intel", "intel": "Intel", "mpich": "MPICH"}
# the spec's attribute -> how the SDK's constructor names it
SDK_FIELDS = {"cpu_per_worker": "worker_resources.cpu",
              "memory_per_worker": "worker_resources.memory",
              "gpus_per_worker": "worker_resources.gpus",
              "launcher_cpu": "launcher_resources.cpu",
              "launcher_memory": "launcher_resources.memory", "queue_name": "queue",
              "queue_priority": "priority"}
# a fix's change -> the constructor argument that makes it
FIX_ARGUMENTS = {"workers": "workers", "cpu_per_worker": "worker_resources.cpu",
                 "memory_per_worker": "worker_resources.memory",
                 "gpus_per_worker": "worker_resources.gpus",
                 "launcher_cpu": "launcher_resources.cpu",
                 "launcher_memory": "launcher_resources.memory",
                 "slots_per_worker": "slots_per_worker", "node_selector": "node_selector",
                 "command": "command", "queue_name": "queue"}


def retry_wish(annotations: Mapping[str, str] | None, retries: int | None,
               retry_on: str = PLATFORM) -> dict[str, str]:
    """The annotations with the constructor's `retries=N, retry_on="platform"|"all"` on
    them (odh/training/manifests/retries.py); None leaves the annotations' own wish."""
    found = dict(annotations or {})
    if retries is None:
        return found
    try:
        check_retries(retries)
    except ValueError as e:
        raise errors.ValidationError("retries", str(e)) from None
    try:
        return with_retries(found, retries, retry_on)
    except ValueError as e:
        raise errors.ValidationError("retry_on", str(e)) from None


def updated_wish(annotations: Mapping[str, str], key: str, value: Any) -> dict[str, str]:
    """`update(retries=...)` or `update(retry_on=...)`: the annotations with the wish
    changed, the other half as it was."""
    policy = policy_of(dict(annotations))
    return retry_wish(annotations, value if key == "retries" else policy.retries,
                      value if key == "retry_on" else policy.on)


def fix_arguments(fix: Fix) -> str:
    """A fix as the constructor's arguments: "workers=2, worker_resources.gpus=8"."""
    return ", ".join(f"{FIX_ARGUMENTS.get(k, k)}={v!r}" for k, v in fix.changes.items()
                     if k in FIX_ARGUMENTS)


def resource_spec(value: ResourceSpec | Mapping[str, Any] | None, what: str) -> ResourceSpec:
    if value is None:
        return ResourceSpec()
    if isinstance(value, ResourceSpec):
        return value
    if isinstance(value, Mapping):
        unknown = set(value) - {"cpu", "memory", "gpus"}
        if unknown:
            raise errors.ValidationError(what, _("unknown key %(key)s: use cpu, memory and "
                                                 "gpus.") % {"key": sorted(unknown)[0]})
        return ResourceSpec(**value)
    raise errors.ValidationError(what, _("give a ResourceSpec(cpu=..., memory=..., gpus=...)."))


def env_vars(value: Mapping[str, str] | Sequence[EnvVar | Mapping[str, Any]] | None
         ) -> list[EnvVar]:
    if not value:
        return []
    if isinstance(value, Mapping):
        return [EnvVar(name=str(k), value=str(v)) for k, v in value.items()]
    found = []
    for item in value:
        if isinstance(item, EnvVar):
            found.append(item)
        elif isinstance(item, Mapping):
            found.append(EnvVar.from_manifest(dict(item)))
        else:
            raise errors.ValidationError("env", _("give a dict of NAME: value, or a list of "
                                                  "EnvVar."))
    return found


def pvc_volumes(value: Sequence[PVCVolume | Mapping[str, Any]] | None) -> list[PVCVolume]:
    found = []
    for item in value or []:
        if isinstance(item, PVCVolume):
            found.append(item)
        elif isinstance(item, Mapping):
            claim = item.get("claim_name") or item.get("claim") or item.get("claimName")
            mount = item.get("mount_path") or item.get("mountPath")
            if not claim or not mount:
                raise errors.ValidationError("volumes", _(
                    "each volume needs claim_name (a PersistentVolumeClaim of the project) "
                    "and mount_path, e.g. {\"claim_name\": \"datasets\", \"mount_path\": "
                    "\"/data\"}."))
            found.append(PVCVolume(claim_name=str(claim), mount_path=str(mount),
                                   read_only=bool(item.get("read_only", False))))
        else:
            raise errors.ValidationError("volumes", _("give PVCVolume objects or dicts."))
    return found



def phase_named(status: str) -> Phase:
    for phase in Phase:
        if phase.value.lower() == str(status).lower():
            return phase
    raise errors.ValidationError("status", _("use one of %(statuses)s.") % {
        "statuses": ", ".join(p.value for p in Phase)})
