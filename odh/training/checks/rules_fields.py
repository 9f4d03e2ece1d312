"""Validation rules for the wizard's later fields: what the job is for (its description)
and where its containers start (the working directory)."""

from __future__ import annotations

from odh.training.checks.rules_job import Findings, text
from odh.training.findings import FieldError, ValidationContext
from odh.training.i18n import _, shown
from odh.training.spec import JobSpec

# A description is a sentence or a paragraph, not a document: the job list and the
# Overview show it whole.
MAX_DESCRIPTION = 2000
MAX_PATH = 4096


def check_description(spec: JobSpec, context: ValidationContext) -> Findings:
    description = text(getattr(spec, "description", ""))
    if len(description) > MAX_DESCRIPTION:
        yield FieldError("description", _(
            "The description is %(length)d characters long: shorten it to at most %(limit)d "
            "(a sentence or two on what the job is for).")
            % {"length": len(description), "limit": MAX_DESCRIPTION})


def check_working_dir(spec: JobSpec, context: ValidationContext) -> Findings:
    path = text(getattr(spec, "working_dir", ""))
    if not path:
        return
    values = {"path": shown(path, 80)}
    if not path.startswith("/"):
        yield FieldError("working_dir", _(
            'Working directory "%(path)s" is not absolute: start it with "/" (for example '
            '"/workspace").') % values)
    elif len(path) > MAX_PATH or any(ch in path for ch in "\n\r\t\x00"):
        yield FieldError("working_dir", _(
            'Working directory "%(path)s" is not a path a container can start in: use one '
            'line of at most 4096 characters, such as "/workspace".') % values)
