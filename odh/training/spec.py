"""The MPIJob spec model, and the kubeflow.org/v2beta1 manifest built from it and read back.

The model lives in `odh.training.kinds.mpijob.model`, the manifest it builds and reads in
`odh.training.kinds.mpijob.manifest`; this module offers both under the name people import.
"""

from __future__ import annotations

from odh.training.checks.names import fresh_name
from odh.training.kinds import CREATED_BY_ANNOTATION, QUEUE_LABEL
from odh.training.kinds.mpijob.manifest import (
    LAST_APPLIED_ANNOTATION,
    SIDECAR_ANNOTATION,
    ManifestError,
    build_manifest,
    clone_spec,
    read_manifest,
)
from odh.training.kinds.mpijob.model import (
    CLEAN_POD_POLICIES,
    LAUNCHER,
    LAUNCHER_CREATION_POLICIES,
    MPI_IMPLEMENTATIONS,
    ROLES,
    WORKER,
    EnvVar,
    MPIJobSpec,
    PVCVolume,
    Toleration,
    volume_name_for,
)
from odh.training.manifests.yamlio import manifest_yaml

__all__ = [
    "CLEAN_POD_POLICIES", "CREATED_BY_ANNOTATION", "LAST_APPLIED_ANNOTATION", "LAUNCHER",
    "LAUNCHER_CREATION_POLICIES", "MPI_IMPLEMENTATIONS", "QUEUE_LABEL", "ROLES",
    "SIDECAR_ANNOTATION", "WORKER", "EnvVar", "MPIJobSpec", "ManifestError", "PVCVolume",
    "Toleration", "build_manifest", "clone_spec", "fresh_name", "manifest_yaml",
    "read_manifest", "volume_name_for",
]
