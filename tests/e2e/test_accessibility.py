"""WCAG 2.1 A/AA as axe-core (npm, a test dependency) finds it: every page and tab, as
alice, bob, charlie and admin, at desktop and phone widths, with no serious or critical
finding; the page frame by keyboard; reflow at 320 px and 200% zoom (WCAG 1.4.10)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import ROOT, sign_in

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
ALICES_JOB = "/jobs/team-nlp/mpijob/bert-large-pretrain/"
BOBS_JOB = "/jobs/research/pytorchjob/bert-classifier-ddp/"
TABS = ("overview", "topology", "logs", "events", "metrics", "artifacts", "configuration")
EVERYONE = ("/jobs/", "/jobs/?status=Failed", "/help/troubleshooting/",
            "/help/troubleshooting/oom-killed/", "/jobs/compare/",
            "/jobs/team-nlp/mpijob/no-such-job/", "/jobs/new/")
PAGES = {
    "alice": [*EVERYONE, *(f"{ALICES_JOB}?tab={t}" for t in TABS),
              # a filter that cannot be read; the confirmation of an action on ticked jobs
              "/jobs/?labels=team+in+nlp&from=2026-11-30&user=alice",
              "/jobs/bulk/?action=suspend&job=team-nlp/mpijob/bert-large-pretrain"
              "&job=research/pytorchjob/bert-classifier-ddp"],
    "bob": [*EVERYONE, *(f"{BOBS_JOB}?tab={t}" for t in TABS)],
    "charlie": [*EVERYONE],
    "admin": [*EVERYONE, "/cluster/", "/cluster/audit/",
              *(f"{ALICES_JOB}?tab={t}" for t in TABS)],
}
SIZES = {"desktop": (1440, 900), "phone": (390, 844)}


def serious_findings(page, where: str) -> list[str]:
    """axe's serious and critical violations on the page as it is now."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags},"
        " resultTypes: ['violations']})", WCAG)
    return [f"{where}: {v['id']} ({v['impact']}) {v['help']}: "
            f"{[n['target'] for n in v['nodes']][:3]}"
            for v in result["violations"] if v["impact"] in ("serious", "critical")]


def _settled(page) -> None:
    """Loaded, and a chart tab drawn (Plotly's SVG or the chart's empty message)."""
    page.wait_for_load_state("load")
    if "tab=metrics" in page.url or page.url.endswith("/cluster/"):
        charts = page.locator(".main-svg, .dash-chart-empty")
        expect(charts.first).to_be_attached(timeout=15_000)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("user", PAGES)
def test_no_page_has_a_serious_accessibility_finding(browser, live_dashboard, user, size):
    width, height = SIZES[size]
    # axe is added as a script of the page: the Content-Security-Policy would refuse it
    context = browser.new_context(viewport={"width": width, "height": height},
                                  bypass_csp=True)
    page = context.new_page()
    try:
        sign_in(page, live_dashboard, user)
        findings: list[str] = []
        for path in PAGES[user]:
            page.goto(live_dashboard + path)
            _settled(page)
            findings += serious_findings(page, path)
        # the frame's menus open: the user menu, and on a phone the navigation
        page.goto(live_dashboard + "/jobs/")
        page.locator(".dash-user-menu summary").click()
        findings += serious_findings(page, "/jobs/ with the user menu open")
        if size == "phone":
            page.keyboard.press("Escape")
            page.get_by_role("button", name="Navigation").click()
            expect(page.get_by_role("navigation", name="Main")).to_be_visible()
            findings += serious_findings(page, "/jobs/ with the navigation open")
        assert findings == []
    finally:
        context.close()


def test_on_a_phone_the_navigation_opens_from_the_masthead_and_closes_on_escape(
        page, live_dashboard):
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, live_dashboard, "alice")
    nav = page.get_by_role("navigation", name="Main")
    toggle = page.get_by_role("button", name="Navigation")
    expect(nav).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.focus()
    page.keyboard.press("Enter")
    expect(nav).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(nav.get_by_role("link", name="Training jobs")).to_be_focused()  # focus moved in
    page.keyboard.press("Escape")
    expect(nav).to_be_hidden()
    expect(toggle).to_be_focused()


def test_on_a_desktop_the_navigation_is_beside_the_page_and_can_be_closed(page,
                                                                         live_dashboard):
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, live_dashboard, "alice")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Training jobs")).to_have_attribute(
        "aria-current", "page")
    for label in ("Create", "Templates", "Troubleshooting"):
        expect(nav.get_by_role("link", name=label, exact=True)).to_be_visible()
    page.get_by_role("button", name="Navigation").click()
    expect(nav).to_be_hidden()
    page.get_by_role("button", name="Navigation").click()
    expect(nav).to_be_visible()


def test_the_project_context_in_the_masthead_follows_the_job_and_switches_the_list(
        page, live_dashboard):
    sign_in(page, live_dashboard, "alice", ALICES_JOB)
    context = page.locator(".dash-context summary")
    expect(context).to_contain_text("team-nlp")
    expect(page.get_by_role("navigation", name="Breadcrumb")).to_contain_text("team-nlp")
    context.click()
    page.locator(".dash-context").get_by_role("link", name="team-cv").click()
    expect(page).to_have_url(f"{live_dashboard}/jobs/?project=team-cv")
    expect(context).to_contain_text("team-cv")
    expect(page.get_by_role("link", name="whisper-asr-eval")).to_be_visible()


def test_keyboard_only_open_a_job_switch_tabs_and_open_a_workers_logs(page, live_dashboard):
    sign_in(page, live_dashboard, "alice")
    link = page.get_by_role("link", name="bert-large-pretrain")
    link.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="bert-large-pretrain", level=1)).to_be_visible()
    topology = page.get_by_role("navigation", name="Job details").get_by_role(
        "link", name="Topology")
    topology.focus()
    page.keyboard.press("Enter")
    heading = page.locator("#tab-heading")
    expect(heading).to_have_text("Topology")
    expect(heading).to_be_focused()  # not back at the top of the page
    page.keyboard.press("Tab")  # the first pod of the topology: the Launcher
    page.keyboard.press("Tab")  # then Worker 0
    worker = page.locator("#topology-pod-bert-large-pretrain-worker-0")
    expect(worker).to_be_focused()
    page.keyboard.press("Enter")
    expect(heading).to_have_text("Logs")
    expect(heading).to_be_focused()
    expect(page.get_by_label("Show logs of")).to_have_value("bert-large-pretrain-worker-0")


@pytest.mark.parametrize("width", [320, 1280])
def test_reflow_at_320_px_and_at_200_percent_zoom_needs_no_sideways_scrolling(
        browser, live_dashboard, width):
    """WCAG 1.4.10: 1280 px at 200% zoom lays out as 640 CSS px; 320 px is the criterion's
    own width. The list and a job page fit across, and the navigation stays reachable."""
    scale = 2 if width == 1280 else 1
    context = browser.new_context(viewport={"width": width // scale, "height": 800},
                                  device_scale_factor=scale)
    page = context.new_page()
    try:
        sign_in(page, live_dashboard, "alice")
        wide = "() => document.documentElement.scrollWidth - window.innerWidth"
        expect(page.get_by_role("link", name="bert-large-pretrain")).to_be_visible()
        assert page.evaluate(wide) <= 0
        page.goto(live_dashboard + ALICES_JOB)
        expect(page.get_by_role("heading", name="bert-large-pretrain", level=1)).to_be_visible()
        assert page.evaluate(wide) <= 0
        page.get_by_role("button", name="Navigation").click()
        expect(page.get_by_role("navigation", name="Main").get_by_role(
            "link", name="Training jobs")).to_be_visible()
    finally:
        context.close()
