"""The troubleshooting guide served by the dashboard (/help/troubleshooting/)."""

from __future__ import annotations

import re

from django.urls import reverse

from tests.html_checks import assert_valid


def test_it_serves_the_index_with_every_page_linked(alice):
    response = alice.get(reverse("training-help"))
    assert response.status_code == 200
    body = response.content.decode()
    assert_valid(body)
    assert "<h1" in body and "Troubleshooting training jobs" in body
    assert reverse("training-help-page", args=["oom-killed"]) in body
    assert ".md" not in body.split("<article", 1)[1]  # links lead to the dashboard's pages


def test_it_serves_a_page_rendered_from_the_repository(alice):
    response = alice.get(reverse("training-help-page", args=["oom-killed"]))
    assert response.status_code == 200
    body = response.content.decode()
    assert_valid(body)
    assert "Out of memory (OOMKilled)" in body
    assert "<h2" in body and "What to do" in body
    assert 'aria-current="page"' in body  # the page list says where one is


def test_an_unknown_page_is_not_found_and_no_other_file_can_be_named(alice):
    assert alice.get(reverse("training-help-page", args=["no-such-page"])).status_code == 404
    assert alice.get("/help/troubleshooting/..%2F..%2FREADME/").status_code == 404


def test_the_guide_needs_sign_in(client):
    response = client.get(reverse("training-help"))
    assert response.status_code == 302


def test_the_guide_is_read_in_the_readers_language_english_where_not_translated(alice):
    from django.conf import settings

    alice.cookies[settings.LANGUAGE_COOKIE_NAME] = "fr"
    body = alice.get(reverse("training-help-page", args=["oom-killed"])).content.decode()
    assert_valid(body)
    french = (settings.TROUBLESHOOTING_DIR / "fr" / "oom-killed.md").read_text()
    assert french.splitlines()[0].removeprefix("# ") in body
    assert "What to do" not in body.split("<article", 1)[1]  # the page itself is French
    alice.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    body = alice.get(reverse("training-help-page", args=["oom-killed"])).content.decode()
    assert "<h2" in body and "What to do" in body


def test_a_table_scrolls_in_a_region_of_its_own_named_by_its_columns(alice):
    """On a phone the guide's page never scrolls sideways: a table too wide for the screen
    scrolls in its own box, which Tab reaches and a screen reader names."""
    body = alice.get(reverse("training-help")).content.decode()
    assert_valid(body)
    article = body.split("<article", 1)[1]
    tables = re.findall(r'<div class="dash-help__table" role="region" tabindex="0" '
                        r'aria-label="([^"]+)"><table>', article)
    assert "Table: class, what it means, who usually acts" in tables
    assert len(tables) == article.count("<table")  # every table is in one
