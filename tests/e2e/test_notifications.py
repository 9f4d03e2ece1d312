"""Notifications and cost in the browser (issue 24): alice subscribes with a webhook to a
local receiver, her job fails, the masthead's bell counts it live (the page is not
reloaded) and its drawer names the job and the diagnosis headline, and the receiver got
one delivery signed with the secret the page showed once; a webhook to the cloud's
metadata address is refused in the form; the bell's drawer by keyboard, on a phone in the
dark theme, with no serious axe finding; the admin sets an A100 price and the wizard's
review and a job's page show a cost."""

from __future__ import annotations

import csv
import hashlib
import hmac
import json
import re
import uuid
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import sign_in
from tests.e2e.test_accessibility import serious_findings
from tests.training_jobs import Jobs, mpijob
from tests.waiting import wait_until
from tests.webhook_receiver import Quiet, serving

NS = "team-nlp"
SLOW = 90_000  # ms: a deadline for what the cluster does at speed 20, not a duration
A100 = "NVIDIA-A100-SXM4-80GB"
ALICES_JOB = "/jobs/team-nlp/mpijob/bert-large-pretrain/"


class _Receiver(Quiet):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.append((dict(self.headers), body))
        self.send_response(204)
        self.end_headers()


@pytest.fixture
def receiver():
    with serving(_Receiver) as server:
        yield server


@pytest.fixture
def jobs(e2e_cluster):
    helper = Jobs(e2e_cluster.api_client("alice"), NS)
    yield helper
    helper.cleanup()


def _bell(page):
    return page.get_by_role("button", name=re.compile(r"^Notifications"))


def _unread(page) -> int:
    return int(page.locator("#bell-button").get_attribute("data-unread") or 0)


def _subscribe_with_webhook(page, url: str) -> str:
    """alice's "My jobs" subscription by webhook alone; the secret the page shows once."""
    page.get_by_label("Notify me of").select_option("mine")
    page.get_by_label("In the dashboard").uncheck()  # her default subscription has it
    page.get_by_label("Webhook URL").fill(url)
    page.get_by_role("button", name="Subscribe").click()
    secret = page.locator("#webhook-secret code")
    expect(secret).to_be_visible()
    return secret.inner_text().strip()


def _failing_job(jobs: Jobs, prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:5]}"
    jobs.create(mpijob(name, workers=1, run_seconds=200, annotations={
        "opendatahub.io/username": "alice", "simcluster.io/failure": "oom",
        "simcluster.io/failure-after-seconds": "2"}))
    return name


def test_alice_hears_of_her_failed_job_in_the_bell_and_by_a_signed_webhook(
        page, live_dashboard, jobs, receiver, screenshot):
    sign_in(page, live_dashboard, "alice", next_path="/notifications/")
    port = receiver.server_address[1]
    secret = _subscribe_with_webhook(page, f"http://127.0.0.1:{port}/hook")
    expect(page.locator("#table-subscriptions")).to_contain_text(f"127.0.0.1:{port}/hook")

    page.goto(live_dashboard + "/jobs/")
    expect(page.locator("#live-socket")).to_have_attribute("data-live-state", "live",
                                                           timeout=30_000)
    page.evaluate("() => { window.notReloaded = true; }")
    before = _unread(page)
    name = _failing_job(jobs, "e2e-bell")

    # the count goes up without a reload, and the button's name says it
    page.wait_for_function(
        "before => Number(document.getElementById('bell-button').dataset.unread) > before",
        arg=before, timeout=SLOW)
    assert page.evaluate("() => window.notReloaded === true")
    expect(_bell(page)).to_have_accessible_name(re.compile(r"^Notifications, \d+ unread$"))
    expect(page.locator("#bell-announcer")).to_contain_text(f"New notification: {name}")

    # the receiver got one delivery, signed with the secret shown once
    wait_until(lambda: receiver.received, 60, message="the webhook delivery")
    headers, body = receiver.received[0]
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers.get("X-ODH-Signature", ""), expected)
    sent = json.loads(body)
    assert (sent["job"], sent["project"], sent["to"]) == (name, NS, "Failed")
    assert sent["headline"], "an out-of-memory failure has a diagnosis headline"

    # the drawer names the job and its headline, and opening it reads them all
    _bell(page).click()
    drawer = page.get_by_role("dialog", name="Notifications")
    expect(drawer).to_be_visible()
    item = drawer.locator("li", has_text=name).first
    expect(item).to_contain_text(sent["headline"])
    expect(item).to_contain_text("Failed")
    expect(item.get_by_role("link", name=name)).to_have_attribute(
        "href", f"/jobs/{NS}/mpijob/{name}/")
    expect(_bell(page)).to_have_accessible_name("Notifications")
    screenshot("bell-drawer")
    assert len(receiver.received) == 1
    # nothing is sent twice: one delivery by webhook, one to the bell (her default
    # subscription), each listed once
    page.goto(live_dashboard + "/notifications/")
    deliveries = page.locator("#table-deliveries tr", has_text=name)
    expect(deliveries.filter(has_text="Webhook")).to_have_count(1)
    expect(deliveries.filter(has_text="In the dashboard")).to_have_count(1)


# The browser's own notification is drawn by the operating system, out of the page's reach:
# the page's Notification is wrapped to record what it is asked to show (the real one is
# still called), and the page is told it is in the background, as when another tab is in
# front (headless Chromium always says "visible").
_RECORD_DEVICE_NOTIFICATIONS = """
(() => {
  const Real = window.Notification;
  if (!Real) return;
  window.__shown = [];
  window.__background = false;
  function Recording(title, options) {
    window.__shown.push({title: title, body: (options || {}).body || ""});
    return new Real(title, options);
  }
  Object.defineProperty(Recording, "permission", {get: () => Real.permission});
  Recording.requestPermission = (callback) => Real.requestPermission(callback);
  window.Notification = Recording;
  Object.defineProperty(document, "visibilityState",
                        {get: () => (window.__background ? "hidden" : "visible")});
})();
"""


def test_a_notice_shows_as_the_device_s_notification_once_she_allows_it(
        browser, live_dashboard, jobs):
    context = browser.new_context()
    context.add_init_script(_RECORD_DEVICE_NOTIFICATIONS)
    page = context.new_page()
    try:
        # her default subscription (her jobs, in the dashboard) is made on her first visit
        sign_in(page, live_dashboard, "alice", next_path="/notifications/")
        page.goto(live_dashboard + "/jobs/")
        expect(page.locator("#live-socket")).to_have_attribute("data-live-state", "live",
                                                               timeout=30_000)
        _bell(page).click()
        allow = page.get_by_role("button", name="Also show them as this device's "
                                                "notifications")
        expect(allow).to_be_visible()  # never asked before she chooses to
        context.grant_permissions(["notifications"], origin=live_dashboard)
        allow.click()
        expect(page.locator("#bell-browser-state")).to_contain_text(
            "This device shows a notification when one arrives while this page is in the "
            "background.")
        expect(allow).to_be_hidden()
        page.keyboard.press("Escape")

        page.evaluate("() => { window.__background = true; }")  # another tab in front
        name = _failing_job(jobs, "e2e-device")
        page.wait_for_function(
            "name => window.__shown.some(n => n.title.includes(name))", arg=name,
            timeout=SLOW)
        (shown,) = [n for n in page.evaluate("() => window.__shown") if name in n["title"]]
        assert shown["title"] == f"{name} in {NS} is Failed"
        assert shown["body"], "the diagnosis headline"
        expect(page.locator("#bell-announcer")).to_contain_text(shown["body"])
    finally:
        context.close()


def test_a_webhook_to_the_metadata_address_is_refused_in_the_form(page, live_dashboard):
    sign_in(page, live_dashboard, "alice", next_path="/notifications/")
    for url, said in (("http://169.254.169.254/latest/meta-data/", "https only"),
                      ("https://169.254.169.254/latest/meta-data/", "metadata address")):
        page.get_by_label("Webhook URL").fill(url)
        page.get_by_role("button", name="Subscribe").click()
        field = page.get_by_label("Webhook URL")
        expect(field).to_have_attribute("aria-invalid", "true")
        expect(page.locator("#webhook_url-error")).to_contain_text(said)
        expect(page.locator("#webhook-secret")).to_have_count(0)
        expect(page.locator("#table-subscriptions")).not_to_contain_text("169.254.169.254")


def test_the_bell_s_drawer_by_keyboard_on_a_phone_in_the_dark(browser, live_dashboard):
    # axe is added as a script of the page: the Content-Security-Policy would refuse it
    context = browser.new_context(viewport={"width": 390, "height": 844},
                                  color_scheme="dark", bypass_csp=True)
    page = context.new_page()
    try:
        sign_in(page, live_dashboard, "alice", next_path="/help/troubleshooting/")
        # a page without a socket of its own: the bell opens one
        expect(page.locator("#bell-socket")).to_have_attribute("data-live-state", "live",
                                                               timeout=30_000)
        assert page.evaluate("() => document.documentElement.classList"
                             ".contains('pf-v6-theme-dark')")
        bell = _bell(page)
        bell.focus()
        page.keyboard.press("Enter")
        drawer = page.get_by_role("dialog", name="Notifications")
        expect(drawer).to_be_visible()
        expect(page.locator("#bell-title")).to_be_focused()
        expect(bell).to_have_attribute("aria-expanded", "true")
        expect(drawer.get_by_role("link", name="Notification settings")).to_be_visible()
        box = drawer.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390
        assert serious_findings(page, "bell drawer, phone, dark") == []
        page.keyboard.press("Escape")
        expect(drawer).to_be_hidden()
        expect(bell).to_be_focused()
        expect(bell).to_have_attribute("aria-expanded", "false")
    finally:
        context.close()


def _set_prices(page, base_url: str, a100: str, cpu: str, gib: str) -> None:
    page.goto(base_url + "/cluster/prices/")
    page.get_by_label("Currency").fill("USD")
    page.get_by_label(A100).fill(a100)
    page.get_by_label("Per CPU-hour").fill(cpu)
    page.get_by_label("Per GiB-hour of memory").fill(gib)
    page.get_by_role("button", name="Save prices").click()
    expect(page.locator("#prices-saved")).to_be_visible()


def test_the_admin_s_a100_price_shows_in_the_wizard_and_on_a_job_page(browser, live_dashboard):
    admin = browser.new_context()
    alice = browser.new_context()
    admin_page = admin.new_page()
    sign_in(admin_page, live_dashboard, "admin", next_path="/cluster/prices/")
    try:
        _set_prices(admin_page, live_dashboard, "2.50", "0.05", "0.01")
        page = alice.new_page()
        sign_in(page, live_dashboard, "alice", next_path="/jobs/new/")
        page.get_by_role("button", name="Create an MPIJob").click()
        page.get_by_label("Project").select_option(NS)
        page.get_by_label("Job name").fill(f"e2e-cost-{uuid.uuid4().hex[:5]}")
        page.get_by_label("Training image").fill("quay.io/opendatahub/horovod:0.28.1-pytorch2.1")
        page.get_by_label("Command").fill("horovodrun -np 2 python /workspace/train.py")
        page.get_by_role("button", name="Next").click()
        expect(page.get_by_role("heading", name="Resources")).to_be_visible()
        page.get_by_role("button", name="Next").click()
        expect(page.get_by_role("heading", name="Review")).to_be_visible()
        expect(page.get_by_role("heading", name="Estimated cost")).to_be_visible()
        expect(page.locator("#estimated-cost-hour")).to_contain_text(re.compile(r"\d"))
        page.get_by_label("Expected duration (hours)").fill("6")
        page.get_by_role("button", name="Estimate").click()
        expect(page.locator("#estimated-cost-total")).to_contain_text(re.compile(r"\d"))

        page.goto(live_dashboard + ALICES_JOB)  # a GPU job, running
        expect(page.locator("#job-cost-figure")).to_contain_text(re.compile(r"\d"))

        # the chargeback: each A100 job's cost is its hours at these prices, and the last
        # row adds up every job's hours and cost
        admin_page.goto(live_dashboard + "/cluster/?period=30d")
        with admin_page.expect_download() as waiting:
            admin_page.get_by_role("link", name="Export as CSV (chargeback)").click()
        with open(waiting.value.path(), encoding="utf-8") as f:
            header, *jobs, total = list(csv.reader(f))
        at = {name: i for i, name in enumerate(header)}

        def figure(row: list[str], name: str) -> Decimal:
            return Decimal(row[at[name]])
        on_a100 = [r for r in jobs if r[at["gpu_model"]] == A100 and figure(r, "gpu_hours")]
        assert on_a100, jobs  # the demo's finished GPU jobs ran on A100s
        for row in on_a100:
            priced = (figure(row, "gpu_hours") * Decimal("2.50") +
                      figure(row, "cpu_hours") * Decimal("0.05") +
                      figure(row, "memory_gib_hours") * Decimal("0.01"))
            assert abs(priced - figure(row, "cost")) < Decimal("0.001"), row
        for name in ("gpu_hours", "cost"):
            assert abs(sum(figure(r, name) for r in jobs) - figure(total, name)) \
                < Decimal("0.0001") * (len(jobs) + 1), (name, total)
    finally:  # no price again, as the other tests expect
        _set_prices(admin_page, live_dashboard, "", "", "")
        admin.close()
        alice.close()
