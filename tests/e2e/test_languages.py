"""The person's language, time zone and theme: Accept-Language chooses the language until
the user menu's switcher does (remembered); live pushes come in the viewer's own
language; dates are in the browser's time zone; the theme follows the browser or the
menu's choice."""

from __future__ import annotations

import re
import uuid

from django.utils import translation
from kubernetes import client as k8s
from playwright.sync_api import expect

from tests.e2e.conftest import sign_in
from tests.overview_support import one_gpu_job

DARK = re.compile(r"\bpf-v6-theme-dark\b")


def said(code: str, english: str) -> str:
    with translation.override(code):
        return translation.gettext(english)


def test_the_browsers_language_chooses_until_the_person_picks_one(browser, live_dashboard):
    context = browser.new_context(locale="ja-JP")
    page = context.new_page()
    try:
        sign_in(page, live_dashboard, "alice")
        expect(page.locator("html")).to_have_attribute("lang", "ja")
        expect(page.get_by_role("heading", level=1)).to_have_text(said("ja", "Training jobs"))
        page.locator(".dash-user-menu summary").click()
        page.get_by_label(said("ja", "Language")).select_option("fr")
        page.get_by_role("button", name=said("ja", "Apply")).click()
        expect(page.get_by_role("heading", level=1)).to_have_text(said("fr", "Training jobs"))
        page.reload()  # remembered, over the browser's Japanese
        expect(page.locator("html")).to_have_attribute("lang", "fr")
        expect(page.get_by_role("heading", level=1)).to_have_text(said("fr", "Training jobs"))
    finally:
        context.close()


def test_a_live_change_reaches_a_french_page_in_french(browser, live_dashboard, e2e_cluster):
    name = f"e2e-fr-{uuid.uuid4().hex[:5]}"
    with e2e_cluster.api_client("alice") as api:
        custom = k8s.CustomObjectsApi(api)
        custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp",
                                               "mpijobs", one_gpu_job(name))
        context = browser.new_context(locale="fr-FR")
        page = context.new_page()
        try:
            sign_in(page, live_dashboard, "alice", f"/jobs/team-nlp/mpijob/{name}/")
            status = page.locator("#job-header-status")
            expect(page.locator("#live-socket")).to_have_attribute("data-live-state", "live",
                                                                   timeout=30_000)
            custom.patch_namespaced_custom_object(
                "kubeflow.org", "v2beta1", "team-nlp", "mpijobs", name,
                {"spec": {"runPolicy": {"suspend": True}}})
            expect(status).to_contain_text(said("fr", "Suspended"), timeout=60_000)
            expect(status).not_to_contain_text("Suspended")
        finally:
            context.close()
            custom.delete_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp",
                                                   "mpijobs", name)


def test_dates_are_in_the_browsers_time_zone(browser, live_dashboard):
    context = browser.new_context(timezone_id="Asia/Tokyo")
    page = context.new_page()
    try:
        sign_in(page, live_dashboard, "admin", "/cluster/")
        page.reload()  # the first page told the dashboard the zone (static/js/theme.js)
        expect(page.locator(".dash-observed")).to_contain_text("JST")
    finally:
        context.close()


def test_the_theme_follows_the_browser_and_the_menus_choice(browser, live_dashboard):
    context = browser.new_context(color_scheme="dark")
    page = context.new_page()
    html = page.locator("html")
    try:
        sign_in(page, live_dashboard, "alice")
        expect(html).to_have_class(DARK)  # "System", and the browser is dark
        page.locator(".dash-user-menu summary").click()
        page.get_by_role("group", name="Theme").get_by_role("button", name="Light").click()
        expect(html).not_to_have_class(DARK)
        page.reload()
        expect(html).not_to_have_class(DARK)
        page.locator(".dash-user-menu summary").click()
        page.get_by_role("group", name="Theme").get_by_role("button", name="Dark").click()
        expect(html).to_have_class(DARK)
    finally:
        context.close()
