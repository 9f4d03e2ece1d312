"""Cluster administrators change limits from /cluster/: a project's ResourceQuota
(/cluster/quotas/<project>/<quota>/) and a Kueue ClusterQueue's nominal quota
(/cluster/queues/<queue>/quota/); training/views/cluster/workload_priority.py a Workload's priority.

Each is a page of its own, not a form inside the overview: the overview's numbers are
fetched again whenever the cluster moves, which would throw away what is being typed.
Only people who may see the cluster pages get the form (training/permissions.py
`cluster_admin`); everyone else, a project's own administrators included, gets the 403 page
(they see the numbers on /projects/<project>/). The change itself is made with the
person's own token, so the cluster's RBAC decides it; what it refuses is said in plain
words with what was typed kept. What is typed is checked by
odh.training.capacity.quota_edit (its docstring: negative, not a quantity, below use). One
audit row per change, with each limit's old and new value.

Nothing caches a quota: the wizard's check and the project page read it at every visit, so
a change counts there at once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from odh.training import errors
from odh.training.capacity import quota_edit as edit
from odh.training.cluster.api import is_namespace_name, is_object_name
from odh.training.paths import get_path
from training import audit, kueue_settings
from training.cluster import user_client
from training.permissions import cluster_admin
from training.views.pages import render_page


def not_admin(request: HttpRequest) -> HttpResponse:
    return render(request, "training/errors/403.html", {
        "explanation": _("Only cluster administrators change quotas and queues. A project's "
                         "administrators see its quota on the project's page; ask an "
                         "OpenShift cluster administrator to change it."),
        "request_id": getattr(request, "request_id", "-")}, status=403)


def read_for_admin(request: HttpRequest, client, audit_row: Callable[[str, str], object],
                   read: Callable[[], dict]) -> dict | HttpResponse:
    """What `read()` returns, for a cluster administrator; for anyone else the 403 page (a
    POST of theirs audited as denied). 404 when the object is not there."""
    if not cluster_admin(request, client):
        if request.method == "POST":
            audit_row("denied", "not a cluster administrator")
        return not_admin(request)
    try:
        return read()
    except errors.NotFound:
        raise Http404(request.path) from None


def refusal(e: errors.ClusterError, what: str) -> tuple[str, int]:
    """(sentence, status) for the cluster's refusal of a change to `what`."""
    if isinstance(e, errors.Forbidden):
        return (_("The cluster refused: your account may not change %(what)s. Nothing was "
                  "changed. (%(reason)s)") % {"what": what, "reason": e.message}, 403)
    if isinstance(e, errors.Invalid) or e.status == 400:
        return (_("The cluster refused these values for %(what)s: %(reason)s. Nothing was "
                  "changed; correct them and save again.") % {"what": what,
                                                                "reason": e.message}, 422)
    return (_("The cluster could not make the change to %(what)s: %(reason)s. Nothing was "
              "changed; try again in a moment.") % {"what": what, "reason": e.message}, 503)


def conflict_text(fields: list[edit.AmountField]) -> str:
    now = "; ".join(_("%(resource)s is now %(now)s (you saw %(seen)s)") % {
        "resource": f.title, "now": f.current or "-", "seen": f.shown or "-"}
        for f in edit.stale(fields))
    return _("Someone changed this since you opened the page: %(changes)s. Nothing was "
             "changed; your values are kept below: check them and save again.") % {
        "changes": now or _("its version moved on")}


def apply_form(request: HttpRequest, fields: list[edit.AmountField], what: str,
               write: Callable[[], object], audit_row: Callable[[str, str], object],
               required: bool = False) -> tuple[str, int]:
    """Read the form into `fields`, check it, write and audit: ("", 200) when the change
    is made (or there was nothing to change), else (why not, status)."""
    for f in fields:
        f.typed = request.POST.get(f.name, "")
        f.shown = request.POST.get(f"{f.name}-shown", f.current)
        edit.check_amount(f, what, required)
    if any(f.error for f in fields):
        return _("Nothing was changed: correct the values marked below."), 400
    if edit.stale(fields):
        detail = conflict_text(fields)
        audit_row("failed", detail)
        for f in fields:
            f.shown = f.current  # saved again, the change is made on what is there now
        return detail, 409
    if not edit.changes(fields):
        return "", 200
    try:
        write()
    except errors.Conflict:
        audit_row("failed", _("changed by someone else meanwhile"))
        return _("Someone changed this while you saved it. Nothing was changed; open the "
                 "page again to see what it holds now."), 409
    except errors.ClusterError as e:
        sentence, status = refusal(e, what)
        audit_row("denied" if status == 403 else "failed", e.message)
        return sentence, status
    audit_row("success", "; ".join(c.text for c in edit.changes(fields)))
    return "", 200


def form_page(request: HttpRequest, context: dict, problem: str, status: int) -> HttpResponse:
    context = {**context, "problem": problem}
    response = render_page(request, "training/cluster_limits.html", context, "limits-form")
    response.status_code = status
    return response


def done(request: HttpRequest, fields: list[edit.AmountField], what: str, back: str
         ) -> HttpResponse:
    made = edit.changes(fields)
    if made:
        messages.success(request, _("%(what)s changed: %(changes)s.") % {
            "what": what, "changes": "; ".join(
                _("%(resource)s %(old)s → %(new)s") % {
                    "resource": c.title, "old": c.old or _("no limit"),
                    "new": c.new or _("no limit")} for c in made)})
        for f in fields:
            if f.warning:
                messages.warning(request, f.warning)
    else:
        messages.info(request, _("Nothing to change: the values are those of %(what)s.") % {
            "what": what})
    return redirect(back)


def edit_page(request: HttpRequest, context: dict, what: str, write: Callable[[], object],
              audit_row: Callable[[str, str], object], required: bool = False
              ) -> HttpResponse:
    """The form (GET); the change (POST): back to the overview when made, else the form
    again with why not and what was typed."""
    if request.method == "GET":
        return form_page(request, context, "", 200)
    problem, status = apply_form(request, context["fields"], what, write, audit_row, required)
    if problem:
        return form_page(request, context, problem, status)
    return done(request, context["fields"], what, context["back"])


@require_http_methods(["GET", "POST"])
def quota_edit(request: HttpRequest, project: str, quota: str) -> HttpResponse:
    if not is_namespace_name(project) or not is_object_name(quota):
        raise Http404(project)
    what = _("the quota %(quota)s of %(project)s") % {"quota": quota, "project": project}
    with user_client(request) as client:
        row = functools.partial(audit.record, request, "set_quota", "ResourceQuota", project,
                                quota)
        current = read_for_admin(request, client, row,
                                 lambda: client.get_quota(project, quota))
        if isinstance(current, HttpResponse):
            return current
        fields = edit.quota_fields(current)
        context = {"title": _("Quota %(quota)s of project %(project)s") % {
                       "quota": quota, "project": project},
                   "intro": _("What the project's pods may request together, and how many "
                              "MPIJobs it may hold. Leave a field empty for no limit."),
                   "fields": fields, "action": request.path,
                   "back": reverse("training-cluster-overview") + f"#project-{project}",
                   "used_label": _("In use now")}
        version = str(get_path(current, ["metadata", "resourceVersion"], "") or "")
        return edit_page(
            request, context, what,
            lambda: client.patch_quota(project, quota, edit.quota_patch(fields, version)), row)


@require_http_methods(["GET", "POST"])
def nominal_quota_edit(request: HttpRequest, queue: str) -> HttpResponse:
    if not is_object_name(queue):
        raise Http404(queue)
    what = _("the nominal quota of the cluster queue %(queue)s") % {"queue": queue}
    with user_client(request) as client:
        row = functools.partial(audit.record, request, "set_nominal_quota", "ClusterQueue",
                                "", queue)
        current = read_for_admin(request, client, row, lambda: client.get_cluster_queue(queue))
        if isinstance(current, HttpResponse):
            return current
        fields = edit.nominal_fields(current)
        context = {"title": _("Nominal quota of the cluster queue %(queue)s") % {
                       "queue": queue},
                   "intro": _("What Kueue admits from this queue's workloads at once, per "
                              "flavor, before borrowing from its cohort."),
                   "fields": fields, "action": request.path,
                   "back": reverse("training-cluster-overview") + f"#queue-{queue}",
                   "used_label": _("Admitted now")}
        def write() -> None:
            client.patch_cluster_queue(queue, edit.nominal_patch(current, fields))
            kueue_settings.forget(queue)  # the wizard's queue check reads it again

        return edit_page(request, context, what, write, row, required=True)
