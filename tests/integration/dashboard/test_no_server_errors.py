"""No parameter of any view makes a server error: every query-string and form value a
view reads, given odd values (superscript digits, thousands of digits, years past 9999,
markup, NUL), ends in a page, a message or a 4xx, never a 5xx (property-based)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.dashboard.wizard.wizard_flow import start, step_url

ODD = ["", " ", "²", "٣", "9" * 5000, "-1", "1e400", "NaN", "0x10", "9999-12-31",
       "9999-12-31T23:59:59Z", "0000-01-01", "1969-12-31T23:59:59Z", "2025-02-30",
       "<script>alert(1)</script>", "../../etc/passwd", "\x00", "a" * 3000, "Ünïcødé",
       "history:²", "team-nlp/mpijob/²", "team-nlp/mpijob", "//", "%00"]
value = st.one_of(st.sampled_from(ODD), st.text(max_size=40),
                  st.integers(-10**40, 10**40).map(str))
SWEEP = settings(max_examples=15, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.function_scoped_fixture,
                                        HealthCheck.too_slow])

JOB = ["team-nlp", "mpijob", "gpt2-finetune"]
GETS = [
    (reverse("training-job-list"), ("project", "type", "status", "q", "sort", "page")),
    (reverse("training-job-detail", args=JOB), ("tab", "type", "pod", "range")),
    (reverse("training-job-metrics", args=JOB), ("range", "since", "end")),
    (reverse("training-job-diagnosis", args=JOB), ("part",)),
    (reverse("training-job-compare"), ("job",)),
    (reverse("training-job-new"), ("clone", "fix", "template", "saved", "kind")),
    (reverse("training-cluster-audit"), ("user", "project", "verb", "outcome", "since",
                                          "until", "page")),
    (reverse("training-cluster-audit-export"), ("user", "project", "since", "until")),
    (reverse("training-help"), ("page",)),
]


@pytest.fixture(autouse=True)
def _prometheus(demo_cluster, settings):
    # without it metrics.json answers 503 on purpose ("Prometheus is not set up")
    settings.PROMETHEUS_URL = demo_cluster.prometheus_url


def _no_5xx(response) -> None:
    assert response.status_code < 500, response.content.decode(errors="replace")[:1500]


@SWEEP
@given(picks=st.lists(value, min_size=7, max_size=7))
def test_no_query_parameter_makes_a_server_error(admin, picks):
    for url, names in GETS:
        _no_5xx(admin.get(url, dict(zip(names, picks, strict=False))))


@SWEEP
@given(removed=value, fix=value, saved=value, action=value)
def test_no_wizard_button_value_makes_a_server_error(alice, removed, fix, saved, action):
    key = start(alice)
    resources = step_url(key, "resources")
    for field in ("remove_env", "remove_volumes"):
        _no_5xx(alice.post(resources, {"step": "resources", field: removed}))
    _no_5xx(alice.post(reverse("training-job-new-fix", args=[key]),
                       {"step": "resources", "fix": fix}))
    _no_5xx(alice.post(step_url(key, "type"), {"step": "type", "saved": saved,
                                               "action": action}))


# The values an outside attack run found making 500s, each once, by name.
def test_a_far_future_since_is_a_400(admin):
    url = reverse("training-job-metrics", args=JOB)
    assert admin.get(url, {"since": "9999-12-31T23:59:59Z"}).status_code == 400


def test_an_audit_date_past_9000_is_a_message_on_the_page_and_an_empty_export(admin):
    page = admin.get(reverse("training-cluster-audit"), {"until": "9999-12-31"})
    assert page.status_code == 200
    assert "Enter a date between 1970 and 9000." in page.content.decode()
    export = admin.get(reverse("training-cluster-audit-export"), {"until": "9999-12-31"})
    assert export.status_code < 500


@pytest.mark.parametrize("odd", ["²", "9" * 5000])
def test_wizard_buttons_with_odd_numbers_are_ignored(alice, odd):
    key = start(alice)
    resources = step_url(key, "resources")
    for field in ("remove_env", "remove_volumes"):
        assert alice.post(resources, {"step": "resources", field: odd}).status_code < 500
    r = alice.post(reverse("training-job-new-fix", args=[key]), {"step": "resources", "fix": odd})
    assert r.status_code == 302
    r = alice.post(step_url(key, "type"), {"step": "type", "saved": odd})
    assert r.status_code < 500
