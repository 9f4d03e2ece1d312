"""When things go wrong: pages in plain words, a request id to quote, never a stack trace."""

from __future__ import annotations

import html
import logging
import re
import uuid

import pytest
from django.conf import settings as django_settings
from django.template.defaultfilters import filesizeformat
from django.test import Client
from django.urls import reverse

from tests.dashboard_support import session_token, sign_in
from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard.wizard_flow import draft, fill, form_values, start, step_url

JOBS = reverse("training-job-list")
GPT2 = reverse("training-job-detail", args=["team-nlp", "mpijob", "gpt2-finetune"])
SUSPEND_GPT2 = reverse("training-job-suspend", args=["team-nlp", "mpijob", "gpt2-finetune"])
HTMX = {"HTTP_HX_REQUEST": "true"}


def _assert_error_page(r, status: int) -> str:
    assert r.status_code == status
    body = r.content.decode()
    assert r["X-Request-Id"], "no request id header"
    assert f"Request id: {r['X-Request-Id']}" in body
    assert "Traceback" not in body and "File &quot;" not in body
    assert_valid(body)
    return html.unescape(body)


def test_it_shows_a_retry_when_the_cluster_is_unreachable(alice, unreachable_cluster):
    r = alice.get(GPT2, {"tab": "events"})
    body = _assert_error_page(r, 503)
    assert "The cluster is not answering" in body
    assert f'href="{GPT2}?tab=events"' in body
    assert "Try again" in body
    assert "urllib3" not in body and "Max retries" not in body
    assert "127.0.0.1" not in body  # nothing of the dashboard's plumbing


def test_it_keeps_the_person_signed_in_while_the_cluster_is_away(alice, unreachable_cluster):
    _assert_error_page(alice.get(JOBS), 503)
    assert session_token(alice)


def test_it_explains_a_sign_in_the_cluster_cannot_start(client, db, unreachable_cluster):
    r = client.get(reverse("training-login"))
    body = _assert_error_page(r, 503)
    assert "could not be reached" in body


def test_it_puts_the_request_id_on_a_forbidden_page(bob):
    _assert_error_page(bob.get(GPT2), 403)


def test_it_puts_the_request_id_on_a_missing_job_page(alice):
    _assert_error_page(alice.get(reverse("training-job-detail",
                                         args=["team-nlp", "mpijob", "gone"])), 404)


def test_it_puts_the_request_id_on_an_unknown_address(alice):
    body = _assert_error_page(alice.get("/no/such/page/"), 404)
    assert "Page not found" in body


def test_it_puts_the_request_id_on_a_wrong_method_page(alice):
    r = alice.post(GPT2)
    _assert_error_page(r, 405)
    assert r["Allow"] == "GET"


def test_it_puts_the_request_id_on_an_expired_form_page(db, demo_cluster):
    browser = Client(enforce_csrf_checks=True)
    sign_in(browser, demo_cluster, "alice")
    r = browser.post(reverse("training-job-suspend",
                             args=["team-nlp", "mpijob", "bert-large-pretrain"]))
    body = _assert_error_page(r, 403)
    assert "This form has expired" in body


def test_it_hides_the_details_of_a_crash(alice, monkeypatch):
    from odh.training.status import queries
    def crash(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(queries, "job_detail", crash)
    alice.raise_request_exception = False
    r = alice.get(GPT2)
    body = _assert_error_page(r, 500)
    assert "secret internals" not in body
    assert "Something went wrong" in body


def test_it_uses_a_request_id_it_is_given(alice):
    r = alice.get(JOBS, HTTP_X_REQUEST_ID="router-abc123")
    assert r["X-Request-Id"] == "router-abc123"
    r = alice.get(JOBS, HTTP_X_REQUEST_ID="<script>")
    assert r["X-Request-Id"] != "<script>"


def test_it_logs_errors_with_the_request_id(alice, unreachable_cluster, caplog):
    from training.web.requestid import RequestIdFilter

    with caplog.at_level(logging.INFO):
        r = alice.get(GPT2)
    assert r.status_code == 503
    rid = r["X-Request-Id"]
    ours = [rec for rec in caplog.records if rec.name.startswith(("training", "odh"))]
    assert ours, "nothing was logged"
    assert all(getattr(rec, "request_id", None) == rid for rec in ours)
    errors = [rec for rec in ours if rec.levelno >= logging.ERROR]
    assert errors and "cluster" in errors[0].getMessage()
    # Django's own "Service Unavailable: /jobs/..." line, logged as the response leaves
    django_lines = [rec for rec in caplog.records if rec.name == "django.request"]
    assert django_lines
    for rec in django_lines:
        RequestIdFilter().filter(rec)
        assert rec.request_id == rid


@pytest.mark.parametrize("url", [JOBS, GPT2])
def test_it_never_shows_a_stack_trace_for_a_cluster_error(alice, unreachable_cluster, url):
    _assert_error_page(alice.get(url), 503)


def test_it_turns_a_failed_htmx_swap_into_a_page_load(alice, unreachable_cluster):
    r = alice.get(GPT2, {"tab": "logs"}, HTTP_HX_REQUEST="true",
                  HTTP_HX_CURRENT_URL="http://testserver" + GPT2)
    assert r.status_code == 503
    assert r["HX-Redirect"] == GPT2 + "?tab=logs"


def test_a_part_the_page_fetched_itself_never_sends_the_window_to_its_address(
        alice, unreachable_cluster):
    """The diagnosis card fetched by the job's page, the cluster away: the page stays (a
    banner says what failed, from this answer), never loads the card's own address."""
    card = reverse("training-job-diagnosis", args=["team-nlp", "mpijob", "gpt2-finetune"])
    r = alice.get(card, HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver" + GPT2)
    assert r.status_code == 503
    assert "HX-Redirect" not in r and r["HX-Reswap"] == "none"
    assert "The cluster could not be reached" in r.content.decode()


def test_the_diagnosis_of_a_job_deleted_meanwhile_is_nothing_to_swap(alice):
    """A job's page asks for its diagnosis when the hub pushes the job's deletion: the job is
    gone, and the page, which says so, stays as it is (204); a whole page asked for shows
    the job's 404 page."""
    card = reverse("training-job-diagnosis", args=["team-nlp", "mpijob", "no-such-job"])
    page = reverse("training-job-detail", args=["team-nlp", "mpijob", "no-such-job"])
    r = alice.get(card, HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver" + page)
    assert r.status_code == 204 and not r.content and "HX-Redirect" not in r
    assert alice.get(card).status_code == 404


# -- "Try again" after a failed POST leads to a page, not to the POST-only address ------------
def _try_again(body: str) -> str:
    match = re.search(r'href="([^"]*)">Try again<', body)
    assert match, "no Try again link"
    return html.unescape(match.group(1))


def _cluster_is_back(settings, demo_cluster) -> None:
    from training import cluster
    from training.accounts import oauth
    settings.CLUSTER_KUBECONFIG = str(demo_cluster.kubeconfig("dashboard"))
    cluster.cluster_config.cache_clear()
    oauth.reset()


def test_it_tries_a_failed_action_again_from_the_jobs_page(alice, unreachable_cluster):
    body = _assert_error_page(alice.post(SUSPEND_GPT2), 503)
    link = _try_again(body)
    assert link == GPT2
    assert alice.get(link).status_code == 503  # the same page again, not "not allowed" (405)


def test_it_tries_a_failed_action_again_from_the_page_it_was_sent_from(alice,
                                                                        unreachable_cluster):
    listing = "http://testserver" + JOBS + "?project=team-nlp"
    body = _assert_error_page(alice.post(SUSPEND_GPT2, HTTP_REFERER=listing), 503)
    assert _try_again(body) == listing


def test_it_never_sends_try_again_to_another_site(alice, unreachable_cluster):
    body = _assert_error_page(alice.post(SUSPEND_GPT2, HTTP_REFERER="https://evil.example/"),
                              503)
    assert _try_again(body) == GPT2


def test_it_tries_a_failed_create_again_from_the_review(alice, request):
    key = start(alice)
    fill(alice, key, name=f"outage-{uuid.uuid4().hex[:6]}")
    request.getfixturevalue("unreachable_cluster")
    body = _assert_error_page(alice.post(reverse("training-job-new-create", args=[key])), 503)
    assert _try_again(body) == step_url(key, "review")


# -- htmx forms: the error is told, the form and its input stay -------------------------------
def test_it_keeps_an_htmx_step_and_its_input_when_the_cluster_is_away(alice, request,
                                                                      settings, demo_cluster):
    key = start(alice)
    url = step_url(key, "configuration")
    typed = {**form_values(alice.get(url).content.decode(), url), "name": "typed-in-outage",
             "action": "next"}
    request.getfixturevalue("unreachable_cluster")
    r = alice.post(url, typed, HTTP_HX_BOOSTED="true", HTTP_HX_TARGET="wizard",
                   HTTP_HX_CURRENT_URL="http://testserver" + url, **HTMX)
    body = _assert_error_page(r, 503)
    assert "The cluster is not answering" in body
    assert not r.has_header("HX-Redirect")  # no whole-page load of a POST-only address
    assert r["HX-Reswap"] == "none"  # the form stays as it is, with what was typed
    link = _try_again(body)
    assert link == url
    _cluster_is_back(settings, demo_cluster)
    again = alice.get(link)
    assert form_values(again.content.decode(), url)["name"] == "typed-in-outage"


def test_it_tells_an_htmx_form_that_its_draft_is_gone(alice):
    r = alice.post(step_url(str(uuid.uuid4()), "configuration"), {"name": "x"}, **HTMX)
    body = _assert_error_page(r, 404)
    assert "This job draft no longer exists" in body
    assert r["HX-Reswap"] == "none"


def test_it_tells_an_htmx_form_that_it_expired(db, demo_cluster):
    browser = Client(enforce_csrf_checks=True)
    sign_in(browser, demo_cluster, "alice")
    r = browser.post(SUSPEND_GPT2, **HTMX)
    body = _assert_error_page(r, 403)
    assert "This form has expired" in body
    assert r["HX-Reswap"] == "none"


def test_it_loads_the_page_for_a_failed_htmx_read(alice, unreachable_cluster):
    r = alice.get(GPT2, {"tab": "events"}, **HTMX)
    assert r["HX-Redirect"] == GPT2 + "?tab=events"
    assert not r.has_header("HX-Reswap")


# -- 400: too large to read, or not understood -------------------------------------------------
def test_it_explains_a_form_too_large_to_read(alice):
    key = start(alice)
    huge = "x" * (django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    r = alice.post(step_url(key, "resources"), {"env-0-name": "BIG", "env-0-value": huge,
                                                 "action": "next"})
    body = _assert_error_page(r, 400)
    assert "What you sent is too large" in body
    assert filesizeformat(django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE) in body
    assert "shorten what you pasted" in body
    assert draft(key).data.get("env") in (None, [])  # nothing half-read was kept


def test_it_explains_a_request_it_cannot_read(alice):
    r = alice.get(JOBS, HTTP_HOST="not-this-dashboard.example")
    body = _assert_error_page(r, 400)
    assert "could not read this request" in body


# -- 4xx answers are logged with their request id ---------------------------------------------
@pytest.mark.parametrize("method", ["get", "post"])
def test_it_logs_a_refused_request_with_its_request_id(alice, caplog, method):
    from training.web.requestid import RequestIdFilter

    with caplog.at_level(logging.INFO):
        r = getattr(alice, method)("/no/such/page/" if method == "get" else GPT2)
    assert r.status_code in (404, 405)
    lines = [rec for rec in caplog.records if rec.name == "django.request"]
    assert lines and lines[0].levelno == logging.WARNING
    RequestIdFilter().filter(lines[0])
    assert lines[0].request_id == r["X-Request-Id"]


def test_a_403_is_logged_in_one_line_without_a_traceback(bob):
    import logging

    from django.urls import reverse

    caught: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            caught.append(record)

    logger = logging.getLogger("django.request")
    handler = Keep()
    logger.addHandler(handler)
    try:
        url = reverse("training-job-history", args=["team-nlp", "mpijob", "gpt2-finetune", "u1"])
        assert bob.get(url).status_code == 403
    finally:
        logger.removeHandler(handler)
    refused = [r for r in caught if getattr(r, "status_code", None) == 403]
    assert refused and all(r.exc_info is None for r in refused)
    assert all("\n" not in logging.Formatter().format(r) for r in refused)
