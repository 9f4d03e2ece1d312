"""On a phone (issue 21, item 7): a job's tab strip says that it scrolls, the troubleshooting
guide reflows at 390 and 320 px, Plotly's mode bar covers no label of a chart, and the
Metrics tab names the time zone its axes are drawn in."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from odh.training.diagnosis import PAGES
from tests.e2e.conftest import SCREENSHOTS, sign_in
from tests.e2e.test_accessibility import serious_findings

BERT = "/jobs/team-nlp/mpijob/bert-large-pretrain/"
PHONE = {"width": 390, "height": 844}
WIDE = "() => document.documentElement.scrollWidth - window.innerWidth"
# What sticks out past the right edge of the window inside the page's main part, apart from
# what scrolls in a box of its own (a table of the guide). The page frame can hide such an
# overflow from the document's scrollWidth, as it did the guide's 635 px.
STICKING_OUT = """() => {
  const out = [];
  document.querySelectorAll("main *").forEach(e => {
    if (e.closest(".dash-help__table")) return;
    const box = e.getBoundingClientRect();
    if (box.width > 0 && box.right > window.innerWidth + 0.5) {
      out.push(`${e.tagName.toLowerCase()}.${e.className} ends at ${Math.round(box.right)}`);
    }
  });
  return out.slice(0, 5);
}"""


def _context(browser, width: int = 390, **options):
    return browser.new_context(viewport={"width": width, "height": 844}, **options)


def test_on_a_phone_the_job_tabs_show_that_more_tabs_are_hidden(browser, live_dashboard):
    context = _context(browser)
    page = context.new_page()
    try:
        sign_in(page, live_dashboard, "alice", BERT)
        tabs = page.get_by_role("navigation", name="Job details")
        start, end = tabs.locator(".dash-tabs__cue--start"), tabs.locator(".dash-tabs__cue--end")
        last = tabs.get_by_role("link", name="Configuration")
        # tabs hidden on the right: a fade with a chevron there, none on the left
        expect(tabs).to_have_class(re.compile(r"\bdash-tabs--more-end\b"))
        expect(end).to_be_visible()
        expect(start).to_be_hidden()
        expect(last).not_to_be_in_viewport(ratio=1)
        # the cues are decoration: nothing in them for a screen reader
        for cue in (start, end):
            expect(cue).to_have_attribute("aria-hidden", "true")
        # by keyboard: Tab reaches the last tab, which the strip scrolls into view
        overview = tabs.get_by_role("link", name="Overview")
        overview.focus()
        for _ in range(len(tabs.get_by_role("link").all()) - 1):
            page.keyboard.press("Tab")
        expect(last).to_be_focused()
        expect(last).to_be_in_viewport(ratio=1)
        expect(tabs).to_have_class(re.compile(r"\bdash-tabs--more-start\b"))
        expect(tabs).not_to_have_class(re.compile(r"\bdash-tabs--more-end\b"))
        expect(start).to_be_visible()
        expect(end).to_be_hidden()
        # a mouse: a click on a cue scrolls the strip that way
        start.click()
        expect(tabs).to_have_class(re.compile(r"\bdash-tabs--more-end\b"))

        # opened on its last tab, the strip shows it, and says tabs are hidden on the left
        page.goto(live_dashboard + BERT + "?tab=configuration")
        expect(last).to_have_attribute("aria-current", "page")
        expect(last).to_be_in_viewport(ratio=1)
        expect(tabs).to_have_class(re.compile(r"\bdash-tabs--more-start\b"))
        expect(start).to_be_visible()
        # a tab chosen in the strip (swapped in by htmx) is in view too
        tabs.get_by_role("link", name="Overview").click()
        expect(page).to_have_url(re.compile(r"tab=overview"))
        expect(tabs.get_by_role("link", name="Overview")).to_be_in_viewport(ratio=1)
        expect(tabs).to_have_class(re.compile(r"\bdash-tabs--more-end\b"))
        tabs.screenshot(path=str(SCREENSHOTS / "job-tabs-phone.png"))
        assert page.evaluate(WIDE) <= 0
    finally:
        context.close()


def test_on_a_wide_screen_the_job_tabs_show_no_cue(browser, live_dashboard):
    context = _context(browser, width=1440)
    page = context.new_page()
    try:
        sign_in(page, live_dashboard, "alice", BERT)
        tabs = page.get_by_role("navigation", name="Job details")
        expect(tabs.get_by_role("link", name="Configuration")).to_be_in_viewport(ratio=1)
        expect(tabs.locator(".dash-tabs__cue--start")).to_be_hidden()
        expect(tabs.locator(".dash-tabs__cue--end")).to_be_hidden()
    finally:
        context.close()


@pytest.mark.parametrize("width", [390, 320])
def test_the_troubleshooting_guide_reflows_on_a_phone(browser, live_dashboard, width):
    # axe is added as a script of the page: the Content-Security-Policy would refuse it
    context = _context(browser, width=width, bypass_csp=True)
    page = context.new_page()
    try:
        sign_in(page, live_dashboard, "alice", "/help/troubleshooting/")
        findings: list[str] = []
        for path in ["/help/troubleshooting/",
                     *(f"/help/troubleshooting/{slug}/" for slug in PAGES)]:
            if path != "/help/troubleshooting/":
                page.goto(live_dashboard + path)
            expect(page.get_by_role("heading", level=1)).to_be_visible()
            assert page.evaluate(WIDE) <= 0, f"{path} scrolls sideways at {width} px"
            assert page.evaluate(STICKING_OUT) == [], f"{path} is wider than {width} px"
            if path in ("/help/troubleshooting/", "/help/troubleshooting/exit-code/"):
                findings += serious_findings(page, f"{path} at {width} px")
        # a table too wide for the screen scrolls in its own region, named and reachable by Tab
        page.goto(live_dashboard + "/help/troubleshooting/")
        table = page.get_by_role("region", name="Table: class, what it means, who usually acts")
        expect(table.get_by_role("table")).to_be_visible()
        table.focus()
        expect(table).to_be_focused()
        page.screenshot(path=str(SCREENSHOTS / f"troubleshooting-{width}.png"), full_page=True)
        assert findings == []
    finally:
        context.close()


def _boxes(chart, selector: str) -> list[dict]:
    return [b for b in (e.bounding_box() for e in chart.locator(selector).all()) if b]


def _overlap(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


@pytest.mark.parametrize("width", [390, 320])
def test_the_mode_bar_covers_no_label_of_a_chart(browser, live_dashboard, width):
    context = _context(browser, width=width)
    page = context.new_page()
    try:
        sign_in(page, live_dashboard, "admin", BERT + "?tab=metrics&range=1h")
        for key in ("gpu_util", "gpu_memory", "cpu", "memory", "network_receive",
                    "network_transmit", "disk_read", "disk_write"):  # and any Training ones
            expect(page.locator(f"#chart-{key} .js-plotly-plot")).to_have_count(
                1, timeout=15_000)
        charts = page.locator(".dash-chart .js-plotly-plot")
        expect(page.locator("#chart-gpu_memory .annotation")).to_be_visible()  # the capacity
        for chart in charts.all():
            chart.scroll_into_view_if_needed()
            chart.hover()  # Plotly shows its mode bar while the pointer is on the chart
            bars = [b for b in _boxes(chart, ".modebar") if b["width"] and b["height"]]
            labels = _boxes(chart, ".nsewdrag, .infolayer .legend, .annotation, .gtitle,"
                                   " .g-xtitle, .g-ytitle")
            covered = [label for bar in bars for label in labels if _overlap(bar, label)]
            where = chart.evaluate(
                "c => (c.closest('[id]') || {}).id + ' ' + (c.closest('section') || {}).id")
            if covered:
                chart.screenshot(path=str(SCREENSHOTS / f"covered-{width}.png"))
            assert covered == [], f"the mode bar covers {covered} on {where} at {width} px"
        page.locator("#chart-gpu_memory").screenshot(
            path=str(SCREENSHOTS / f"metrics-mode-bar-{width}.png"))
        # by keyboard the mode bar shows while one of its buttons has the focus
        page.mouse.move(0, 0)
        button = page.locator("#chart-cpu .modebar-btn").first
        button.focus()
        expect(page.locator("#chart-cpu .modebar-group").first).to_have_css("opacity", "1")
        # the cluster overview's charts have nothing to zoom: no mode bar at all, and its
        # GPU table stacks rather than making its card scroll sideways
        page.goto(live_dashboard + "/cluster/")
        expect(page.locator("#chart-gpu-models .main-svg").first).to_be_visible()
        page.locator("#chart-gpu-models").hover()
        expect(page.locator(".dash-chart .modebar")).to_have_count(0)
        assert page.locator("#cluster-gpu-models").evaluate(
            "card => card.scrollWidth - card.clientWidth") <= 0
        assert page.evaluate(WIDE) <= 0
    finally:
        context.close()


def test_the_metrics_caption_names_the_time_zone_of_the_axes(browser, live_dashboard):
    context = browser.new_context(viewport=PHONE, timezone_id="Asia/Tokyo")
    page = context.new_page()
    try:
        sign_in(page, live_dashboard, "alice", BERT + "?tab=metrics&range=1h")
        expect(page.locator("#chart-cpu .main-svg").first).to_be_attached(timeout=15_000)
        caption = page.locator(".dash-metrics-status")
        expect(caption).to_contain_text("Times are in the Asia/Tokyo time zone.")
        expect(caption).not_to_contain_text("UTC")
        zone = re.search(r"Times are in the (\S+) time zone", caption.inner_text()).group(1)
        # the x axis ends at the newest point (ms since the epoch): Plotly writes that end as
        # the wall-clock time it draws, which is the time in the caption's zone
        end_ms, drawn = page.evaluate(
            "() => { const ax = document.querySelector('#chart-cpu .js-plotly-plot');"
            " return [ax.layout.xaxis.range[1], String(ax._fullLayout.xaxis.range[1])]; }")
        end = datetime.fromtimestamp(end_ms / 1000, UTC)
        assert drawn[:16] == end.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M")
        assert drawn[:16] != end.strftime("%Y-%m-%d %H:%M")  # Tokyo is not UTC
    finally:
        context.close()
