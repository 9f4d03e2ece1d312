"""The colour theme a person chose in the user menu: PatternFly 6's light or dark theme, or
"system" (the default), which follows the browser's `prefers-color-scheme`. Kept in a
cookie, so the page is drawn in the right theme from its first byte (no flash of light)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse

COOKIE = "dashboard_theme"
THEMES = ("system", "light", "dark")
ONE_YEAR = 365 * 24 * 3600


def theme_of(request: HttpRequest) -> str:
    chosen = request.COOKIES.get(COOKIE, "")
    return chosen if chosen in THEMES else "system"


def remember(response: HttpResponse, theme: str) -> None:
    response.set_cookie(COOKIE, theme, max_age=ONE_YEAR, samesite="Lax",
                        secure=settings.SESSION_COOKIE_SECURE)
