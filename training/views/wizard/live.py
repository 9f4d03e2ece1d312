"""What htmx asks while a person fills in the wizard: the message of the field that
changed, the live resource check, and the check's suggested fixes (and the advice from
similar past runs) applied to the draft."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from training.cluster import user_client
from training.models import WizardDraft
from training.projects import projects_for_user
from training.views.wizard.base import get_draft_for_user, step_url, write_live_check
from training.views.wizard.render import project_choices
from training.web import params
from training.wizard import changes, checks, formfields, posting
from training.wizard import queue as wizard_queue
from training.wizard.advice import advice_for_user


def _merge_posted(request: HttpRequest, draft: WizardDraft) -> dict:
    """Write the posted step's fields into the draft (unless a newer post of the form was
    written first), and return the draft's data with all of them: the check reads the whole
    form as the person sees it."""
    step = request.POST.get("step", "")
    if step not in formfields.STEP_FIELDS:
        return draft.data
    merged = changes.with_workers_chosen(posting.merge_post(draft.data, request.POST, step),
                                        draft.data)
    write_live_check(draft, merged, request.POST)
    return merged


@require_POST
def job_new_validate(request: HttpRequest, key) -> HttpResponse:
    """The message fragment of the field that changed, judged with the rest of the draft."""
    draft = get_draft_for_user(request, key)
    name = request.htmx.trigger_name or request.POST.get("field", "")
    data = _merge_posted(request, draft)
    with user_client(request) as client:
        projects = projects_for_user(request, client)
        _facts, spec, found = checks.check_draft_for_user(client, data, draft.base, projects,
                                                             draft.job_kind)
        # another project offers other runtimes (its own TrainingRuntimes) and pull secrets
        runtimes = project_choices(request, client, draft, data, spec.namespace, found) \
            if name == "namespace" else b""
    entry = found.get(name, {"errors": [], "warnings": []})
    response = render(request, "training/wizard/parts.html#field-message-body", {
        "message_id": f"id_{name}-message", "errors": entry["errors"],
        "warnings": entry["warnings"]})
    response.content += runtimes
    step = request.POST.get("step", "")
    if step in formfields.STEP_FIELDS and not checks.errors_in(found, step):
        # the step's "Some fields need your attention" goes when its errors have gone
        response.content += render_to_string("training/wizard/step_errors.html",
                                             {"oob": True}, request).encode()
    return response


@require_http_methods(["GET", "POST"])
def job_new_check(request: HttpRequest, key) -> HttpResponse:
    """The live resource check for the draft (after writing what the form holds now)."""
    draft = get_draft_for_user(request, key)
    data = _merge_posted(request, draft) if request.method == "POST" else draft.data
    with user_client(request) as client:
        projects = projects_for_user(request, client)
        facts, spec, found = checks.check_draft_for_user(client, data, draft.base,
                                                         projects, draft.job_kind)
        forecast = wizard_queue.forecast_for(request, client, spec, facts, projects)
        fit = checks.fit_context(spec, facts, found, client)
    return render(request, "training/wizard/parts.html#resource-check", {
        "draft": draft, **fit, "facts": facts,
        "spec": spec, "queue_forecast": forecast,
        "step": request.POST.get("step") or request.GET.get("step") or "resources"})


@require_POST
def job_new_fix(request: HttpRequest, key) -> HttpResponse:
    """Apply one of the resource check's suggested fixes to the draft."""
    draft = get_draft_for_user(request, key)
    _merge_posted(request, draft)
    back = request.POST.get("next", "resources")
    back = back if back in ("resources", "review") else "resources"
    with user_client(request) as client:
        projects = projects_for_user(request, client)
        facts, spec, found = checks.check_draft_for_user(client, draft.data, draft.base,
                                                         projects, draft.job_kind)
        fit = checks.fit_for(spec, facts, found)
    index = params.index(request.POST.get("fix", ""))
    if fit is None or index is None or index >= len(fit.fixes):
        messages.warning(request, _("That suggestion no longer applies: the resource check "
                                    "below is up to date."))
    else:
        fix = fit.fixes[index]
        draft.data = changes.with_workers_chosen(changes.apply_changes(draft.data, fix.changes),
                                                draft.data)
        draft.save()
        messages.success(request, _("Applied: %(fix)s.") % {"fix": fix.label})
    return redirect(step_url(draft, back) + "#resource-check")


@require_POST
def job_new_advice(request: HttpRequest, key) -> HttpResponse:
    """Apply one of the advice's suggestions (a field: the memory per Worker, the Workers)
    to the draft, as the resource check's fixes are applied."""
    draft = get_draft_for_user(request, key)
    _merge_posted(request, draft)
    with user_client(request) as client:
        projects = projects_for_user(request, client)
        _facts, spec, _found = checks.check_draft_for_user(client, draft.data, draft.base,
                                                           projects, draft.job_kind)
        advice = advice_for_user(request, client, spec)
    suggestion = advice.suggestion(request.POST.get("advice", "")) \
        if advice is not None else None
    if suggestion is None:
        messages.warning(request, _("That suggestion no longer applies: the advice below is "
                                    "up to date."))
    else:
        draft.data = changes.with_workers_chosen(
            changes.apply_changes(draft.data, {suggestion.field: suggestion.value}), draft.data)
        draft.save()
        messages.success(request, _("Applied: %(fix)s.") % {"fix": suggestion.label})
    return redirect(step_url(draft, "resources") + "#advice")
