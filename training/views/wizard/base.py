"""What every part of the create-job wizard shares: its steps, its drafts, ways out."""

from __future__ import annotations

from datetime import timedelta

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django_htmx.http import HttpResponseClientRedirect

from odh.training.cluster.access import Access
from odh.training.cluster.client import ClusterClient, Project
from odh.training.kinds import JobKind, default_kind
from odh.training.spec import JobSpec, new_spec
from training.models import WizardDraft
from training.permissions import person_may
from training.views.job.jobs import PROJECT_KEY
from training.web import params
from training.wizard import changes, drafts, formfields, posting

STEPS = ("type", "configuration", "resources", "review")
DRAFT_MAX_AGE = timedelta(days=7)


def leave(request: HttpRequest, url: str) -> HttpResponse:
    """Out of the wizard to another page: a whole-page navigation, also from htmx."""
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)


def may_share_in(request: HttpRequest, client: ClusterClient, namespace: str,
                 fresh: bool = False, kind: JobKind | None = None) -> bool:
    """May this person share a template (of `kind`, the default kind if None) with everyone
    in `namespace`? Only if they may create such jobs there themselves (a
    SelfSubjectAccessReview with their token): seeing a project is not enough to put a
    configuration in front of everyone who works in it.
    `fresh` asks the cluster now rather than reuse an answer of the last minute."""
    if not namespace:
        return False
    kind = kind or default_kind()
    return person_may(request, client, namespace, Access("create", kind.plural, kind.group),
                      fresh=fresh)


def step_title(step: str) -> str:
    return {"type": _("Job type"), "configuration": _("Configuration"),
            "resources": _("Resources"), "review": _("Review")}[step]


def step_url(draft: WizardDraft, step: str) -> str:
    return reverse("training-job-new-step", args=[draft.key, step])


def get_draft_for_user(request: HttpRequest, key) -> WizardDraft:
    draft = WizardDraft.objects.filter(key=key, user=request.user).first()
    if draft is None:
        raise Http404(_("This job draft no longer exists: the job was created from it, it was "
                        "cancelled, or it expired. Start a new job from the job list."))
    return draft


# The addresses whose POST carries a step's form (the step itself, and htmx's field
# messages, resource check and fixes, which send the whole form with its `step`).
INPUT_URLS = ("training-job-new-step", "training-job-new-validate", "training-job-new-check",
              "training-job-new-fix", "training-job-new-advice")


def keep_posted_input(request: HttpRequest, url_name: str, kwargs: dict) -> str | None:
    """Write what a step's form sent into the person's draft, before anything can fail.

    Called before a view asks the cluster anything, and by the middleware when the person's
    token expired (so the view does not run: they sign in again first). Returns the step's
    address, to come back to with the input kept; None when there is no draft of this
    person's to keep it in.
    """
    if url_name not in INPUT_URLS or not request.user.is_authenticated:
        return None
    draft = WizardDraft.objects.filter(key=kwargs.get("key"), user=request.user).first()
    if draft is None:
        return None
    step = kwargs.get("step") if url_name == "training-job-new-step" \
        else request.POST.get("step", "")
    if step in formfields.STEP_FIELDS:
        merge_posted_step(draft, request.POST, step)
    return step_url(draft, step if step in STEPS else draft.step)


def posted_revision(post) -> int | None:
    """The browser's send time of a wizard post (dashboard.js adds it to every htmx request
    of the wizard, rising within a page); None from a browser without JavaScript."""
    return params.index(post.get("revision", ""), digits=16)  # milliseconds since 1970


def merge_posted_step(draft: WizardDraft, post, step: str) -> None:
    """The draft with one step's posted fields written over it, saved. A step's own post
    (Next, Back, a row added) always writes, and marks its revision as the newest: the live
    checks of the same form sent before it, answered after it, then write nothing
    (write_live_check)."""
    draft.data = posting.merge_post(draft.data, post, step)
    if step == "resources":  # left with Next or Back: its Workers are chosen
        draft.data = changes.with_workers_chosen(draft.data)
    fields = ["data", "updated"]
    revision = posted_revision(post)
    if revision is not None and revision > draft.revision:
        draft.revision = revision
        fields.append("revision")
    draft.save(update_fields=fields)


def write_live_check(draft: WizardDraft, data: dict, post) -> bool:
    """What a field's live check or the resource check posted, written to the draft unless
    a newer post of the person's form was written first (htmx sends them in parallel and
    the server may answer them in any order: an older one must not write back a value the
    person has changed since, e.g. an empty mount path over the one typed before Next).
    True when written."""
    revision = posted_revision(post)
    if revision is None:
        draft.data = data
        draft.save(update_fields=["data", "updated"])
        return True
    written = WizardDraft.objects.filter(pk=draft.pk, revision__lt=revision).update(
        data=data, revision=revision, updated=timezone.now())
    if written:
        draft.data, draft.revision = data, revision
    return bool(written)


def new_draft(request: HttpRequest, data: dict, source: str = "",
              base: dict | None = None, kind: JobKind | None = None) -> WizardDraft:
    """A draft of `kind` (the default kind if None) for the signed-in person."""
    WizardDraft.objects.filter(user=request.user,
                               updated__lt=timezone.now() - DRAFT_MAX_AGE).delete()
    return WizardDraft.objects.create(user=request.user, data=data, source=source, base=base,
                                      step="configuration",
                                      kind=(kind or default_kind()).slug)


def _default_namespace(request: HttpRequest, projects: list[Project],
                       creatable: list[str] | None = None) -> str:
    """The remembered project, else the first; among those the person may create in, when
    known."""
    names = [p.name for p in projects]
    if creatable:
        names = [n for n in names if n in creatable]
    remembered = request.session.get(PROJECT_KEY, "")
    if remembered in names:
        return remembered
    return names[0] if names else ""


def fresh_data(request: HttpRequest, projects: list[Project],
               spec: JobSpec | None = None, keep: dict | None = None,
               creatable: list[str] | None = None) -> dict:
    """Draft data for a spec (or the default kind's defaults), in the person's project
    unless given one."""
    data = drafts.data_from_spec(spec or new_spec())
    keep = keep or {}
    for name in ("namespace", "name"):
        if keep.get(name):
            data[name] = keep[name]
    if not data.get("namespace"):
        data["namespace"] = _default_namespace(request, projects, creatable)
    return data


def submitted_steps(draft: WizardDraft) -> list[str]:
    """The steps whose Next was pressed while they had errors (their messages show)."""
    value = draft.data.get("_submitted")
    return value if isinstance(value, list) else []


def only_mpijobs(request: HttpRequest, kind: JobKind, project: str, name: str,
                 action: str) -> HttpResponse:
    """Clone or Retry (`action`: "clone" or "retry") of a job this dashboard cannot create."""
    return render(request, "training/job_retry.html", {
        "unsupported": True, "kind": kind, "project": project, "name": name,
        "action": action}, status=400)
