"""The actions a job's page and the list offer fit the person and the job: one primary
action by state, the rest in a menu that closes on Escape; nothing the person may not do."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.conftest import sign_in

MUTATIONS = ("Suspend", "Resume", "Clone", "Retry", "Delete")


def test_bob_is_offered_nothing_he_may_not_do_in_research(page, live_dashboard):
    sign_in(page, live_dashboard, "bob")
    expect(page.get_by_role("heading", name="Training jobs")).to_be_visible()
    expect(page.get_by_role("link", name="Create job")).to_have_count(0)
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Training jobs")).to_be_visible()
    expect(nav.get_by_role("link", name="Create", exact=True)).to_have_count(0)
    expect(nav.get_by_role("link", name="Templates")).to_have_count(0)
    page.get_by_role("link", name="bert-classifier-ddp").click()
    actions = page.get_by_role("group", name="Job actions")
    expect(actions).to_be_visible()
    for name in MUTATIONS:
        expect(actions.get_by_role("button", name=name)).to_have_count(0)
        expect(actions.get_by_role("link", name=name)).to_have_count(0)
    actions.get_by_text("Actions", exact=True).click()
    expect(actions.get_by_role("link", name="Export YAML")).to_be_visible()
    expect(actions.get_by_role("link", name="Compare with…")).to_be_visible()


def test_alices_running_job_leads_with_suspend_and_its_menu_closes_on_escape(page,
                                                                            live_dashboard):
    sign_in(page, live_dashboard, "alice", "/jobs/team-nlp/mpijob/bert-large-pretrain/")
    actions = page.get_by_role("group", name="Job actions")
    expect(actions.get_by_role("button", name="Suspend")).to_be_visible()
    expect(actions.get_by_role("link", name="Retry")).to_have_count(0)  # it is running
    menu = actions.locator("summary")
    menu.focus()
    page.keyboard.press("Enter")
    delete = actions.get_by_role("link", name="Delete")
    expect(delete).to_be_visible()
    expect(actions.get_by_role("link", name="Clone")).to_be_visible()
    delete.focus()
    page.keyboard.press("Escape")
    expect(delete).to_be_hidden()
    expect(menu).to_be_focused()


def test_a_finished_job_leads_with_clone_and_offers_retry(page, live_dashboard):
    sign_in(page, live_dashboard, "alice", "/jobs/team-nlp/mpijob/gpt2-finetune/")
    actions = page.get_by_role("group", name="Job actions")
    expect(actions.get_by_role("link", name="Clone")).to_be_visible()
    expect(actions.get_by_role("button", name="Suspend")).to_have_count(0)
    actions.get_by_text("Actions", exact=True).click()
    expect(actions.get_by_role("link", name="Retry")).to_be_visible()


def test_the_user_menu_holds_language_theme_and_sign_out_and_closes_on_escape(page,
                                                                           live_dashboard):
    sign_in(page, live_dashboard, "alice")
    menu = page.locator(".dash-user-menu summary")
    expect(menu).to_contain_text("alice")
    expect(page.get_by_role("button", name="Sign out")).to_be_hidden()
    menu.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_label("Language")).to_be_visible()
    theme = page.get_by_role("group", name="Theme")
    expect(theme.get_by_role("button", name="Dark")).to_be_visible()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("button", name="Sign out")).to_be_hidden()
    expect(menu).to_be_focused()


def test_on_a_phone_the_list_and_a_job_page_need_no_sideways_scrolling(page, live_dashboard):
    """390 px wide (WCAG 1.4.10 reflow): PatternFly's grid tables stack rows into cards."""
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        sign_in(page, live_dashboard, "alice")
        expect(page.get_by_role("link", name="gpt2-finetune")).to_be_visible()
        wide = "() => document.documentElement.scrollWidth - window.innerWidth"
        assert page.evaluate(wide) <= 0
        page.get_by_role("link", name="gpt2-finetune").click()
        expect(page.get_by_role("heading", name="gpt2-finetune")).to_be_visible()
        assert page.evaluate(wide) <= 0
    finally:
        page.set_viewport_size({"width": 1440, "height": 900})
