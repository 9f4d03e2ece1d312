"""A cluster administrator changes a Kueue Workload's priority
(/cluster/workloads/<project>/<workload>/priority/, linked from /cluster/queues/): one of the
cluster's WorkloadPriorityClasses (odh/training/queues/priority.py says what is written),
with the person's own token, audited with the old and new priority. The same rights and
refusals as the quota pages (training/views/cluster/quota_admin.py)."""

from __future__ import annotations

import functools

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from odh.training import errors
from odh.training.cluster.api import is_namespace_name, is_object_name
from odh.training.paths import get_path
from odh.training.queues import priority
from training import audit, kueue_settings
from training.cluster import user_client
from training.views.cluster.quota_admin import read_for_admin, refusal
from training.views.pages import render_page

VERB = "set_priority"


def _page(request: HttpRequest, context: dict, problem: str, status: int) -> HttpResponse:
    response = render_page(request, "training/cluster_priority.html",
                           {**context, "problem": problem}, "priority-form")
    response.status_code = status
    return response


def _cluster_queue_of(client, project: str, workload: dict) -> str:
    """The ClusterQueue behind a waiting Workload's LocalQueue ("" when unknown)."""
    local = str(get_path(workload, ["spec", "queueName"], "") or "")
    try:
        return str(get_path(client.get_local_queue(project, local),
                            ["spec", "clusterQueue"], "") or "") if local else ""
    except errors.ClusterError:
        return ""


@require_http_methods(["GET", "POST"])
def workload_priority(request: HttpRequest, project: str, workload: str) -> HttpResponse:
    if not is_namespace_name(project) or not is_object_name(workload):
        raise Http404(workload)
    with user_client(request) as client:
        row = functools.partial(audit.record, request, VERB, "Workload", project, workload)
        found = read_for_admin(request, client, row,
                               lambda: client.get_workload(project, workload))
        if isinstance(found, HttpResponse):
            return found
        offered = priority.choices(client.list_workload_priority_classes() or [])
        now = priority.current(found)
        owner = next(iter(get_path(found, ["metadata", "ownerReferences"], []) or []), {})
        queue = str(get_path(found, ["status", "admission", "clusterQueue"], "") or "")
        context = {"workload": workload, "project": project, "job": owner.get("name", ""),
                   "now": now, "choices": offered, "back": reverse("training-cluster-queues"),
                   "chosen": request.POST.get("priority", str(get_path(
                       found, ["spec", "priorityClassName"], "") or "")),
                   "shown": request.POST.get("shown", now)}
        if request.method == "GET":
            return _page(request, context, "", 200)
        what = _("the priority of %(workload)s") % {"workload": workload}
        problem = priority.check(found, context["chosen"], offered)
        if problem:
            return _page(request, context, problem, 400)
        if context["shown"] != now:
            row("failed", f"changed meanwhile: {now}")
            context["shown"] = now
            return _page(request, context, _(
                "Someone changed this since you opened the page: the priority is now "
                "%(now)s. Nothing was changed; check your choice and save again.") % {
                "now": now}, 409)
        choice = next(c for c in offered if c.name == context["chosen"])
        if choice.label == now:
            messages.info(request, _("Nothing to change: the values are those of %(what)s.")
                          % {"what": what})
            return redirect(context["back"])
        try:
            client.patch_workload(project, workload, priority.patch(found, choice))
        except errors.ClusterError as e:
            sentence, status = refusal(e, what) if not isinstance(e, errors.Conflict) else (
                _("Someone changed this while you saved it. Nothing was changed; open the "
                  "page again to see what it holds now."), 409)
            row("denied" if status == 403 else "failed", e.message)
            return _page(request, context, sentence, status)
        kueue_settings.forget(queue or _cluster_queue_of(client, project, found))
    row("success", f"priority: {now} -> {choice.label}")
    messages.success(request, _("%(what)s changed: %(changes)s.") % {
        "what": what, "changes": _("%(resource)s %(old)s → %(new)s") % {
            "resource": _("Priority"), "old": now, "new": choice.label}})
    return redirect(context["back"])
