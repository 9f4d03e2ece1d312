"""Stylesheets made from installed packages (not files of ours): see training/web/plotly_css.py."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

from training.web.plotly_css import stylesheet


@login_not_required  # the sign-in and error pages share the base template's <link>
@require_safe
@cache_control(public=True, max_age=3600)
def plotly_css(request: HttpRequest) -> HttpResponse:
    return HttpResponse(stylesheet(), content_type="text/css; charset=utf-8")
