"""htmx as django-htmx means it: request.htmx and django_htmx.http's helpers
(HttpResponseClientRedirect, push_url, reswap...), never HX-* headers read or written by
hand in the dashboard's code."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BY_HAND = re.compile(r"""["']HX-[A-Za-z-]+["']|HTTP_HX_""")


def test_no_module_reads_or_writes_an_hx_header_by_hand():
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for package in ("training", "dashboard")
             for path in sorted((ROOT / package).rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if BY_HAND.search(line)]
    assert not found, "\n".join(found)


def test_htmx_middleware_runs_before_sign_in_and_the_error_pages():
    from django.conf import settings

    order = list(settings.MIDDLEWARE)
    htmx = order.index("django_htmx.middleware.HtmxMiddleware")
    assert htmx < order.index("training.views.middleware.DashboardLoginRequiredMiddleware")
    assert htmx < order.index("training.views.middleware.ClusterErrorMiddleware")
