"""Starting a job (empty, from a built-in or saved template, from an imported manifest)
and moving between the wizard's steps."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.defaultfilters import filesizeformat
from django.urls import Resolver404, resolve, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from odh.training.cluster.client import ClusterClient, Project
from odh.training.kinds import JobKind, default_kind, wizard_kinds
from odh.training.manifests import templates as builtin_templates
from odh.training.manifests.importing import ManifestImportError, parse_manifest_text
from odh.training.spec import ManifestError, read_manifest
from training import permissions
from training.cluster import user_client
from training.models import JobTemplate, WizardDraft
from training.projects import projects_for_user
from training.views.wizard.base import (
    STEPS,
    fresh_data,
    get_draft_for_user,
    leave,
    merge_posted_step,
    new_draft,
    step_url,
    submitted_steps,
)
from training.views.wizard.copies import clone
from training.views.wizard.render import (
    not_served_text,
    render_step,
    served_kinds,
    warn_of_unknown_fields,
)
from training.web import params
from training.wizard import changes, checks, drafts, formfields, posting, simple
from training.wizard.forms import ImportForm

IMPORT_MAX_BYTES = 256 * 1024


# -- step 1: job type, templates, import --------------------------------------------------------
def _saved_template_for_user(request: HttpRequest, template_id: str,
                             projects: list[Project]) -> JobTemplate | None:
    number = params.index(template_id)
    if number is None:
        return None
    return JobTemplate.for_person(request.user.get_username(), projects).filter(
        pk=number).first()


def _read_upload(upload) -> bytes:
    # One byte over the limit is enough for parse_manifest_text to say the file is too big.
    return upload.read(IMPORT_MAX_BYTES + 1)


def _start(request: HttpRequest, draft: WizardDraft | None, client: ClusterClient,
           projects: list[Project]) -> HttpResponse:
    """Step 1's buttons: an empty MPIJob, a built-in or saved template, or an import."""
    post = request.POST
    keep = draft.data if draft is not None else {}
    # a new draft starts in a project where the person may create jobs
    creatable = permissions.may_create_in(request, client, [p.name for p in projects])
    if post.get("cancel") and draft is not None:
        draft.delete()
        messages.info(request, _("The new job was cancelled; nothing was created."))
        return leave(request, reverse("training-job-list"))
    if "import" in post:
        text: str | bytes = post.get("manifest", "")
        try:
            upload = request.FILES.get("manifest_file")
            if upload is not None:
                text = _read_upload(upload)
            if not text.strip():
                raise ManifestImportError(_("Paste a manifest or choose a file to upload."))
            spec = parse_manifest_text(text, max_bytes=IMPORT_MAX_BYTES, kinds=wizard_kinds())
        except (ManifestImportError, ManifestError) as e:
            form = ImportForm(data={"manifest": post.get("manifest", "")})
            return render_step(request, draft, "type", client=client, projects=projects,
                                extra={"import_form": form, "import_error": str(e)})
        data = fresh_data(request, projects, spec, creatable=creatable)
        response = _begin(request, draft, data, "import", spec.base, spec.kind)
        warn_of_unknown_fields(request, client, data, spec.base, spec.kind)
        return response
    if post.get("template"):
        template = builtin_templates.template_by_slug(post["template"])
        if template is None:
            raise Http404(_("There is no template called “%(name)s”.")
                          % {"name": post["template"]})
        spec = template.new_spec()
        data = fresh_data(request, projects, spec, keep, creatable)
        return _begin(request, draft, data, f"template:{template.slug}", spec.base, spec.kind)
    if post.get("saved"):
        saved = _saved_template_for_user(request, post["saved"], projects)
        if saved is None:
            raise Http404(_("That saved template does not exist or is not shared with you."))
        try:
            spec = read_manifest(saved.spec)
        except ManifestError as e:
            messages.error(request, _("The template “%(name)s” cannot be used: %(reason)s")
                           % {"name": saved.name, "reason": e})
            return redirect(step_url(draft, "type") if draft else
                            reverse("training-job-new"))
        spec.name = ""
        data = fresh_data(request, projects, spec, keep, creatable)
        return _begin(request, draft, data, f"template:saved/{saved.pk}", spec.base, spec.kind)
    # "Create an MPIJob", "Create a TrainJob": keep whatever the draft has, or start from
    # the kind's defaults
    kind = _chosen_kind(request, client, post.get("start", ""))
    if kind is None:
        return redirect(step_url(draft, "type") if draft else reverse("training-job-new"))
    if draft is not None:
        if draft.job_kind != kind:
            draft.data = drafts.switch_kind(draft.data, draft.job_kind, kind)
            draft.kind = kind.slug
            draft.save()
        return redirect(step_url(draft, "configuration"))
    data = fresh_data(request, projects, kind.new_spec(), creatable=creatable)
    if simple.first_job(client, request.user.get_username(), data.get("namespace", ""), kind):
        data[simple.SIMPLE_KEY] = True
    return _begin(request, None, data, "", None, kind)


def _chosen_kind(request: HttpRequest, client: ClusterClient, slug: str) -> JobKind | None:
    """The kind a type card's button starts (the default kind when none is named); None,
    with a message saying why, for one the wizard does not offer or the cluster lacks."""
    kinds = {k.slug: k for k in wizard_kinds()}
    kind = kinds.get(slug) if slug else default_kind()
    if kind is None:
        messages.error(request, _("The wizard does not create “%(kind)s” jobs: choose one of "
                                  "the job types below.") % {"kind": slug[:40]})
        return None
    if kind not in served_kinds(client):
        messages.error(request, not_served_text(kind))
        return None
    return kind


def _begin(request: HttpRequest, draft: WizardDraft | None, data: dict, source: str,
           base: dict | None, kind: JobKind) -> HttpResponse:
    if draft is None:
        draft = new_draft(request, data, source, base, kind)
    else:
        draft.data, draft.source, draft.base, draft.kind = data, source, base, kind.slug
        draft.save()
    return redirect(step_url(draft, "configuration"))


@require_http_methods(["GET", "POST"])
def job_new(request: HttpRequest) -> HttpResponse:
    with user_client(request) as client:
        projects = projects_for_user(request, client)
        if request.method == "POST":
            return _start(request, None, client, projects)
        if request.GET.get("clone"):
            return clone(request, client, projects, request.GET["clone"])
        return render_step(request, None, "type", client=client, projects=projects)


# -- steps 2-4 ------------------------------------------------------------------------------------
@require_http_methods(["GET", "POST"])
def job_new_step(request: HttpRequest, key, step: str) -> HttpResponse:
    if step not in STEPS:
        raise Http404(_("There is no wizard step called “%(step)s”.") % {"step": step})
    draft = get_draft_for_user(request, key)
    if request.method == "POST" and step in formfields.STEP_FIELDS:
        # What was typed is kept before the cluster is asked anything: a token revoked
        # meanwhile, or a cluster away, loses none of it.
        merge_posted_step(draft, request.POST, step)
        done = _post_step_without_cluster(request, draft, step)
        if done is not None:
            return done
    with user_client(request) as client:
        projects = projects_for_user(request, client)
        if request.method == "GET":
            if draft.step != step:
                draft.step = step
                if step == "review":  # past the Resources step: its Workers are chosen
                    draft.data = changes.with_workers_chosen(draft.data)
                draft.save(update_fields=["step", "data", "updated"])
            return render_step(request, draft, step, client=client, projects=projects)
        if step == "type":
            return _start(request, draft, client, projects)
        if step == "review":
            return redirect(step_url(draft, "review"))
        return _check_step(request, draft, step, client, projects)


def _post_step_without_cluster(request: HttpRequest, draft: WizardDraft,
                               step: str) -> HttpResponse | None:
    """A step's buttons that need no cluster: add or remove a row, Cancel, Back. None for
    Next (checked against the cluster next)."""
    post = request.POST
    for rows in formfields.ROW_FIELDS:
        removed = params.index(post.get(f"remove_{rows}", ""))
        if post.get(f"add_{rows}") or removed is not None:
            data = posting.remove_row(draft.data, rows, removed) if removed is not None \
                else posting.add_row(draft.data, rows)
            data["_advanced_open"] = True
            draft.data = data
            draft.save()
            return redirect(step_url(draft, step) + f"#{rows}")
    action = post.get("action", "next")
    if action == "full":  # out of the simple mode, with everything typed
        draft.data = {**draft.data, simple.SIMPLE_KEY: False}
        draft.save()
        return redirect(step_url(draft, step))
    if action == "cancel":
        draft.delete()
        messages.info(request, _("The new job was cancelled; nothing was created."))
        return leave(request, reverse("training-job-list"))
    if action == "back":
        return redirect(step_url(draft, STEPS[STEPS.index(step) - 1]))
    return None


def _check_step(request: HttpRequest, draft: WizardDraft, step: str, client: ClusterClient,
                projects: list[Project]) -> HttpResponse:
    """Next: on to the next step, or this one again with its messages."""
    _facts, _spec, found = checks.check_draft_for_user(client, draft.data, draft.base, projects,
                                                        draft.job_kind)
    in_simple = step == "configuration" and simple.is_simple(draft.data)
    asked = {**checks.errors_in(found, "resources"), **checks.errors_in(found, step)} \
        if in_simple else checks.errors_in(found, step)
    if in_simple:  # the simple mode asks for the Workers and GPUs here, and goes to Review
        asked = {k: v for k, v in asked.items()
                 if k in (*simple.RESOURCE_FIELDS, *formfields.CONFIGURATION_FIELDS)}
    if asked:
        draft.data["_submitted"] = sorted({*submitted_steps(draft), step})
        draft.save()
        return render_step(request, draft, step, client=client, projects=projects,
                            extra={"step_has_errors": True})
    draft.data["_submitted"] = [s for s in submitted_steps(draft) if s != step]
    if in_simple:
        draft.data = changes.with_workers_chosen(draft.data)
    draft.save()
    return redirect(step_url(draft, "review" if in_simple else STEPS[STEPS.index(step) + 1]))


def import_too_big(request: HttpRequest) -> HttpResponse | None:
    """The type step again, with a message at the import field, for a paste bigger than the
    dashboard reads at all (DATA_UPLOAD_MAX_MEMORY_SIZE: Django refuses to read the form,
    so nothing of it can be kept). None when the request was not the type step's form."""
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return None
    if not request.user.is_authenticated:
        return None
    draft = None
    if match.url_name == "training-job-new-step" and match.kwargs.get("step") == "type":
        draft = WizardDraft.objects.filter(key=match.kwargs.get("key"),
                                           user=request.user).first()
        if draft is None:
            return None
    elif match.url_name != "training-job-new":
        return None
    message = _("The pasted text is more than the %(limit)s the dashboard accepts in a form, "
                "so it was not read and nothing was imported. An MPIJob manifest is at most "
                "%(max)s: paste only the MPIJob, or choose its file under “Or upload a YAML "
                "file”.") % {"limit": filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE),
                             "max": filesizeformat(IMPORT_MAX_BYTES)}
    with user_client(request) as client:
        projects = projects_for_user(request, client)
        return render_step(request, draft, "type", client=client, projects=projects,
                           extra={"import_form": ImportForm(), "import_error": message})
