"""Every answer carries the Content-Security-Policy and its friends (training/web/headers.py),
pages and errors alike; Plotly's rules are a stylesheet anyone may load."""

from __future__ import annotations

from django.urls import reverse

from tests.html_checks import assert_valid


def _assert_headers(r) -> None:
    policy = r["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert r["Referrer-Policy"] == "same-origin"
    assert r["X-Frame-Options"] == "DENY"
    assert "geolocation=()" in r["Permissions-Policy"]


def test_it_sends_the_policy_with_pages(alice):
    r = alice.get(reverse("training-job-list"))
    assert r.status_code == 200
    _assert_headers(r)


def test_it_sends_the_policy_with_errors_and_redirects(alice, client, db):
    _assert_headers(alice.get(reverse("training-job-detail",
                                      args=["team-nlp", "mpijob", "no-such-job"])))
    _assert_headers(alice.get(reverse("training-job-detail",
                                      args=["team-nlp", "bogus", "x"])))
    _assert_headers(client.get(reverse("training-job-list")))  # to sign in


def test_it_serves_plotlys_rules_without_sign_in(client, db):
    r = client.get(reverse("training-plotly-css"))
    assert r.status_code == 200
    assert r["Content-Type"].startswith("text/css")
    assert ".js-plotly-plot .plotly .modebar{position:absolute;" in r.content.decode()


def test_pages_link_plotlys_rules_where_plotly_looks_for_them(alice):
    body = alice.get(reverse("training-job-list")).content.decode()
    assert_valid(body)
    assert ('<link id="plotly.js-style-global" class="no-inline-styles" rel="stylesheet" '
            f'href="{reverse("training-plotly-css")}">') in body
