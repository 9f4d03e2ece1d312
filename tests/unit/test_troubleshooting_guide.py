"""The troubleshooting guide (docs/troubleshooting/): a page per scenario the diagnosis tells,
each with the sections people look for, linked the way the dashboard serves them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from odh.training.diagnosis import PAGES

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "troubleshooting"
SECTIONS = ["## Symptom", "## How the dashboard tells", "## Causes", "## What to do"]
RULES = Path(__file__).resolve().parents[2] / "odh" / "training" / "diagnosis"


@pytest.mark.parametrize("slug", sorted(PAGES))
def test_every_scenario_has_a_page_with_its_sections(slug):
    text = (GUIDE / f"{slug}.md").read_text()
    assert text.startswith("# ")
    positions = [text.find(section) for section in SECTIONS]
    assert -1 not in positions, f"{slug}.md lacks {SECTIONS[positions.index(-1)]}"
    assert positions == sorted(positions)


def test_every_scenario_a_rule_names_has_a_page():
    named = set()
    for path in RULES.rglob("*.py"):
        named |= set(re.findall(r'Diagnosis\(\s*"([a-z-]+)"', path.read_text()))
        named |= set(re.findall(r'suggest\.guide\("([a-z-]+)"\)', path.read_text()))
    assert named, "no scenario found in the rules"
    assert named <= set(PAGES), f"no page for {sorted(named - set(PAGES))}"


def test_the_index_links_every_page_and_pages_link_only_pages_that_exist():
    index = (GUIDE / "README.md").read_text()
    for slug in PAGES:
        assert f"({slug}.md)" in index, f"the index does not link {slug}.md"
    for path in GUIDE.glob("*.md"):
        for target in re.findall(r"\]\(([a-z0-9-]+)\.md[#)]", path.read_text()):
            assert (GUIDE / f"{target}.md").exists(), f"{path.name} links {target}.md"

