"""The wizard's last step: create the job (the API server's dry run first), or keep its
configuration as a template.

New volume claims the draft asks for are created first, as the person, in the job's
project; the job mounts them. A claim refused (its name taken: 409; a ResourceQuota's
requests.storage or persistentvolumeclaims) stops there, said in plain words, with the
draft untouched. A claim made for a job that then fails to create is not deleted (people
hold no right to delete claims: deploy/README.md): the review says it stays, the draft
remembers it, and the next Create uses it rather than making it again."""

from __future__ import annotations

import logging

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from odh.training import creating, errors
from odh.training.manifests.claims import ClaimNotCreated
from odh.training.spec import JobSpec, build_manifest
from training import mutations
from training.cluster import user_client
from training.models import JobTemplate
from training.projects import projects_for_user
from training.views.wizard.base import get_draft_for_user, leave, may_share_in, step_url
from training.views.wizard.render import render_step
from training.wizard import checks, drafts, formfields
from training.wizard import queue as wizard_queue
from training.wizard.forms import SaveTemplateForm

log = logging.getLogger("training.wizard")


def refusal_problem(refused: creating.CreateRefused) -> dict:
    """A create refused before anything was sent (odh.training.creating), for the review
    page: what is wrong, and the step whose fixes mend it."""
    if refused.reason == creating.NEVER_FITS:
        return {"message": _("%(refusal)s Nothing was created: the resource check offers "
                             "the fixes.") % {"refusal": str(refused)}, "step": "resources",
                "fixes": [fix.label for fix in refused.checked.fit.fixes]}
    if refused.reason == creating.COUNT_QUOTA_FULL:
        # the oldest finished jobs the person may delete, offered behind a confirmation
        return {"message": str(refused), "step": "resources", "room": refused.room}
    findings = refused.findings
    step = formfields.step_of(findings[0].field) if findings else ""
    return {"message": " ".join(f.message for f in findings) or str(refused),
            "step": step if step in ("configuration", "resources") else ""}


def create_problem(e: errors.ClusterError | creating.CreateRefused, spec: JobSpec) -> dict:
    """What went wrong, for the review page, in words that say what to do."""
    if isinstance(e, creating.CreateRefused):
        return refusal_problem(e)
    values = {"name": spec.name, "project": spec.namespace, "message": e.message}
    if isinstance(e, errors.CountQuotaExceeded):
        text = _("%(message)s Nothing was created.") % values
    elif isinstance(e, errors.QuotaExceeded):
        text = _("The project's quota refused the job: %(message)s. Nothing was created. "
                 "Ask for fewer resources (see the resource check), or wait until other jobs "
                 "in %(project)s finish.") % values
    elif isinstance(e, errors.Forbidden):
        text = _("You may not create jobs in the project “%(project)s”, so nothing was "
                 "created. Ask an administrator of the project for the edit role there, or "
                 "choose another project. (The cluster said: %(message)s)") % values
    elif isinstance(e, errors.Conflict):
        text = _("A job called “%(name)s” already exists in %(project)s, so nothing was "
                 "created: choose another name.") % values
    elif isinstance(e, errors.Invalid):
        causes = "; ".join(f"{c.get('field', '')}: {c.get('message', '')}".strip(": ")
                           for c in e.causes if isinstance(c, dict))
        text = _("The cluster rejected the job as invalid, so nothing was created: "
                 "%(message)s") % {"message": causes or e.message}
    elif isinstance(e, errors.ClusterUnavailable):
        text = _("The cluster could not be reached, so the job was not created. Your input "
                 "is kept: try again in a moment.")
    else:
        text = _("The cluster refused the job, so nothing was created: %(message)s") % values
    step = "configuration" if isinstance(e, errors.Conflict) else (
        "resources" if isinstance(e, errors.QuotaExceeded) else "")
    return {"message": text, "step": step}


def claim_problem(refused: ClaimNotCreated, spec: JobSpec) -> dict:
    """A new volume claim the cluster refused (nothing of the job was sent), in words that
    say what to do; the person's input is all kept (the draft is untouched)."""
    e = refused.error
    values = {"name": refused.claim, "project": spec.namespace,
              "message": getattr(e, "details", "") or e.message}
    if isinstance(e, errors.QuotaExceeded):  # requests.storage or persistentvolumeclaims
        text = _("The project's quota refused the new volume claim “%(name)s”, so the job was "
                 "not created: %(message)s. Ask for a smaller claim, mount an existing one, or "
                 "ask an administrator of %(project)s for more storage.") % values
    elif isinstance(e, errors.Forbidden):
        text = _("You may not create volume claims in %(project)s, so neither the claim "
                 "“%(name)s” nor the job was created. Mount an existing claim instead, or ask "
                 "an administrator of the project for that right. (The cluster said: "
                 "%(message)s)") % values
    elif isinstance(e, errors.Conflict):
        text = _("A volume claim called “%(name)s” already exists in %(project)s, so neither "
                 "the new claim nor the job was created: give the new claim another name, or "
                 "mount the existing claim under Volumes.") % values
    elif isinstance(e, errors.ClusterUnavailable):
        text = _("The cluster could not be reached, so the new volume claim “%(name)s” and "
                 "the job were not created. Your input is kept: try again in a moment.") % values
    else:
        text = _("The cluster refused the new volume claim “%(name)s”, so the job was not "
                 "created: %(message)s") % values
    return {"message": " ".join((text, _claims_stay(refused.made))).strip(),
            "step": "resources"}


def _claims_stay(names: list[str]) -> str:
    if not names:
        return ""
    return ngettext("The new volume claim %(names)s was created before and stays: creating "
                    "the job again uses it.",
                    "The new volume claims %(names)s were created before and stay: creating "
                    "the job again uses them.", len(names)) % {"names": ", ".join(names)}


def _make_claims(request: HttpRequest, client, draft, spec: JobSpec) -> dict | None:
    """The draft's new volume claims created as the person, before the job (those a
    failed create made before are used again); a problem for the review, or None."""
    claims = drafts.new_claims(draft.data)
    if not claims:
        return None
    before = checks.claims_made(draft.data)
    try:
        made = mutations.create_claims(request, client, spec.namespace, claims, before)
    except ClaimNotCreated as e:
        made, problem = e.made, claim_problem(e, spec)
    else:
        problem = None
    if made:  # kept with the draft: a job that then fails to create uses them next time
        draft.data[checks.CLAIMS_MADE_KEY] = sorted({*before, *made})
        draft.save(update_fields=["data", "updated"])
    return problem


@require_POST
def job_new_create(request: HttpRequest, key) -> HttpResponse:
    draft = get_draft_for_user(request, key)
    verb = "clone" if draft.source.startswith("clone:") else "create"
    with user_client(request) as client:
        projects = projects_for_user(request, client)
        facts, spec, found = checks.check_draft_for_user(client, draft.data, draft.base,
                                                         projects, draft.job_kind)
        if checks.errors_in(found, "review"):
            return render_step(request, draft, "review", client=client, projects=projects,
                                extra={"create_blocked": True})
        # what Kueue will do with it, told as it is created (the queue as it is before)
        forecast = wizard_queue.forecast_for(request, client, spec, facts, projects)
        claim_refused = _make_claims(request, client, draft, spec)
        if claim_refused is not None:
            return render_step(request, draft, "review", client=client, projects=projects,
                                extra={"create_problem": claim_refused})
        try:
            mutations.create(request, client, spec, verb)
        except errors.Unauthorized:
            raise
        except (errors.ClusterError, creating.CreateRefused) as e:
            problem = create_problem(e, spec)
            # the claims made for it stay (the dashboard deletes no claim: README)
            problem["message"] = " ".join((problem["message"], _claims_stay(
                checks.claims_made(draft.data)))).strip()
            return render_step(request, draft, "review", client=client, projects=projects,
                                extra={"create_problem": problem})
    draft.delete()
    values = {"name": spec.name, "project": spec.namespace, "kind": spec.kind.label}
    if forecast is None:
        messages.success(request, (_("The %(kind)s “%(name)s” was created in %(project)s. "
                                     "It starts as soon as its nodes are scheduled.")
                                   if spec.kind.counts_nodes else
                                   _("The MPIJob “%(name)s” was created in %(project)s. It "
                                     "starts as soon as its Launcher and Workers are "
                                     "scheduled.")) % values)
    else:
        messages.success(request, " ".join(part for part in (
            _("The %(kind)s “%(name)s” was created in %(project)s.") % values,
            forecast.sentence() + ".", forecast.expected_text() and
            forecast.expected_text() + ".") if part))
    return leave(request, reverse("training-job-detail",
                                   args=[spec.namespace, spec.kind.slug, spec.name]))


@require_POST
def job_new_save_template(request: HttpRequest, key) -> HttpResponse:
    draft = get_draft_for_user(request, key)
    with user_client(request) as client:
        projects = projects_for_user(request, client)
        namespace = str(draft.data.get("namespace", ""))
        visible = namespace in {p.name for p in projects}
        form = SaveTemplateForm(request.POST, project=namespace if visible else "")
        # sharing puts the configuration in front of everyone in the project: only for
        # people who may create jobs there (asked now, with their token)
        if form.is_valid() and form.cleaned_data["share"] == "project" and not may_share_in(
                request, client, namespace, fresh=True):
            form.add_error("share", _(
                "You may not create jobs in %(project)s, so you may not share templates "
                "with it: keep the template for yourself, or ask an administrator of the "
                "project for the edit role there.") % {"project": namespace})
        if not form.is_valid():
            return render_step(request, draft, "review", client=client, projects=projects,
                                extra={"template_form": form, "template_open": True})
    read = drafts.spec_from_data(draft.data, draft.base, draft.job_kind)
    spec = read.spec
    spec.name, spec.namespace, spec.created_by = "", "", ""
    try:
        manifest = build_manifest(spec)
    except Exception:
        log.exception("build_manifest failed for a template")
        messages.error(request, _("This configuration cannot be saved as a template yet: fix "
                                  "the problems listed on this page first."))
        return redirect(step_url(draft, "review"))
    project = namespace if form.cleaned_data["share"] == "project" else ""
    uid = next((p.uid for p in projects if p.name == project), "") if project else ""
    _template, created = JobTemplate.objects.update_or_create(
        owner=request.user.get_username(), project=project,
        name=form.cleaned_data["template_name"].strip(),
        defaults={"description": form.cleaned_data["description"], "spec": manifest,
                  "project_uid": uid})
    values = {"name": form.cleaned_data["template_name"].strip(), "project": project}
    if project:
        text = _("Saved the template “%(name)s” for everyone in %(project)s.") if created else \
            _("Replaced the template “%(name)s” shared with %(project)s.")
    else:
        text = _("Saved the template “%(name)s” for you.") if created else \
            _("Replaced your template “%(name)s”.")
    messages.success(request, text % values)
    return redirect(step_url(draft, "review"))
