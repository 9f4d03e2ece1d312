"""A job's spec, whatever its kind: the kind-neutral way to make one, build its manifest,
read one back and copy it under a new name. Each asks the spec's kind (or, for a manifest,
the kind it names); the kinds' own spec classes and manifests live in `odh.training.kinds`.

The MPIJob's names (roles, choices, annotations) are offered here too, under the names
people import; the public `MPIJobSpec` comes from `odh.training`.
"""

from __future__ import annotations

from typing import Any

from odh.training.checks.names import fresh_name
from odh.training.kinds import (
    CREATED_BY_ANNOTATION,
    QUEUE_LABEL,
    JobKind,
    default_kind,
    kind_for_manifest,
)
from odh.training.kinds.jobspec import (
    EnvSource,
    EnvVar,
    JobSpec,
    ManifestError,
    NodeRequirement,
    PVCVolume,
    SourceVolume,
    Toleration,
    volume_name_for,
)
from odh.training.kinds.manifestparts import LAST_APPLIED_ANNOTATION
from odh.training.kinds.mpijob.manifest import SIDECAR_ANNOTATION
from odh.training.kinds.mpijob.model import (
    CLEAN_POD_POLICIES,
    LAUNCHER,
    LAUNCHER_CREATION_POLICIES,
    MPI_IMPLEMENTATIONS,
    ROLES,
    WORKER,
)
from odh.training.manifests.yamlio import manifest_yaml

__all__ = [
    "CLEAN_POD_POLICIES", "CREATED_BY_ANNOTATION", "LAST_APPLIED_ANNOTATION", "LAUNCHER",
    "LAUNCHER_CREATION_POLICIES", "MPI_IMPLEMENTATIONS", "QUEUE_LABEL", "ROLES",
    "SIDECAR_ANNOTATION", "WORKER", "EnvSource", "EnvVar", "JobSpec", "ManifestError",
    "NodeRequirement", "PVCVolume", "SourceVolume", "Toleration", "build_manifest",
    "clone_spec", "fresh_name", "manifest_yaml", "new_spec", "read_manifest",
    "volume_name_for",
]


def new_spec(kind: JobKind | None = None, **fields: Any) -> JobSpec:
    """A spec of `kind` (the default kind when None) with these fields."""
    return (kind or default_kind()).new_spec(**fields)


def build_manifest(spec: JobSpec) -> dict:
    """The manifest the cluster is sent for a spec, as its kind builds it."""
    return spec.kind.build_manifest(spec)


def read_manifest(manifest: dict) -> JobSpec:
    """The spec a manifest describes, read by the kind it names; ManifestError says what is
    wrong (for a kind the dashboard does not create, what it expected)."""
    return kind_for_manifest(manifest).read_manifest(manifest)


def clone_spec(spec: JobSpec, new_name: str) -> JobSpec:
    """A copy under a new name, ready to create: server-written state is dropped from the
    base, the clone is not created suspended, and its creator is whoever submits it."""
    return spec.kind.clone_spec(spec, new_name)
