"""The wizard's Resource check and Review on a phone and at 200% zoom (WCAG 1.4.10 reflow):
no sideways scrolling, labels apart from numbers, and no serious axe finding."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import SCREENSHOTS, sign_in
from tests.e2e.test_accessibility import serious_findings

# 390 px: a phone; 1280 px at 200% zoom lays out as 640 CSS px; 320 px: WCAG's own width
SIZES = {"phone": (390, 1), "zoom-200": (640, 2), "320": (320, 1)}
WIDE = "() => document.documentElement.scrollWidth - window.innerWidth"
# what sticks out past the window's right edge (a page may clip it rather than scroll)
OUTSIDE = """region => [...region.querySelectorAll('*')]
  .filter(el => el.getBoundingClientRect().right > window.innerWidth + 1)
  .map(el => el.tagName + '.' + el.className + ': ' + (el.textContent || '').trim().slice(0, 40))"""
# where a cell's value starts, as a part of the cell's width (its label is before it)
VALUE_AT = """td => { const text = [...td.childNodes].find(n => n.nodeType === 3 && n.data.trim());
  const range = document.createRange(); range.selectNodeContents(text);
  const cell = td.getBoundingClientRect();
  return (range.getBoundingClientRect().left - cell.left) / cell.width; }"""


@pytest.mark.parametrize("size", SIZES)
def test_the_resource_check_and_review_reflow_and_pass_axe(browser, live_dashboard, size):
    width, scale = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": 800},
                                  device_scale_factor=scale, bypass_csp=True)
    page = context.new_page()
    try:
        sign_in(page, live_dashboard, "alice", next_path="/jobs/new/")
        page.get_by_role("button", name="Create an MPIJob").click()
        page.get_by_label("Project").select_option("team-cv")
        page.get_by_label("Job name").fill(f"e2e-reflow-{uuid.uuid4().hex[:5]}")
        page.get_by_label("Training image").fill("quay.io/opendatahub/horovod:0.28.1-pytorch2.1")
        page.get_by_label("Command").fill("horovodrun -np 20 python /workspace/train.py")
        page.get_by_role("button", name="Next").click()
        expect(page.get_by_role("heading", name="Resources")).to_be_visible()
        # over team-cv's quota: the quota table, the problems and the fixes are all shown
        page.get_by_label("Number of workers").fill("5")
        page.get_by_label("GPUs per worker").fill("4")
        page.get_by_label("Number of workers").press("Tab")
        check = page.get_by_role("region", name="Resource check")
        expect(check).to_contain_text("Requested 20 GPUs")
        assert page.evaluate(WIDE) <= 0, "the Resource check scrolls sideways"
        assert check.evaluate(OUTSIDE) == []
        # each figure of the quota table stands apart from its label ("In use   38", not
        # "In use38"): the label on the left, the figure in a column of its own
        in_use = check.locator("td[data-label]").nth(1)
        assert in_use.evaluate("td => getComputedStyle(td, '::before').content") == '"In use"'
        assert in_use.evaluate(VALUE_AT) > 0.3
        check.screenshot(path=str(SCREENSHOTS / f"wizard-resource-check-{size}.png"))
        findings = serious_findings(page, f"resources at {size}")
        page.get_by_role("button", name="Next").click()
        expect(page.get_by_role("heading", name="Review")).to_be_visible()
        expect(page.get_by_role("region", name="Resource check")).to_contain_text(
            "Requested 20 GPUs")
        assert page.evaluate(WIDE) <= 0, "the review scrolls sideways"
        assert page.locator("main").evaluate(OUTSIDE) == []
        findings += serious_findings(page, f"review at {size}")
        assert findings == []
    finally:
        context.close()
