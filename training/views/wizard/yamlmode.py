"""The wizard's YAML mode: the draft shown as the manifest it creates, edited as text and
read back into the form. New volume claims the draft asks for follow the job's manifest
in the same YAML stream (`---`, each a PersistentVolumeClaim, as `oc apply -f` takes
them); read back, each becomes a new claim of the form again, its mount path the one of
the job's volume that mounts it. The text is parsed safely (`parse_manifest_text`: yaml.safe_load,
one object of a kind the wizard creates), and the draft it describes is checked with the
checks of the form's steps; a YAML error says at which line, and whatever is wrong, the
text typed stays in the editor. A manifest that reads is written into the draft (its
fields the form does not show kept as the draft's base, as an import keeps them), so the
form shows it."""

from __future__ import annotations

import logging

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from odh.training.kinds import wizard_kinds
from odh.training.manifests.claims import NewClaim, with_claims_yaml
from odh.training.manifests.importing import ManifestImportError, parse_manifest_with_claims
from odh.training.spec import ManifestError, build_manifest, manifest_yaml
from training.cluster import user_client
from training.models import WizardDraft
from training.projects import projects_for_user
from training.views.wizard.base import get_draft_for_user, step_title, step_url
from training.wizard import changes, checks, drafts, formfields

log = logging.getLogger("training.wizard")

MAX_BYTES = 256 * 1024
# what the draft keeps of its own when a manifest replaces its fields
_KEPT_KEYS = ("_queue_offered", "_advanced_open", checks.CLAIMS_MADE_KEY)


def with_new_claims(data: dict, manifests: list[dict]) -> dict:
    """The form's text with the claims' manifests as its new claims: the job's volume
    that mounts one gives its mount path, and is no longer a volume of its own."""
    volumes = [row for row in data.get("volumes") or [] if isinstance(row, dict)]
    claims = []
    for manifest in manifests:
        claim = NewClaim.from_manifest(manifest)
        mount = next((row for row in volumes if row.get("claim_name") == claim.name), None)
        if mount is not None:
            claim.mount_path = str(mount.get("mount_path", ""))
            volumes.remove(mount)
        claims.append(claim)
    return {**data, "volumes": volumes, "claims": drafts.claim_rows(claims)}


def draft_yaml(draft: WizardDraft) -> str:
    """The manifest the draft creates, and its new claims', as YAML ("" where it cannot be
    built yet)."""
    spec = drafts.spec_from_data(draft.data, draft.base, draft.job_kind).spec
    try:
        return with_claims_yaml(manifest_yaml(build_manifest(spec)),
                                drafts.new_claims(draft.data), spec.namespace)
    except Exception:  # the form's steps say what is wrong
        log.exception("build_manifest failed for the YAML mode")
        return ""


def _problems(draft: WizardDraft, found: dict) -> list[dict]:
    listed = []
    for name, entry in checks.errors_in(found, "review").items():
        step = formfields.step_of(name)
        for text in entry["errors"]:
            listed.append({"message": text, "step_title": step_title(step)
                           if step != "review" else "",
                           "url": step_url(draft, step) + f"#id_{name}"
                           if step != "review" else ""})
    return listed


def _page(request: HttpRequest, draft: WizardDraft, text: str, error: str = "",
          problems: list[dict] | None = None) -> HttpResponse:
    return render(request, "training/job_new_yaml.html", {
        "draft": draft, "text": text, "error": error, "problems": problems or [],
        "back_url": step_url(draft, draft.step if draft.step in formfields.STEP_FIELDS
                             or draft.step == "review" else "configuration")})


@require_http_methods(["GET", "POST"])
def job_new_yaml(request: HttpRequest, key) -> HttpResponse:
    draft = get_draft_for_user(request, key)
    if request.method == "GET":
        return _page(request, draft, draft_yaml(draft))
    text = formfields.form_text(request.POST.get("manifest", ""))
    try:
        spec, claims = parse_manifest_with_claims(text, max_bytes=MAX_BYTES,
                                                  kinds=wizard_kinds())
    except (ManifestImportError, ManifestError) as e:
        return _page(request, draft, text, error=str(e))
    data = with_new_claims(drafts.data_from_spec(spec), claims)
    data["namespace"] = data.get("namespace") or draft.data.get("namespace", "")
    data.update({k: draft.data[k] for k in _KEPT_KEYS if k in draft.data})
    draft.data = changes.with_workers_chosen(data)
    draft.base, draft.kind = spec.base, spec.kind.slug
    draft.save()
    with user_client(request) as client:
        projects = projects_for_user(request, client)
        _facts, _spec, found = checks.check_draft_for_user(client, draft.data, draft.base,
                                                            projects, draft.job_kind)
    problems = _problems(draft, found)
    if problems:  # the form has them too; the text stays here to be corrected
        return _page(request, draft, text, problems=problems)
    messages.success(request, _("The YAML was read into the form: check the steps, then "
                                "create the job."))
    return redirect(step_url(draft, "configuration"))
