"""The training job kinds, listed: every kind-specific answer lives with its kind (a module
or package here) and code elsewhere asks the kind (`JobKind` in base.py says what it can be
asked), and the Trainer's runtimes a TrainJob runs on (`read_runtimes`). Adding a kind: its
module, one line in `KINDS` below, its templates, translations
and simcluster (docs/architecture.md)."""

from __future__ import annotations

from odh.training.kinds.base import (
    CREATED_BY_ANNOTATION,
    DESCRIPTION_ANNOTATION,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    RETRY_LINK_ANNOTATIONS,
    JobKind,
)
from odh.training.kinds.commandline import KindFlag
from odh.training.kinds.jobspec import JobSpec, ManifestError
from odh.training.kinds.mpijob import MPIJOB
from odh.training.kinds.pytorchjob import PYTORCHJOB
from odh.training.kinds.tfjob import TFJOB
from odh.training.kinds.trainjob import TRAINJOB
from odh.training.kinds.trainjob.runtimes import Runtime, Runtimes, read_runtimes

__all__ = ["CREATED_BY_ANNOTATION", "DESCRIPTION_ANNOTATION", "KINDS", "MPIJOB",
           "PRIORITY_LABEL", "PYTORCHJOB", "QUEUE_LABEL", "RETRY_LINK_ANNOTATIONS", "TFJOB",
           "TRAINJOB", "JobKind", "JobSpec", "ManifestError", "Runtime",
           "Runtimes", "command_line_flags", "creatable_kinds", "default_kind",
           "kind_for_manifest", "kind_for_object", "kind_for_slug", "pod_job_labels",
           "pod_job_name", "read_runtimes", "wizard_kinds"]

KINDS: dict[str, JobKind] = {k.slug: k for k in (MPIJOB, PYTORCHJOB, TFJOB, TRAINJOB)}


def kind_for_slug(slug: str) -> JobKind:
    """The kind for a URL slug such as "mpijob"; KeyError for anything else."""
    return KINDS[slug]


def kind_for_object(obj: dict) -> JobKind | None:
    """The kind of a job object by its apiVersion and kind, or None if it is not one of ours."""
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    for candidate in KINDS.values():
        if candidate.api_version == api_version and candidate.kind == kind:
            return candidate
    return None


def kind_counted_by(quota_key: str) -> JobKind | None:
    """The kind a ResourceQuota's object count names ("count/mpijobs.kubeflow.org"), or None."""
    for candidate in KINDS.values():
        if quota_key == f"count/{candidate.plural}.{candidate.group}":
            return candidate
    return None


def creatable_kinds() -> list[JobKind]:
    """The kinds the dashboard creates (the wizard, clone, retry, import, the SDK, the CLI)."""
    return [k for k in KINDS.values() if k.creatable]


def command_line_flags() -> list[KindFlag]:
    """The flags of `odh training create` only some kinds' jobs take (a TrainJob's
    --runtime), each once, in the kinds' order: the parser offers them all, and a job of a
    kind that does not take one refuses it."""
    return list({f.flag: f for k in creatable_kinds()
                 for f in k.command_line.own_flags}.values())


def wizard_kinds() -> list[JobKind]:
    """The creatable kinds whose jobs the wizard's steps can show (`JobKind.wizard_ready`):
    its new drafts, clones, retries and fixes."""
    return [k for k in creatable_kinds() if k.wizard_ready]


def default_kind() -> JobKind:
    """The kind made where nothing names one: a new wizard draft, the CLI's and SDK's
    create without a kind, a pasted manifest of a kind the dashboard does not create (whose
    reader then says what it expected). The wizard's first kind (the MPIJob)."""
    return wizard_kinds()[0]


def kind_for_manifest(manifest: object) -> JobKind:
    """The creatable kind a manifest is of, or the default kind (see above)."""
    kind = kind_for_object(manifest) if isinstance(manifest, dict) else None
    return kind if kind is not None and kind.creatable else default_kind()


def pod_job_labels() -> tuple[str, ...]:
    """The labels by which the kinds' pods name their job (the Training and MPI Operators'
    `training.kubeflow.org/job-name`, a JobSet's `jobset.sigs.k8s.io/jobset-name`): the
    pods of training jobs are those carrying one of them."""
    return tuple(dict.fromkeys(k.pod_job_label for k in KINDS.values()))


def pod_job_name(labels: dict) -> str:
    """The name of the job a pod with these labels belongs to ("" for none); its kind is
    told by `status.pods.pods_of_job`, which checks the kind's own label."""
    return next((str(labels[label]) for label in pod_job_labels() if labels.get(label)), "")
