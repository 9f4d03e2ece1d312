"""The troubleshooting guide: docs/troubleshooting/*.md, one page per diagnosis scenario,
served as the repository has them (Markdown rendered once per process, page and language),
in the reader's language where it is translated (docs/troubleshooting/<language>/, the
same file names), else in English.

The pages are the product's own files, not anyone's input; links between them
(`oom-killed.md`) become the dashboard's addresses. Only the slugs of the guide's page
list (odh.training.diagnosis.PAGES) and its index are served: a URL cannot name any
other file.
"""

from __future__ import annotations

import functools
import html
import re

import markdown
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape, strip_tags
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from odh.training.diagnosis import PAGES, page_title

_LINK = re.compile(r'href="(?P<slug>[a-z0-9-]+|README)\.md(?P<anchor>#[^"]*)?"')
_TITLE = re.compile(r"<h1[^>]*>.*?</h1>\s*", re.S)
_TABLE = re.compile(r"<table>.*?</table>", re.S)
_HEADER_CELL = re.compile(r"<th(?:\s[^>]*)?>(?P<text>.*?)</th>", re.S)


def _href(match: re.Match) -> str:
    slug = match.group("slug")
    if slug == "README":
        url = reverse("training-help")
    elif slug in PAGES:
        url = reverse("training-help-page", args=[slug])
    else:
        return match.group(0)
    return f'href="{url}{match.group("anchor") or ""}"'


def _scrolling_table(match: re.Match) -> str:
    """A table in a box of its own that scrolls sideways where the screen is too narrow for
    it (the page itself never does), reachable by keyboard and named by its columns."""
    columns = [html.unescape(strip_tags(m.group("text"))).strip()
               for m in _HEADER_CELL.finditer(match.group(0))]
    # Translators: the name of a table in the troubleshooting guide, read by screen readers;
    # `columns` are its column headings, separated by commas
    label = _("Table: %(columns)s") % {"columns": ", ".join(c for c in columns if c)}
    return (f'<div class="dash-help__table" role="region" tabindex="0" '
            f'aria-label="{escape(label)}">{match.group(0)}</div>')


def _page_path(slug: str, language: str):
    """The page in `language` where it is translated, else the English one."""
    if language in dict(settings.LANGUAGES) and language != settings.LANGUAGE_CODE:
        translated = settings.TROUBLESHOOTING_DIR / language / f"{slug}.md"
        if translated.is_file():
            return translated
    return settings.TROUBLESHOOTING_DIR / f"{slug}.md"


@functools.lru_cache(maxsize=256)
def _rendered(slug: str, language: str = "en") -> tuple[str, str]:
    """(title, HTML body without its title) of a page, in `language` where translated."""
    path = _page_path(slug, language)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        raise Http404(_("The troubleshooting guide has no page “%(page)s”.")
                      % {"page": slug}) from None
    first = text.splitlines()[0] if text else ""
    title = first.removeprefix("# ").strip() if first.startswith("# ") else page_title(slug)
    body = markdown.markdown(text, extensions=["tables", "fenced_code", "toc"],
                             output_format="html")
    body = _TABLE.sub(_scrolling_table, _LINK.sub(_href, _TITLE.sub("", body, count=1)))
    return title, body


@require_GET
def guide_index(request: HttpRequest) -> HttpResponse:
    title, body = _rendered("README", get_language() or "en")
    return render(request, "training/help_page.html", {
        "title": title, "body": mark_safe(body),  # noqa: S308 (the repository's own pages)
        "pages": [(slug, str(entry[0])) for slug, entry in PAGES.items()], "slug": ""})


@require_GET
def guide_page(request: HttpRequest, slug: str) -> HttpResponse:
    if slug not in PAGES:
        raise Http404(_("The troubleshooting guide has no page “%(page)s”.") % {"page": slug})
    title, body = _rendered(slug, get_language() or "en")
    return render(request, "training/help_page.html", {
        "title": title, "body": mark_safe(body),  # noqa: S308 (the repository's own pages)
        "pages": [(s, str(entry[0])) for s, entry in PAGES.items()], "slug": slug})
