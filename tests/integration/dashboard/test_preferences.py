"""The user menu's choices: theme (a cookie, back to the page) and language (Django's
set_language, remembered in a cookie)."""

from __future__ import annotations

import pytest
from django.urls import reverse

JOBS = reverse("training-job-list")


def test_it_remembers_the_theme_and_goes_back_to_the_page(alice):
    r = alice.post(reverse("training-set-theme"), {"theme": "dark"},
                   HTTP_REFERER="http://testserver/jobs/?status=Failed")
    assert r.status_code == 302 and r["Location"] == "/jobs/?status=Failed"
    assert r.cookies["dashboard_theme"].value == "dark"
    page = alice.get(JOBS).content.decode()
    assert 'class="pf-v6-theme-dark" data-theme="dark"' in page
    assert 'value="dark" class="pf-v6-c-button pf-m-small pf-m-primary" aria-pressed="true"' in page


def test_it_refuses_a_theme_it_does_not_have_and_says_which_exist(alice):
    r = alice.post(reverse("training-set-theme"), {"theme": "<b>neon</b>"})
    assert r.status_code == 400
    body = r.content.decode()
    assert "System, Light or Dark" in body and "<b>" not in body


def test_it_never_goes_back_to_another_site(alice):
    r = alice.post(reverse("training-set-theme"), {"theme": "light"},
                   HTTP_REFERER="https://evil.example/")
    assert r["Location"] == JOBS


@pytest.mark.parametrize("view", ["training-set-theme", "training-set-language"])
@pytest.mark.parametrize("given", ["x", "jobs", "training-job-list", "//evil.example/x",
                                   "https://evil.example/", "/\\evil.example", ""])
def test_a_next_that_is_no_local_path_returns_to_the_page(alice, view, given):
    """A bare word once answered 500 (Django took it for a URL name); another site's
    address is never followed: back to the page the menu was on."""
    r = alice.post(reverse(view), {"theme": "dark", "language": "fr", "next": given},
                   HTTP_REFERER="http://testserver/jobs/?q=bert")
    assert r.status_code == 302
    assert r["Location"] == "/jobs/?q=bert"
    r = alice.post(reverse(view), {"theme": "dark", "language": "en", "next": "/jobs/?page=2"})
    assert r["Location"] == "/jobs/?page=2"


def test_the_language_chosen_in_the_menu_is_remembered(alice):
    r = alice.post(reverse("training-set-language"), {"language": "ko"},
                   HTTP_REFERER="http://testserver/jobs/")
    assert r.status_code == 302
    assert r.cookies["dashboard_language"].value == "ko"
    page = alice.get(JOBS, HTTP_ACCEPT_LANGUAGE="fr")
    assert page.headers["Content-Language"] == "ko"
    assert '<option value="ko" lang="ko" selected>한국어</option>' in page.content.decode()


def test_theme_and_language_forms_carry_a_csrf_token(alice):
    page = alice.get(JOBS).content.decode()
    for action in (reverse("training-set-theme"), reverse("training-set-language")):
        form = page[page.index(f'action="{action}"'):]
        assert 'name="csrfmiddlewaretoken"' in form[:form.index("</form>")]
