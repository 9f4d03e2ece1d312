"""The person's time zone: the browser's (static/js/dashboard.js reads
`Intl.DateTimeFormat().resolvedOptions().timeZone` and sends it once, as a cookie), so
dates and times on every page are in their own zone, written the way their language
writes them (Django's localized formats). Anything unknown falls back to UTC."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

COOKIE = "dashboard_tz"


def zone_named(name: str) -> zoneinfo.ZoneInfo | None:
    if not name or len(name) > 64 or ".." in name or name.startswith("/"):
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None


class TimeZoneMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        zone = zone_named(request.COOKIES.get(COOKIE, ""))
        if zone is None:
            timezone.deactivate()
        else:
            timezone.activate(zone)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
