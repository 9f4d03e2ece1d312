"""Kubeflow training jobs without a framework: the SDK of the product plan, and the spec
model, manifests, quantities, durations and status summaries that the dashboard, the SDK
and the CLI share.

    from odh.training import MPIJob, ResourceSpec, JobStatus, JobFailedError

Imports only the standard library and PyYAML here; modules that talk to a cluster say so.
`MPIJob`, `TrainJob`, their `Async...` twins, `list_runtimes` and `TrainingClient` are loaded
on first use, so importing this
package does not pull in the kubernetes client. `JobStatus` is the SDK's status value
(phase, Workers, times); the status names themselves are `Phase`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from odh.training.capacity.fit import FitReport, Fix, QuotaLine, Totals, check_fit
from odh.training.durations import age, format_duration, parse_timestamp
from odh.training.errors import (
    AuthenticationError,
    ClusterError,
    JobFailedError,
    JobTimeoutError,
    ODHError,
    ResourceQuotaExceeded,
    ValidationError,
)
from odh.training.findings import FieldError, ValidationContext
from odh.training.jobstatus import JobStatus, Phase, ResourceSpec
from odh.training.kinds import KINDS, MPIJOB, PYTORCHJOB, TFJOB, TRAINJOB, JobKind
from odh.training.kinds.mpijob import MPIJobSpec
from odh.training.kinds.trainjob import TrainJobSpec
from odh.training.manifests.importing import ManifestImportError, parse_manifest_text
from odh.training.manifests.sdkcode import sdk_code
from odh.training.manifests.templates import BUILTIN_TEMPLATES, JobTemplate, template_by_slug
from odh.training.quantity import (
    QuantityError,
    format_cpu,
    format_memory,
    format_resources,
    parse_quantity,
)
from odh.training.spec import (
    EnvSource,
    EnvVar,
    JobSpec,
    NodeRequirement,
    PVCVolume,
    SourceVolume,
    Toleration,
    build_manifest,
    clone_spec,
    manifest_yaml,
    read_manifest,
)
from odh.training.status.summarize import JobSummary, summarize
from odh.training.validation import validate_spec

if TYPE_CHECKING:
    from odh.training.asyncjobs import AsyncMPIJob, AsyncTrainJob
    from odh.training.jobs import (
        MPIJob,
        QuotaWarning,
        SettingWarning,
        TrainingClient,
        TrainJob,
        list_runtimes,
    )
    from odh.training.sdk import InvalidSpec

__all__ = [
    "BUILTIN_TEMPLATES",
    "KINDS",
    "MPIJOB",
    "PYTORCHJOB",
    "TFJOB",
    "TRAINJOB",
    "AsyncMPIJob",
    "AsyncTrainJob",
    "AuthenticationError",
    "ClusterError",
    "EnvSource",
    "EnvVar",
    "FieldError",
    "FitReport",
    "Fix",
    "InvalidSpec",
    "JobFailedError",
    "JobKind",
    "JobSpec",
    "JobStatus",
    "JobSummary",
    "JobTemplate",
    "JobTimeoutError",
    "MPIJob",
    "MPIJobSpec",
    "ManifestImportError",
    "NodeRequirement",
    "ODHError",
    "PVCVolume",
    "Phase",
    "QuantityError",
    "QuotaLine",
    "QuotaWarning",
    "ResourceQuotaExceeded",
    "ResourceSpec",
    "SettingWarning",
    "SourceVolume",
    "Toleration",
    "Totals",
    "TrainJob",
    "TrainJobSpec",
    "TrainingClient",
    "ValidationContext",
    "ValidationError",
    "age",
    "build_manifest",
    "check_fit",
    "clone_spec",
    "format_cpu",
    "format_duration",
    "format_memory",
    "format_resources",
    "list_runtimes",
    "manifest_yaml",
    "parse_manifest_text",
    "parse_quantity",
    "parse_timestamp",
    "read_manifest",
    "sdk_code",
    "summarize",
    "template_by_slug",
    "validate_spec",
]

# loaded on first use: they bring the kubernetes client
_LAZY = {"TrainingClient": "jobs", "InvalidSpec": "sdk", "MPIJob": "jobs",
         "QuotaWarning": "jobs", "SettingWarning": "jobs", "AsyncMPIJob": "asyncjobs",
         "AsyncTrainJob": "asyncjobs", "TrainJob": "jobs", "list_runtimes": "jobs"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"odh.training.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'odh.training' has no attribute {name!r}")
