"""The parts every creatable kind's manifest reads and writes the same way: string maps and
lists as the API may spell them, whole numbers, a container's resources, the claims a pod
mounts, the metadata maps whose special keys are fields of their own, and what the cluster
wrote about a job that a copy must not carry. Each kind's manifest.py lays them out."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from odh.training.kinds.base import (
    CREATED_BY_ANNOTATION,
    DESCRIPTION_ANNOTATION,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    RETRY_LINK_ANNOTATIONS,
)
from odh.training.kinds.jobspec import SOURCE_KINDS, EnvSource, PVCVolume, SourceVolume
from odh.training.paths import as_dict, as_list, get_path, put_path
from odh.training.quantity import GPU_RESOURCE, QuantityError, parse_quantity

LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
# What the cluster wrote about the original, which a new job must not carry.
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "managedFields",
                   "generation", "selfLink", "deletionTimestamp",
                   "deletionGracePeriodSeconds", "ownerReferences", "finalizers",
                   "generateName")


def str_dict(value: object) -> dict[str, str]:
    return {str(k): "" if v is None else str(v) for k, v in as_dict(value).items()}


def str_list(value: object) -> list[str]:
    return [str(item) for item in as_list(value)]


def whole(value: object, default: int | None) -> int | None:
    """An int as the manifest spells it (1 or "1"); `default` for anything else."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdecimal():
        return int(value)
    return default


def resource(resources: dict, name: str) -> str:
    """A resource's request (else its limit) in a `resources` block, "" when neither."""
    raw = as_dict(resources.get("requests")).get(name)
    if raw is None:
        raw = as_dict(resources.get("limits")).get(name)
    return "" if raw is None else str(raw)


def gpus(resources: dict) -> int:
    raw = resource(resources, GPU_RESOURCE)
    try:
        return int(parse_quantity(raw)) if raw else 0
    except QuantityError:
        return 0


def set_resource(resources: dict, name: str, value: str | int | None) -> None:
    """requests and limits of `name` := value (None or "": removed)."""
    for kind in ("requests", "limits"):
        put_path(resources, [kind, name], value)


def read_claims(volumes: object, mounts: object) -> list[PVCVolume]:
    """The PersistentVolumeClaims among a pod's volumes, with where a container mounts them."""
    mounted = {m.get("name"): m for m in as_list(mounts) if isinstance(m, dict)}
    found = []
    for volume in as_list(volumes):
        claim = as_dict(volume.get("persistentVolumeClaim")) if isinstance(volume, dict) else {}
        if not claim:
            continue
        mount = as_dict(mounted.get(volume.get("name")))
        found.append(PVCVolume(
            claim_name=str(claim.get("claimName", "")),
            mount_path=str(mount.get("mountPath", "")),
            read_only=bool(mount.get("readOnly") or claim.get("readOnly")),
            name=str(volume.get("name", "")),
            sub_path=str(mount.get("subPath", "")),
        ))
    return found


def write_claims(volumes: object, mounts: object, claims: list[PVCVolume]
                 ) -> tuple[list, list]:
    """(volumes, volume mounts) with the claims replaced by `claims`; other volumes stay."""
    old_volumes = as_list(volumes)
    claimed = {v.get("name") for v in old_volumes
               if isinstance(v, dict) and "persistentVolumeClaim" in v}
    replaced = claimed | {v.name for v in claims}
    new_volumes = [v for v in old_volumes if not isinstance(v, dict)
                   or v.get("name") not in replaced]
    new_mounts = [m for m in as_list(mounts)
                  if not isinstance(m, dict) or m.get("name") not in replaced]
    for volume in claims:
        new_volumes.append({"name": volume.name,
                            "persistentVolumeClaim": {"claimName": volume.claim_name}})
        mount: dict = {"name": volume.name, "mountPath": volume.mount_path}
        if volume.sub_path:
            mount["subPath"] = volume.sub_path
        if volume.read_only:
            mount["readOnly"] = True
        new_mounts.append(mount)
    return new_volumes, new_mounts


def _simple_source(volume: object) -> tuple[str, str] | None:
    """(kind, name) of a pod volume that mounts a whole Secret or ConfigMap, nothing more
    (no items, no mode: those a rebuild keeps as they are)."""
    if not isinstance(volume, dict):
        return None
    for kind, (_ref, field, name_key) in SOURCE_KINDS.items():
        found = volume.get(field)
        if isinstance(found, dict) and set(volume) == {"name", field} \
                and set(found) == {name_key}:
            return kind, str(found[name_key])
    return None


def read_source_volumes(volumes: object, mounts: object) -> list[SourceVolume]:
    """The Secrets and ConfigMaps a pod mounts whole, with where a container mounts them."""
    mounted = {m.get("name"): m for m in as_list(mounts) if isinstance(m, dict)}
    found = []
    for volume in as_list(volumes):
        source = _simple_source(volume)
        if source is not None:
            mount = as_dict(mounted.get(volume.get("name")))
            found.append(SourceVolume(kind=source[0], name=source[1],
                                      mount_path=str(mount.get("mountPath", "")),
                                      volume=str(volume.get("name", ""))))
    return found


def write_source_volumes(volumes: object, mounts: object, sources: list[SourceVolume]
                         ) -> tuple[list, list]:
    """(volumes, volume mounts) with the whole Secrets and ConfigMaps replaced by
    `sources` (mounted read-only); other volumes stay."""
    old_volumes = as_list(volumes)
    replaced = {v.get("name") for v in old_volumes if _simple_source(v) is not None} \
        | {s.volume for s in sources}
    new_volumes = [v for v in old_volumes if not isinstance(v, dict)
                   or v.get("name") not in replaced]
    new_mounts = [m for m in as_list(mounts)
                  if not isinstance(m, dict) or m.get("name") not in replaced]
    for source in sources:
        _ref, field, name_key = SOURCE_KINDS.get(source.kind, SOURCE_KINDS["configmap"])
        new_volumes.append({"name": source.volume, field: {name_key: source.name}})
        new_mounts.append({"name": source.volume, "mountPath": source.mount_path,
                           "readOnly": True})
    return new_volumes, new_mounts


def read_env_from(entries: object) -> list[EnvSource]:
    return [source for entry in as_list(entries) if isinstance(entry, dict)
            and (source := EnvSource.from_manifest(entry)) is not None]


def write_env_from(entries: object, sources: list[EnvSource]) -> list:
    """envFrom with its whole Secrets and ConfigMaps replaced by `sources`; entries with a
    prefix or marked optional stay."""
    kept = [e for e in as_list(entries)
            if not isinstance(e, dict) or EnvSource.from_manifest(e) is None]
    return kept + [s.to_manifest() for s in sources]


def write_metadata_map(manifest: dict, field: str, values: dict[str, str], *kept: str) -> None:
    """metadata.labels or .annotations := `values`, but for the keys `kept` (the queue and
    priority labels, the created-by and description annotations: fields of their own in a
    spec, written elsewhere), which stay as the manifest has them."""
    current = as_dict(get_path(manifest, ["metadata", field]))
    written = dict(values)
    for key in kept:
        if key in current:
            written[key] = current[key]
    put_path(manifest, ["metadata", field], written)


def lift_metadata(spec: Any) -> None:
    """The queue and priority labels and the created-by and description annotations of a
    spec's maps moved to their own fields (a spec built either way is the same spec)."""
    for field, key, attr in (("labels", QUEUE_LABEL, "queue_name"),
                             ("labels", PRIORITY_LABEL, "queue_priority"),
                             ("annotations", CREATED_BY_ANNOTATION, "created_by"),
                             ("annotations", DESCRIPTION_ANNOTATION, "description")):
        values = getattr(spec, field)
        if key in values:
            values = dict(values)
            found = values.pop(key)
            setattr(spec, field, values)
            setattr(spec, attr, getattr(spec, attr) or found)


Writer = tuple[Callable[[Any], object], Callable[[dict, Any], None]]


def rebuild(spec: Any, writers: Sequence[Writer], read: Callable[[dict], Any]) -> dict:
    """A copy of the spec's base with only the settings whose value changed rewritten, so
    every other field keeps its exact spelling."""
    manifest = copy.deepcopy(spec.base)
    before = read(spec.base)
    for setting, write in writers:
        if setting(spec) != setting(before):
            write(manifest, spec)
    return manifest


def cloned(spec: Any, new_name: str, suspend_path: list[str]) -> Any:
    """A copy under a new name, ready to create: server-written state is dropped from the
    base, the clone is not created suspended (`suspend_path` in the base), and its creator
    is whoever submits it."""
    clone = copy.deepcopy(spec)
    clone.name = new_name
    clone.created_by = ""
    for key in (LAST_APPLIED_ANNOTATION, *RETRY_LINK_ANNOTATIONS):
        clone.annotations.pop(key, None)
    if clone.base is not None:
        drop_server_state(clone.base)
        for key in RETRY_LINK_ANNOTATIONS:
            put_path(clone.base, ["metadata", "annotations", key], None)
        put_path(clone.base, suspend_path, None)
    return clone


def drop_server_state(base: dict) -> None:
    """Remove from a manifest what the cluster wrote about the job (its status, server
    metadata, kubectl's last-applied copy), so that it creates a new one."""
    base.pop("status", None)
    meta = as_dict(base.get("metadata"))
    for key in SERVER_METADATA:
        meta.pop(key, None)
    put_path(base, ["metadata", "annotations", LAST_APPLIED_ANNOTATION], None)
