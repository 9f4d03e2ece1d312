"""The user menu's choices: the colour theme (the language is Django's own set_language)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from .. import theme


@require_POST
def set_theme(request: HttpRequest) -> HttpResponse:
    chosen = request.POST.get("theme", "")
    if chosen not in theme.THEMES:
        return HttpResponseBadRequest(
            _("There is no theme called “%(theme)s”: choose System, Light or Dark.")
            % {"theme": chosen[:40]})
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, {request.get_host()},
                                           require_https=request.is_secure()):
        back = reverse("training-job-list")
    response = redirect(back)
    theme.remember(response, chosen)
    return response
