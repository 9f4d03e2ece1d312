"""The diagnosis (training/diagnoses/) in list rows and on the Overview."""

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
def diagnosis_cell(row, job, pushed: bool = False, queued: str | None = None) -> SafeString:
    """The list row's one line: the job's story (the diagnosis' headline, else where it
    stands in its queue, else the lifecycle step: see training.diagnoses.row_cell_context
    for what a pushed row does with it). `row` is the page's RowDiagnosis, or (pushed) the
    hub's Diagnosis."""
    from training import diagnoses
    if pushed:
        context = diagnoses.row_cell_context(row, job, pushed=True)
    else:
        context = diagnoses.row_cell_context(getattr(row, "diagnosis", None), job,
                                             seen=getattr(row, "seen", None), queued=queued)
    return mark_safe(render_to_string(  # noqa: S308 (a rendered, escaped template)
        "training/partials/diagnosis.html#row-cell", context))


@register.simple_tag
def story_line(summary, diagnosis=None, seen=None, queue=None, pushed: bool = False,
               oob: bool = False) -> SafeString:
    """The Status card's line (training.diagnoses.story_context): `diagnosis` the page's
    (or, pushed, the hub's, which is then also `seen`), `queue` the job's QueueStanding."""
    from training import diagnoses
    queued = queue.headline() if queue is not None and getattr(queue, "waiting", False) \
        else None
    context = diagnoses.story_context(diagnosis, summary, seen if not pushed else diagnosis,
                                      queued, pushed=pushed, oob=oob)
    return mark_safe(render_to_string(  # noqa: S308 (a rendered, escaped template)
        "training/partials/diagnosis.html#story", context))


@register.simple_tag
def problem_pods(diagnosis) -> set[str]:
    """The pods the diagnosis names (Topology highlights them)."""
    return set(diagnosis.affected) if diagnosis is not None else set()
