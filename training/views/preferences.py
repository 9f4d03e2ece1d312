"""The user menu's choices: the colour theme (the language is Django's own set_language)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from .. import theme


@require_POST
def set_theme(request: HttpRequest) -> HttpResponse:
    chosen = request.POST.get("theme", "")
    if chosen not in theme.THEMES:
        message = _("There is no theme called “%(theme)s”: choose System, Light or Dark.") % {
            "theme": chosen[:40]}
        return render(request, "training/errors/400.html", {"message": message}, status=400)
    # back to the page the menu was on (the form carries no address: a page that must not
    # name what it was asked for, a 403 or 404, would otherwise show it)
    back = request.POST.get("next") or request.META.get("HTTP_REFERER", "")
    if not url_has_allowed_host_and_scheme(back, {request.get_host()},
                                           require_https=request.is_secure()):
        back = reverse("training-job-list")
    response = redirect(back)
    theme.remember(response, chosen)
    return response
