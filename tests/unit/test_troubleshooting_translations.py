"""The troubleshooting guide in every shipped language (docs/troubleshooting/<language>/):
each page translated with the English page's shape, so what a reader copies (commands,
field names, the cluster's words) and where links lead are the same."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from odh.training.diagnosis import PAGES

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "troubleshooting"

LANGUAGES = ["es", "fr", "ja", "ko", "zh-hans"]  # dashboard/settings.py LANGUAGES, but English
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`]+`")  # a span may wrap onto the next line
LINK = re.compile(r"\]\(([^)]+)\)")


def _shape(text: str) -> dict:
    """What a translation keeps as the English page has it: the headings' levels in order,
    the tables' shapes, every code block and code span, and where the links lead."""
    lines = text.splitlines()
    return {
        "headings": [line.split(" ", 1)[0] for line in lines if re.match(r"#+ ", line)],
        "tables": [line.count("|") for line in lines if line.startswith("|")],
        "fences": FENCE.findall(text),
        "code": sorted(" ".join(span.split()) for span in CODE.findall(FENCE.sub("", text))),
        "links": sorted(LINK.findall(text)),
    }


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("slug", ["README", *sorted(PAGES)])
def test_each_page_is_translated_with_the_english_pages_shape(language, slug):
    english = (GUIDE / f"{slug}.md").read_text()
    translated = (GUIDE / language / f"{slug}.md").read_text()
    assert translated.startswith("# ")
    assert _shape(translated) == _shape(english)
    assert translated != english
