"""The diagnosis (training/diagnoses.py) in list rows and on the Overview."""

from __future__ import annotations

from django import template
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


@register.filter
def diagnosis_of(diagnoses, job) -> object | None:
    """`diagnoses|diagnosis_of:job`: this job's RowDiagnosis from a {"ns/kind/name": ...}
    map (training.diagnoses.for_rows)."""
    return row_of(diagnoses, job)


@register.filter
def row_of(by_row, job) -> object | None:
    """`map|row_of:job`: the value of a {"ns/kind/name": ...} map for this job's row."""
    if not by_row:
        return None
    return by_row.get(f"{job.namespace}/{job.kind.slug}/{job.name}")


@register.simple_tag
def diagnosis_cell(row, job, pushed: bool = False) -> SafeString:
    """The list row's one line: the diagnosis' headline, else the lifecycle step (see
    training.diagnoses.row_cell_context for what a pushed row does with it). `row` is the
    page's RowDiagnosis, or (pushed) the hub's Diagnosis."""
    from .. import diagnoses

    if pushed:
        context = diagnoses.row_cell_context(row, job, pushed=True)
    else:
        context = diagnoses.row_cell_context(getattr(row, "diagnosis", None), job,
                                             seen=getattr(row, "seen", None))
    return mark_safe(render_to_string(  # noqa: S308 (a rendered, escaped template)
        "training/partials/diagnosis.html#row-cell", context))


@register.simple_tag
def problem_pods(diagnosis) -> set[str]:
    """The pods the diagnosis names (Topology highlights them)."""
    return set(diagnosis.affected) if diagnosis is not None else set()
