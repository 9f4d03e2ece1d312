"""A wizard step's page, and what each step shows: the type step's templates and drafts,
the forms of Configuration and Resources, the summary, manifest and SDK code of Review."""

from __future__ import annotations

import dataclasses
import logging

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django_htmx.http import push_url

from odh.training import cost, errors
from odh.training.cluster.client import ClusterClient, Project
from odh.training.kinds import JobKind, default_kind, wizard_kinds
from odh.training.manifests import templates as builtin_templates
from odh.training.manifests.claims import with_claims_yaml
from odh.training.manifests.importing import unknown_fields, unknown_fields_message, without_fields
from odh.training.manifests.kept import kept_fields
from odh.training.sdk import sdk_code
from odh.training.spec import JobSpec, build_manifest, manifest_yaml
from training import permissions, prices
from training.models import JobTemplate, WizardDraft
from training.views.wizard.base import STEPS, may_share_in, step_title, step_url, submitted_steps
from training.views.wizard.forms_context import (
    configuration_form,
    resources_context,
    simple_resources_form,
)
from training.wizard import changes, checks, drafts, formfields, simple
from training.wizard import queue as wizard_queue
from training.wizard.advice import advice_for_user
from training.wizard.forms import ImportForm, SaveTemplateForm
from training.wizard.projectlists import pull_secret_names, source_keys, storage_classes_for
from training.wizard.runtimes import RuntimeChoices, runtime_choices

log = logging.getLogger("training.wizard")


def render_step(request: HttpRequest, draft: WizardDraft | None, step: str, *,
                client: ClusterClient, projects: list[Project], extra: dict | None = None,
                status: int = 200) -> HttpResponse:
    kind = draft.job_kind if draft is not None else default_kind()
    context: dict = {"draft": draft, "step": step, "steps": STEPS,
                     "step_index": STEPS.index(step), "projects": projects,
                     "step_titles": [(s, step_title(s)) for s in STEPS], "kind": kind}
    if step == "type":
        context.update(_type_context(request, projects))
        context["offered_kinds"] = {k.slug for k in served_kinds(client)}
        # said at once, not at Create: where the person may create MPIJobs
        context["creatable_projects"] = permissions.may_create_in(
            request, client, [p.name for p in projects]) if projects else []
        context["project_names"] = ", ".join(p.name for p in projects)
    else:
        assert draft is not None
        data = draft.data
        facts, spec, found = checks.check_draft_for_user(client, data, draft.base, projects,
                                                            draft.job_kind)
        if not data.get("queue_name") and not data.get("_queue_offered") \
                and facts.local_queues and step != "configuration":
            # once, where Kueue governs the project: its default queue, if it has one (a
            # person who then chooses none keeps none)
            data["queue_name"] = wizard_queue.default_queue(facts.local_queues)
            data["_queue_offered"] = True
            draft.save()
            spec, found = checks.check_draft(data, draft.base, facts, projects, draft.job_kind)
        shown = _with_fix_notes(checks.shown_messages(found, data, step,
                                                      step in submitted_steps(draft)), data)
        validate_url = reverse("training-job-new-validate", args=[draft.key])
        context.update({"spec": spec, "facts": facts, "field_messages": shown,
                        "validate_url": validate_url})
        runtimes = runtime_choices(client, spec.namespace, kind) if step != "review" \
            else RuntimeChoices()
        context["runtimes"] = runtimes
        if step == "configuration":
            form = configuration_form(data, validate_url, shown, kind, runtimes,
                                      pull_secret_names(client, spec.namespace))
            # only the projects where the person may create MPIJobs
            creatable = set(permissions.may_create_in(request, client,
                                                      [p.name for p in projects], kind))
            form.set_choices("namespace", [(p.name, p.label if p.label == p.name
                                            else f"{p.label} ({p.name})") for p in projects
                                           if p.name in creatable],
                             _("%(value)s (not one of your projects)"))
            context["form"] = form
            if simple.is_simple(data):  # the Workers and GPUs are asked here too
                context["simple_form"] = simple_resources_form(data, validate_url, shown, kind)
        elif step == "resources":
            context.update(resources_context(data, spec, facts, validate_url, shown, runtimes,
                                             source_keys(client, spec.namespace),
                                             storage_classes_for(client)))
            context.update(checks.fit_context(spec, facts, found, client))
            context["queue_forecast"] = wizard_queue.forecast_for(request, client, spec, facts,
                                                                  projects)
            context["advice"] = advice_for_user(request, client, spec)
        elif step == "review":
            context.update(checks.fit_context(spec, facts, found, client))
            context["queue_forecast"] = wizard_queue.forecast_for(request, client, spec, facts,
                                                                  projects)
            context.update(_review_context(request, client, draft, spec, found))
    if extra:
        context.update(extra)
    template = "training/job_new.html"
    if request.htmx.target == "wizard":
        template += "#wizard"  # a boosted step change: only the wizard is swapped
    response = render(request, template, context, status=status)
    if request.htmx.target == "wizard":
        # the window's title names the step: htmx takes a title at the response's root
        title = format_html("<title>{} · {} · {}</title>", step_title(step),
                            _("Create a training job"), settings.SITE_NAME)
        response.content = title.encode() + response.content
    if request.htmx and draft is not None and request.method == "GET":
        push_url(response, request.get_full_path())
    return response


def project_choices(request: HttpRequest, client: ClusterClient, draft: WizardDraft,
                    data: dict, namespace: str, found: dict) -> bytes:
    """The Configuration step's choices that come from the project now chosen, swapped out
    of band into the page (the answer to a change of project): its image pull secrets, and
    the runtime select and list for a kind that asks for a runtime (a project's own
    TrainingRuntimes come and go with it)."""
    kind = draft.job_kind
    runtimes = runtime_choices(client, namespace, kind)
    shown = _with_fix_notes(checks.shown_messages(
        found, data, "configuration", "configuration" in submitted_steps(draft)), data)
    form = configuration_form(data, reverse("training-job-new-validate", args=[draft.key]),
                              shown, kind, runtimes, pull_secret_names(client, namespace))
    context = {"form": form, "runtimes": runtimes, "oob": True}
    parts = ["pull-secret-choice"] + (["runtime-choice"] if "runtime" in form.fields else [])
    return b"".join(render_to_string(f"training/wizard/parts.html#{part}", context,
                                     request).encode() for part in parts)


def _with_fix_notes(shown: dict, data: dict) -> dict:
    """The messages, plus a note on each field a diagnosis' fix changed (or asks to correct)."""
    fixed = data.get(changes.FIXED_KEY)
    if not isinstance(fixed, dict) or not fixed.get("fields"):
        return shown
    label = str(fixed.get("label", ""))
    marked = dict(shown)
    for name in fixed.get("fields") or []:
        entry = {"errors": [], "warnings": [], **marked.get(str(name), {})}
        note = _("Changed by the suggested fix (%(fix)s).") if str(name) in data and \
            str(name) != "volumes" else _("The suggested fix asks you to correct this (%(fix)s).")
        entry["notes"] = [*entry.get("notes", []), note % {"fix": label}]
        marked[str(name)] = entry
    return marked


def served_kinds(client: ClusterClient) -> list[JobKind]:
    """The wizard's kinds the cluster serves an API for (the default kind always: its
    create says it if not); all of them when the cluster cannot tell now."""
    try:
        served = client.served_kinds()
    except errors.Unauthorized:
        raise
    except errors.ClusterError as e:
        log.info("cannot read the cluster's APIs: %s", e.message)
        return wizard_kinds()
    return [k for k in wizard_kinds() if k == default_kind() or k in served]


def not_served_text(kind: JobKind) -> str:
    return _("This cluster does not serve the %(kind)s API (%(api)s), so %(kinds)s cannot be "
             "created here: ask your cluster administrator to install it, or create an "
             "MPIJob instead.") % {"kind": kind.label, "api": kind.api_version,
                                   "kinds": kind.plural_label}


def _may_share(request: HttpRequest, client: ClusterClient, namespace: str,
               kind: JobKind) -> bool:
    try:
        return may_share_in(request, client, namespace, kind=kind)
    except errors.ClusterError as e:  # cannot tell now: sharing is not offered
        log.info("may %s share in %s? %s", request.user, namespace, e.message)
        return False


def unknown_fields_for(client: ClusterClient, spec: JobSpec,
                       manifest: dict | None) -> list[str]:
    """The fields of the job's manifest that the cluster's MPIJob API does not declare
    (asked of the API server: see `odh.training.manifests.importing.unknown_fields`). Only a
    manifest the person brought (an import, a clone, a template: `spec.base`) can have any; the
    wizard's own fields are all declared.

    A warning, not a refusal. The API server would drop these fields, not refuse the job,
    and the wizard cannot show or edit them: the person can only correct them in the
    manifest and import it again, which they are told, with the fields named, when the
    manifest is opened and on the Review step. Blocking the create would force that even
    when the field does not matter to them (a leftover of another MPIJob version, a note
    someone added); the job created is the one the Review step summarises, and the real
    create keeps the API server's default (Warn: the fields dropped, nothing refused).
    """
    if spec.base is None or manifest is None:
        return []
    return unknown_fields(client, spec.namespace, manifest)


def warn_of_unknown_fields(request: HttpRequest, client: ClusterClient, data: dict,
                           base: dict | None, kind: JobKind | None = None) -> None:
    """When an imported or cloned manifest is opened: a warning naming the fields the
    cluster would drop (`unknown_fields_for`), shown on the next page. The Review step
    says it again, for the job as it is then."""
    if base is None:
        return
    spec = drafts.spec_from_data(data, base, kind).spec
    spec.created_by = request.user.get_username()
    try:
        manifest = build_manifest(spec)
    except Exception:  # the steps show what is wrong; the Review step checks again
        log.exception("build_manifest failed for an opened manifest")
        return
    unknown = unknown_fields_for(client, spec, manifest)
    if unknown:
        messages.warning(request, unknown_fields_message(unknown))


def _review_context(request: HttpRequest, client: ClusterClient, draft: WizardDraft,
                    spec: JobSpec, found: dict) -> dict:
    blocking = checks.errors_in(found, "review")
    in_simple = simple.is_simple(draft.data)
    problems = []
    for name, m in blocking.items():
        step = formfields.step_of(name)
        if in_simple and name in simple.RESOURCE_FIELDS:
            step = "configuration"  # the simple mode asks them on its one step
        for text in m["errors"]:
            problems.append({"field": name, "message": text, "step": step,
                             "step_title": step_title(step) if step != "review" else "",
                             "url": step_url(draft, step) + f"#id_{name}"
                             if step != "review" else ""})
    share_in = spec.namespace if _may_share(request, client, spec.namespace, spec.kind) else ""
    # Back and Change return to where the person typed it: the simple mode's one step
    context: dict = {"problems": problems, "summary": checks.summary(spec),
                     "simple": in_simple,
                     "back_step": "configuration" if in_simple else "resources",
                     "template_form": SaveTemplateForm(project=share_in)}
    shown = spec
    if not shown.created_by:
        shown = dataclasses.replace(spec, created_by=request.user.get_username())
    manifest = None
    claims = drafts.new_claims(draft.data)
    classes = storage_classes_for(client) if claims else None
    context["new_claims"] = [{"claim": c, "default_class": classes[1] if classes else ""}
                             for c in claims]
    try:
        manifest = build_manifest(shown)
        # the job, then the claims made with it: one stream (`oc apply -f` makes them all)
        context["manifest_yaml"] = with_claims_yaml(manifest_yaml(manifest), claims,
                                                    spec.namespace, shown.created_by)
    except Exception:
        log.exception("build_manifest failed")
        context["manifest_yaml"] = ""
    unknown = unknown_fields_for(client, spec, manifest)
    context["unknown_fields"] = unknown
    context["unknown_fields_message"] = unknown_fields_message(unknown) if unknown else ""
    try:  # what the manifest keeps from a template, an import or a clone, unseen so far
        # (not the unknown fields: the cluster drops those, and the warning says so)
        kept_from = dataclasses.replace(spec, base=without_fields(build_manifest(spec),
                                                                  unknown)) if unknown else spec
        context["kept_fields"] = kept_fields(kept_from)
    except Exception:
        log.exception("kept_fields failed")
        context["kept_fields"] = []
    if manifest is not None:
        context["estimate"] = estimate(spec.kind, manifest, request.GET.get("hours", ""))
    try:
        context["sdk_code"] = sdk_code(spec, claims)
    except Exception:
        log.exception("sdk_code failed")
        context["sdk_code"] = ""
    return context


def estimate(kind: JobKind, manifest: dict, hours_typed: str) -> dict | None:
    """The review's "Estimated cost": per hour, and for the hours the person expects the
    job to run (None without prices: no cost is shown)."""
    current = prices.current()
    ask = cost.job_ask(kind, manifest)
    per_hour = cost.hourly(ask, current, prices.assumed(current))
    if per_hour is None:
        return None
    found: dict = {"per_hour": per_hour, "hours": hours_typed[:40], "total": None,
                   "error": ""}
    try:
        hours = cost.expected_hours(hours_typed)
    except cost.PriceError as e:
        found["error"] = e.message
        return found
    if hours is not None:
        found["total"] = cost.money(per_hour.total * hours, per_hour.currency)
    return found


def _type_context(request: HttpRequest, projects: list[Project]) -> dict:
    saved = JobTemplate.for_person(request.user.get_username(), projects)
    others = WizardDraft.objects.filter(user=request.user).order_by("-updated")[:5]
    return {"builtin_templates": builtin_templates.BUILTIN_TEMPLATES,
            "saved_templates": saved,
            "resumable": [d for d in others if d.data],
            "import_form": ImportForm()}
