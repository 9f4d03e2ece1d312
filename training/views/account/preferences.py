"""The user menu's choices: the colour theme and the language (Django's set_language, with
its way back checked here)."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django.views.i18n import set_language as django_set_language

from training.web import theme


def back_to(request: HttpRequest) -> str:
    """Where a menu's choice returns: the `next` it names when that is a path of this site
    ("/jobs/?q=bert"), else the page it was chosen on (the Referer, when it is this site's),
    else the job list. A bare word ("x", "jobs") is no address: Django would take it for
    a URL name."""
    for candidate in (request.POST.get("next", ""), request.META.get("HTTP_REFERER", "")):
        if _local(request, candidate):
            parts = urlsplit(candidate)
            return parts.path + (f"?{parts.query}" if parts.query else "")
    return reverse("training-job-list")


def _local(request: HttpRequest, url: str) -> bool:
    if not url or not url_has_allowed_host_and_scheme(url, {request.get_host()},
                                                      require_https=request.is_secure()):
        return False
    path = urlsplit(url).path
    return path.startswith("/") and not path.startswith(("//", "/\\"))


@require_POST
def set_theme(request: HttpRequest) -> HttpResponse:
    chosen = request.POST.get("theme", "")
    if chosen not in theme.THEMES:
        message = _("There is no theme called “%(theme)s”: choose System, Light or Dark.") % {
            "theme": chosen[:40]}
        return render(request, "training/errors/400.html", {"message": message}, status=400)
    # back to the page the menu was on (the form carries no address: a page that must not
    # name what it was asked for, a 403 or 404, would otherwise show it)
    response = HttpResponseRedirect(back_to(request))
    theme.remember(response, chosen)
    return response


@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    """Django's set_language (the cookie, the session), returning where `back_to` says."""
    post = request.POST.copy()
    post["next"] = back_to(request)
    request.POST = post
    return django_set_language(request)
