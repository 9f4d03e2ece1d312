"""A job's diagnosis on its own: the Overview's card and the list row's line (what a page
fetches when the hub says the job changed), and dismissing a hint."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from odh.training import errors
from odh.training.diagnosis import PAGES
from training import diagnoses
from training.accounts import session
from training.cluster import user_client
from training.projects import get_job_for_user, kind_or_404
from training.templatetags.diagnosis_tags import story_line


@require_GET
def job_diagnosis(request: HttpRequest, project: str, kind: str, name: str) -> HttpResponse:
    job_kind = kind_or_404(kind)
    with user_client(request) as client:
        try:
            detail = get_job_for_user(request, client, project, job_kind, name)
        except errors.NotFound:
            if request.htmx:
                # the job went while its page asked (the hub's push of its deletion made
                # the page ask): the page says so already, and there is nothing to tell
                return HttpResponse(status=204)
            raise
    diagnosis = diagnoses.for_detail(request, detail)
    if request.GET.get("part") == "line":
        seen = diagnoses.object_diagnosis(detail.job, detail.pods, detail.events,
                                          detail.summary)
        return render(request, "training/partials/diagnosis.html#row-cell",
                      diagnoses.row_cell_context(diagnosis, detail.summary, seen=seen))
    context = diagnoses.card_context(diagnosis, detail, session.token(request))
    card = render_to_string("training/partials/diagnosis.html#card", context, request)
    if detail.summary.held_by_queue:
        return HttpResponse(card)  # its line says where it stands: the Queue card reads it
    # the Status card's line follows the card: the same story (odh/training/diagnosis/story.py)
    line = story_line(detail.summary, diagnosis, context["seen_diagnosis"], oob=True)
    return HttpResponse(card + line)


@require_POST
def job_diagnosis_dismiss(request: HttpRequest, project: str, kind: str,
                          name: str) -> HttpResponse:
    """Hide a hint (possible hang, low GPU utilization) of this job for this person."""
    job_kind = kind_or_404(kind)
    scenario = request.POST.get("scenario", "")
    with user_client(request) as client:
        detail = get_job_for_user(request, client, project, job_kind, name)
    if scenario in PAGES:
        diagnoses.dismiss(request, detail.summary.uid, scenario)
    if request.htmx:
        diagnosis = diagnoses.for_detail(request, detail)
        return render(request, "training/partials/diagnosis.html#card",
                      diagnoses.card_context(diagnosis, detail, session.token(request)))
    return redirect(reverse("training-job-detail", args=[project, job_kind.slug, name]))
