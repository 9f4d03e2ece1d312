"""What the strict Content-Security-Policy (training/web/headers.py) needs of our own code:
templates with no inline script, handler or style, bars as width classes, and Plotly's
style rules as a stylesheet. The browser checks pages in tests/e2e."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import RequestFactory

from training.templatetags.training_tags import width_class
from training.web.headers import content_security_policy
from training.web.plotly_css import bundle_path, rules_of, stylesheet_of

TEMPLATES = Path(__file__).resolve().parents[2] / "training" / "templates"
INLINE = {
    "an inline script": re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I),
    "an event handler attribute": re.compile(r"<[^>]+\son[a-z]+\s*=", re.I),
    "a style attribute": re.compile(r"<[^>]+\sstyle\s*=", re.I),
    "a <style> element": re.compile(r"<style\b", re.I),
    "a javascript: address": re.compile(r"""(href|src|action)\s*=\s*["']?\s*javascript:""",
                                        re.I),
}


@pytest.mark.parametrize("template", sorted(TEMPLATES.rglob("*.html")),
                         ids=lambda p: str(p.relative_to(TEMPLATES)))
def test_no_template_needs_unsafe_inline(template):
    text = template.read_text(encoding="utf-8")
    for what, pattern in INLINE.items():
        found = pattern.search(text)
        assert found is None, f"{what}, which the policy refuses: {found.group()[:80]!r}"


@pytest.mark.parametrize(("percent", "expected"), [
    (0, "dash-w-0"), (37.4, "dash-w-37"), (37.6, "dash-w-38"), ("12", "dash-w-12"),
    (140, "dash-w-100"), (-3, "dash-w-0"), (None, "dash-w-0"), ("", "dash-w-0"),
    (float("nan"), "dash-w-0"), ("²", "dash-w-0")])
def test_a_bars_width_is_a_class_of_whole_percents(percent, expected):
    assert width_class(percent) == expected


def test_every_width_class_is_in_the_stylesheet():
    css = (Path(__file__).resolve().parents[2] / "static" / "css" / "dashboard.css").read_text()
    for n in range(101):
        assert f".dash-w-{n} {{ width: {n}%; }}" in css


def test_plotlys_rules_are_read_from_the_bundle_the_pages_load(settings):
    rules = dict(rules_of(bundle_path().read_text(encoding="utf-8")))
    assert rules["X .modebar"].startswith("position:absolute")
    assert "Y" in rules  # the notifier, written as a bare key
    css = stylesheet_of(bundle_path().read_text(encoding="utf-8"))
    assert ".js-plotly-plot .plotly .modebar{position:absolute;" in css
    assert ".plotly-notifier{font-family:" in css
    # Plotly inserts each rule at the top: the object's last rule comes first
    assert css.index(".plotly-notifier .notifier-close:hover") < css.index(
        ".js-plotly-plot .plotly,.js-plotly-plot .plotly div{")


def test_a_bundle_without_the_rules_is_refused():
    with pytest.raises(ValueError, match="not found"):
        rules_of("var x={};")
    with pytest.raises(ValueError, match="end unexpectedly"):
        rules_of('{"X,X div":"margin:0;";')


@pytest.mark.parametrize(("secure", "socket"), [(False, "ws://dash.example:8000"),
                                                (True, "wss://dash.example:8000")])
def test_the_policy_allows_the_pages_own_socket_and_nothing_inline(settings, secure, socket):
    settings.ALLOWED_HOSTS = ["dash.example"]
    request = RequestFactory().get("/jobs/", HTTP_HOST="dash.example:8000", secure=secure)
    policy = content_security_policy(request)
    assert f"connect-src 'self' {socket}" in policy
    assert "script-src 'self';" in policy and "style-src 'self';" in policy
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
    assert "unsafe" not in policy


def test_a_request_for_another_host_still_gets_a_policy(settings):
    settings.ALLOWED_HOSTS = ["dash.example"]
    request = RequestFactory().get("/jobs/", HTTP_HOST="evil.example")
    assert "connect-src 'self';" in content_security_policy(request)
