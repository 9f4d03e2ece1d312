"""Making room from the wizard where the project's quota on the number of MPIJobs is full:
the oldest finished jobs the person may delete (odh.training.status.room), deleted with
their token after a confirmation, each delete audited as the job page's Delete is; then
back to the draft, as it was, with the resource check showing the room."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods

from odh.training import errors
from odh.training.status.room import await_room, room_offer
from training import mutations
from training.cluster import user_client
from training.projects import projects_for_user
from training.views.wizard.base import get_draft_for_user, step_url
from training.wizard import checks


@require_http_methods(["GET", "POST"])
def job_new_make_room(request: HttpRequest, key) -> HttpResponse:
    """GET: the jobs that would be deleted, and a confirmation; POST: delete them."""
    draft = get_draft_for_user(request, key)
    back = request.POST.get("next") or request.GET.get("next") or "resources"
    back = back if back in ("resources", "review") else "resources"
    back_url = step_url(draft, back) + "#resource-check"
    with user_client(request) as client:
        projects = projects_for_user(request, client)
        facts, spec, found = checks.check_draft_for_user(client, draft.data, draft.base,
                                                         projects, draft.job_kind)
        fit = checks.fit_for(spec, facts, found)
        offer = room_offer(client, spec.namespace, fit) \
            if fit is not None and fit.count_quota_full else None
        if offer is None or not offer.makes_room:
            messages.info(request, offer.shortfall() if offer is not None else _(
                "The project's quota on the number of jobs has room: nothing needs deleting."))
            return redirect(back_url)
        if request.method == "POST":
            if request.POST.getlist("job") != offer.names:
                # someone deleted or finished a job meanwhile: confirm what is offered now
                messages.warning(request, _("The oldest finished jobs have changed since you "
                                            "looked: nothing was deleted. Check the list "
                                            "again."))
            else:
                failed = _delete(request, client, offer)
                if failed:
                    messages.error(request, failed)
                    return redirect(back_url)
                counted = await_room(client, spec.namespace)
                text = ngettext("Deleted the finished job %(names)s. Your job is as you left it.",
                                "Deleted the finished jobs %(names)s. Your job is as you left "
                                "it.", len(offer.names)) % {"names": ", ".join(offer.names)}
                if not counted:
                    text += " " + _("The quota has not counted them out yet: the resource "
                                    "check shows the room in a moment.")
                messages.success(request, text)
                return redirect(back_url)
    return render(request, "training/wizard/make_room.html", {
        "draft": draft, "offer": offer, "next": back,
        "back_url": back_url, "project": spec.namespace})


def _delete(request: HttpRequest, client, offer) -> str:
    """Delete the offered jobs, one audited change each; what went wrong, or ""."""
    for name in offer.names:
        try:
            mutations.change(request, "delete", offer.kind, offer.namespace, name,
                             lambda name=name: client.delete_job(offer.kind, offer.namespace,
                                                                 name))
        except errors.NotFound:
            continue  # gone already: it no longer counts
        except errors.Unauthorized:
            raise
        except errors.ClusterError as e:
            return _("“%(name)s” was not deleted, so there is no room yet: %(reason)s") % {
                "name": name, "reason": e.message}
    return ""
