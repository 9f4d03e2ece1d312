"""Kubeflow training jobs without a framework: the spec model, manifests, quantities,
durations and status summaries that the dashboard, the SDK and the CLI share.

Imports only the standard library and PyYAML here; modules that talk to a cluster say so.
`TrainingClient` (the SDK, odh.training.sdk) is loaded on first use, so importing this
package does not pull in the kubernetes client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from odh.training.durations import age, format_duration, parse_timestamp
from odh.training.findings import FieldError, ValidationContext
from odh.training.fit import FitReport, Fix, QuotaLine, Totals, check_fit
from odh.training.importing import ManifestImportError, parse_manifest_text
from odh.training.kinds import KINDS, MPIJOB, PYTORCHJOB, TFJOB, TRAINJOB, JobKind
from odh.training.quantity import (
    QuantityError,
    format_cpu,
    format_memory,
    format_resources,
    parse_quantity,
)
from odh.training.sdkcode import sdk_code
from odh.training.spec import (
    EnvVar,
    MPIJobSpec,
    PVCVolume,
    Toleration,
    build_manifest,
    clone_spec,
    manifest_yaml,
    read_manifest,
)
from odh.training.status import JobStatus, JobSummary, summarize
from odh.training.templates import BUILTIN_TEMPLATES, JobTemplate, template_by_slug
from odh.training.validation import validate_spec

if TYPE_CHECKING:
    from odh.training.sdk import InvalidSpec, JobFailedError, TrainingClient

__all__ = [
    "BUILTIN_TEMPLATES", "KINDS", "MPIJOB", "PYTORCHJOB", "TFJOB", "TRAINJOB", "EnvVar",
    "FieldError", "FitReport", "Fix", "InvalidSpec", "JobFailedError", "JobKind", "JobStatus",
    "JobSummary",
    "JobTemplate", "MPIJobSpec", "ManifestImportError", "PVCVolume", "QuantityError",
    "QuotaLine", "Toleration", "Totals", "TrainingClient", "ValidationContext", "age",
    "build_manifest", "check_fit", "clone_spec", "format_cpu", "format_duration",
    "format_memory", "format_resources", "manifest_yaml", "parse_manifest_text",
    "parse_quantity", "parse_timestamp", "read_manifest", "sdk_code", "summarize",
    "template_by_slug", "validate_spec",
]

_SDK = ("TrainingClient", "InvalidSpec", "JobFailedError")


def __getattr__(name: str) -> Any:
    if name in _SDK:
        from odh.training import sdk

        return getattr(sdk, name)
    raise AttributeError(f"module 'odh.training' has no attribute {name!r}")
