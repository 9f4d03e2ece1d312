"""A request htmx sends that fails: a banner says so, offers to try again, and what was
typed stays on the page (static/js/request-errors.js)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.conftest import sign_in

IMAGE = "quay.io/opendatahub/horovod:0.28.1-pytorch2.1"
COMMAND = "horovodrun -np 2 python /workspace/train.py"


def test_a_refused_next_shows_a_banner_and_keeps_what_was_typed(page, live_dashboard,
                                                                screenshot):
    sign_in(page, live_dashboard, "alice", next_path="/jobs/new/")
    page.get_by_role("button", name="Create an MPIJob").click()
    expect(page.get_by_role("heading", name="Configuration")).to_be_visible()
    page.get_by_label("Job name").fill("kept-after-a-failure")
    page.get_by_label("Training image").fill(IMAGE)
    page.get_by_label("Command").fill(COMMAND)
    # The browser lost the form's CSRF cookie (cleared by the person, or by a privacy
    # setting): the dashboard refuses the form with its "form expired" page, 403.
    page.context.clear_cookies(name="csrftoken")
    page.get_by_role("button", name="Next").click()

    banner = page.get_by_role("alert").filter(has_text="This form has expired")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("nothing was changed. Go back, reload the page and try "
                                   "again.")
    expect(banner).to_contain_text("Nothing on this page was lost: what you typed is still "
                                   "here.")
    expect(banner.get_by_role("button", name="Try again")).to_be_visible()
    screenshot("request-error-banner")

    # the step did not change, and nothing typed was lost
    expect(page.get_by_role("heading", name="Configuration")).to_be_visible()
    expect(page.get_by_label("Job name")).to_have_value("kept-after-a-failure")
    expect(page.get_by_label("Training image")).to_have_value(IMAGE)
    expect(page.get_by_label("Command")).to_have_value(COMMAND)

    # trying again renews the form's token and sends the same step: it goes through
    banner.get_by_role("button", name="Try again").click()
    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    expect(page.get_by_role("alert").filter(has_text="This form has expired")).to_have_count(0)
    page.get_by_role("button", name="Back").click()
    expect(page.get_by_label("Command")).to_have_value(COMMAND)
