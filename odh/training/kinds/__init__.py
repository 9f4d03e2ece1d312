"""The training job kinds, listed: every kind-specific answer lives with its kind (a module
or package here) and code elsewhere asks the kind (`JobKind` in base.py says what it can be
asked). Adding a kind: its module, one line in `KINDS` below, its templates, translations
and simcluster (docs/architecture.md)."""

from __future__ import annotations

from odh.training.kinds.base import (
    CREATED_BY_ANNOTATION,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    JobKind,
)
from odh.training.kinds.mpijob.kind import MPIJOB
from odh.training.kinds.pytorchjob import PYTORCHJOB
from odh.training.kinds.tfjob import TFJOB
from odh.training.kinds.trainjob import TRAINJOB

__all__ = ["CREATED_BY_ANNOTATION", "KINDS", "MPIJOB", "PRIORITY_LABEL", "PYTORCHJOB",
           "QUEUE_LABEL", "TFJOB", "TRAINJOB", "JobKind", "creatable_kinds", "kind_for_object",
           "kind_for_slug"]

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


def creatable_kinds() -> list[JobKind]:
    """The kinds the dashboard creates (the wizard, clone, retry, import, the SDK, the CLI)."""
    return [k for k in KINDS.values() if k.creatable]
