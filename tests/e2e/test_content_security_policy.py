"""Every page works under the strict Content-Security-Policy, with no violation reported.

The policy (training/web/headers.py) refuses inline script, eval and inline style; a page that
still needed one would lose it silently for the person (a chart's toolbar unstyled, a bar
without its width), so the browser's own violation reports are collected on every page a
person reaches: the job list, each tab of a job (live charts included), a failed job's
diagnosis, the wizard, Compare, the troubleshooting guide, a missing job, sign-out, and
the administrator's overview and audit trail.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import sign_in
from tests.waiting import wait_until

BERT = "/jobs/team-nlp/mpijob/bert-large-pretrain/"
GPT2 = "/jobs/team-nlp/mpijob/gpt2-finetune/"
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", e => window.__cspViolations.push(
  e.violatedDirective + " " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":"
  + e.lineNumber));
"""


@pytest.fixture
def violations(page):
    """What the browser refused: its events on each page, and its console's reports."""
    seen: list[str] = []
    page.add_init_script(RECORD_VIOLATIONS)
    page.on("console", lambda m: seen.append(m.text) if "Content Security Policy" in m.text
            else None)

    def check(where: str) -> None:
        reported = page.evaluate("window.__cspViolations || []")
        assert not reported and not seen, f"{where}: {reported + seen}"

    return check


def _tab(page, name: str) -> None:
    page.get_by_role("navigation", name="Job details").get_by_role("link", name=name).click()
    expect(page).to_have_url(re.compile(rf"tab={name.lower()}"))


def test_alices_pages_report_no_policy_violation(page, live_dashboard, violations):
    sign_in(page, live_dashboard, "alice", "/jobs/?project=team-nlp")
    response = page.reload()
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert response.headers["referrer-policy"] == "same-origin"
    assert "camera=()" in response.headers["permissions-policy"]
    expect(page.get_by_role("checkbox", name="Select bert-large-pretrain")).to_be_visible()
    violations("job list")

    page.goto(live_dashboard + BERT)
    expect(page.locator("#live-socket")).to_have_attribute("data-live-state",
                                                           re.compile("open|live"))
    for tab in ("Topology", "Logs", "Events", "Configuration", "Metrics"):
        _tab(page, tab)
    wait_until(lambda: page.evaluate(
        "document.querySelectorAll('.js-plotly-plot .main-svg').length") > 0, 30,
        message="the metrics charts drawn")
    chart = page.locator(".js-plotly-plot").first
    chart.hover()
    # Plotly's own rules come from the linked stylesheet: its toolbar sits over the chart
    assert chart.locator(".modebar").evaluate("e => getComputedStyle(e).position") == "absolute"
    violations("bert-large-pretrain's tabs")

    page.goto(live_dashboard + GPT2)
    expect(page.get_by_role("heading", name=re.compile(
        "Worker 2 ran out of memory and was killed"))).to_be_visible()
    violations("gpt2-finetune's diagnosis")

    page.goto(live_dashboard + "/jobs/?project=team-nlp")
    page.get_by_role("checkbox", name="Select gpt2-finetune").check()
    page.get_by_role("checkbox", name="Select bert-large-pretrain").check()
    page.get_by_role("button", name="Compare selected").click()
    expect(page.get_by_role("heading", name="Compare jobs", exact=True)).to_be_visible()
    violations("compare")

    page.goto(live_dashboard + "/jobs/new/")
    page.get_by_role("button", name="Create an MPIJob").click()
    expect(page.get_by_role("heading", name="Configuration")).to_be_visible()
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_role("heading", name="Configuration")).to_be_visible()  # name missing
    violations("the wizard")

    page.goto(live_dashboard + "/help/troubleshooting/")
    page.get_by_role("main").get_by_role("link").first.click()
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    violations("the troubleshooting guide")

    response = page.goto(live_dashboard + "/jobs/team-nlp/mpijob/no-such-job/")
    assert response.status == 404
    violations("a missing job")

    page.locator(".dash-user-menu summary").click()
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile("/signed-out/"))
    violations("signed out")


def test_the_administrators_pages_report_no_policy_violation(page, live_dashboard,
                                                             violations):
    sign_in(page, live_dashboard, "admin", "/cluster/")
    wait_until(lambda: page.evaluate(
        "document.querySelectorAll('.js-plotly-plot .main-svg').length") > 0, 30,
        message="the capacity charts drawn")
    violations("cluster overview")
    page.goto(live_dashboard + "/cluster/audit/")
    expect(page.get_by_role("heading", name=re.compile("Audit"))).to_be_visible()
    violations("audit trail")
