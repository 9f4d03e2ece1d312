"""Signing in through the cluster's real OAuth server, signing out, expired and revoked tokens.

The Django test client cannot follow a redirect to another host, so the part a person does
on the OpenShift login page is done with `requests`, as a browser would.
"""

from __future__ import annotations

import html
import time
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse
from kubernetes import client as k8s

from odh.training.cluster.api import make_api_client
from odh.training.cluster.client import ClusterClient
from tests.dashboard_support import (
    log_in_at_openshift,
    register_redirect_uri,
    session_token,
    sign_in,
)
from tests.html_checks import assert_valid

LOGIN = reverse("training-login")
CALLBACK = reverse("training-oauth-callback")
LOGOUT = reverse("training-logout")
GPT2 = reverse("training-job-detail", args=["team-nlp", "mpijob", "gpt2-finetune"])


@pytest.fixture(scope="module", autouse=True)
def _testserver_may_receive_codes(demo_cluster):
    register_redirect_uri(demo_cluster, "http://testserver/oauth/callback/")


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _through_sign_in(client, demo_cluster, login_location: str, username: str,
                     browser=None):
    """From the dashboard's sign-in URL to the response of its OAuth callback."""
    r = client.get(login_location)
    assert r.status_code == 302
    authorize = r["Location"]
    assert authorize.startswith(demo_cluster.oauth_url + "/oauth/authorize?")
    back = log_in_at_openshift(demo_cluster, authorize, username, browser)
    assert back.startswith("http://testserver" + CALLBACK + "?")
    return client.get(_path(back))


def _cluster_answer_to(demo_cluster, token: str) -> int:
    """The HTTP status the API server gives this token for users/~."""
    with make_api_client(demo_cluster.api_url, token, str(demo_cluster.ca_file)) as api:
        try:
            k8s.CustomObjectsApi(api).get_cluster_custom_object(
                "user.openshift.io", "v1", "users", "~")
        except k8s.ApiException as e:
            return e.status
    return 200


def test_it_signs_in_through_openshift_and_returns_to_the_page(client, db, demo_cluster):
    r = client.get(LOGIN, {"next": "/jobs/?q=bert"})
    assert r.status_code == 302
    query = parse_qs(urlsplit(r["Location"]).query)
    assert query["client_id"] == ["mpijob-dashboard"]
    assert query["response_type"] == ["code"]
    assert query["scope"] == ["user:full"]
    assert query["redirect_uri"] == ["http://testserver" + CALLBACK]

    back = log_in_at_openshift(demo_cluster, r["Location"], "alice")
    done = client.get(_path(back))
    assert done.status_code == 302
    assert done["Location"] == "/jobs/?q=bert"

    stored = client.session["openshift"]
    token = session_token(client)
    assert token.startswith("sha256~")
    assert stored["username"] == "alice"
    assert "data-scientists" in stored["groups"]
    assert stored["expires_at"] > time.time()
    assert _cluster_answer_to(demo_cluster, token) == 200

    page = client.get("/jobs/?q=bert")
    assert page.status_code == 200
    assert "bert-large-pretrain" in page.content.decode()
    assert "alice" in page.content.decode()


def test_it_never_sends_people_to_another_site_after_sign_in(client, db):
    client.get(LOGIN, {"next": "https://evil.example/phish"})
    assert list(client.session["login_next_by_state"].values()) == [
        reverse("training-job-list")]


def test_tabs_signing_in_at_once_each_come_back_to_their_own_page(client, db, demo_cluster):
    """Each sign-in carries its own way back (by its OAuth state): two tabs whose session
    ended sign in again at the same time, and finish in either order."""
    wizard = "/jobs/new/3f2c3f59-1d5b-4f2e-9a43-8b9f0c1e2d3a/resources/"
    first = client.get(LOGIN, {"next": GPT2 + "?tab=events"})
    second = client.get(LOGIN, {"next": wizard})
    browser_two = log_in_at_openshift(demo_cluster, second["Location"], "alice")
    browser_one = log_in_at_openshift(demo_cluster, first["Location"], "alice")
    assert _path(client.get(_path(browser_two))["Location"]) == wizard
    assert _path(client.get(_path(browser_one))["Location"]) == GPT2 + "?tab=events"


def test_twenty_five_tabs_signing_in_together_each_come_back_to_their_own_page(
        client, db, demo_cluster):
    """Once the way back of only the last 20 sign-ins under way was kept: tabs 1 to 5 of
    25 came back to the job list."""
    pages = [f"/jobs/?q=tab-{n}" for n in range(25)]
    started = [client.get(LOGIN, {"next": page})["Location"] for page in pages]
    for page, authorize in [(pages[0], started[0]), (pages[4], started[4]),
                            (pages[24], started[24])]:
        back = log_in_at_openshift(demo_cluster, authorize, "alice")
        assert _path(client.get(_path(back))["Location"]) == page


def test_it_explains_a_sign_in_with_the_wrong_state(client, db, demo_cluster):
    r = client.get(LOGIN, {"next": "/jobs/"})
    back = log_in_at_openshift(demo_cluster, r["Location"], "alice")
    code = parse_qs(urlsplit(back).query)["code"][0]
    failed = client.get(CALLBACK, {"code": code, "state": "not-the-state-we-sent"})
    assert failed.status_code == 400
    body = failed.content.decode()
    assert "Sign-in did not complete" in body
    assert failed["X-Request-Id"] in body
    assert "Traceback" not in body
    assert_valid(body)
    assert "openshift" not in client.session


def test_it_explains_a_callback_without_a_code(client, db):
    r = client.get(CALLBACK)
    assert r.status_code == 400
    assert "Sign-in did not complete" in r.content.decode()


def test_it_explains_a_refusal_by_the_oauth_server_in_its_own_words(client, db, caplog):
    # anyone can send a person to this address with words of their choosing: our page says
    # our sentence, theirs goes to the log for support
    r = client.get(CALLBACK, {"error": "access_denied",
                              "error_description": "Your account is locked: call +1 555"})
    assert r.status_code == 403
    body = r.content.decode()
    assert "OpenShift refused the sign-in." in body
    assert "account is locked" not in body and "555" not in body
    assert r["X-Request-Id"] in body
    assert_valid(body)
    assert "Your account is locked: call +1 555" in caplog.text


def test_it_signs_out_and_ends_the_token(alice, demo_cluster):
    token = session_token(alice)
    assert _cluster_answer_to(demo_cluster, token) == 200
    r = alice.post(LOGOUT)
    assert r.status_code == 302
    assert r["Location"] == reverse("training-signed-out")
    page = alice.get(r["Location"])
    body = page.content.decode()
    assert "You have signed out" in body
    assert "Sign out" not in body
    assert_valid(body)
    assert _cluster_answer_to(demo_cluster, token) == 401
    assert alice.get("/jobs/").status_code == 302


def test_it_signs_out_only_by_post(alice):
    assert alice.get(LOGOUT).status_code == 405
    assert alice.get("/jobs/").status_code == 200


def test_it_signs_out_someone_whose_token_already_expired(alice):
    session = alice.session
    session["openshift"] = dict(session["openshift"], expires_at=time.time() - 5)
    session.save()
    r = alice.post(LOGOUT)
    assert r.status_code == 302
    assert r["Location"] == reverse("training-signed-out")


def test_it_sends_an_expired_session_through_sign_in(alice):
    session = alice.session
    session["openshift"] = dict(session["openshift"], expires_at=time.time() - 5)
    session.save()
    r = alice.get(GPT2, {"tab": "events"})
    assert r.status_code == 302
    assert r["Location"] == (
        LOGIN + "?next=%2Fjobs%2Fteam-nlp%2Fmpijob%2Fgpt2-finetune%2F%3Ftab%3Devents")


def test_it_tells_htmx_to_redirect_when_the_token_expired(alice):
    session = alice.session
    session["openshift"] = dict(session["openshift"], expires_at=time.time() - 5)
    session.save()
    r = alice.get(GPT2, {"tab": "events"}, HTTP_HX_REQUEST="true",
                  HTTP_HX_CURRENT_URL="http://testserver" + GPT2 + "?tab=logs")
    assert r.status_code == 204
    target = urlsplit(r["HX-Redirect"])
    assert target.path == LOGIN
    assert parse_qs(target.query)["next"] == ["http://testserver" + GPT2 + "?tab=logs"]


def test_it_brings_someone_with_a_revoked_token_back_to_the_page(client, db, demo_cluster):
    import requests

    browser = requests.Session()
    done = _through_sign_in(client, demo_cluster, LOGIN + "?next=/jobs/", "alice", browser)
    assert done.status_code == 302
    token = session_token(client)
    with ClusterClient(make_api_client(demo_cluster.api_url, token,
                                       str(demo_cluster.ca_file))) as own:
        own.delete_own_token(token)
    assert _cluster_answer_to(demo_cluster, token) == 401

    page = GPT2 + "?tab=events"
    r = client.get(page)
    assert r.status_code == 302
    assert _path(r["Location"]) == LOGIN + "?next=%2Fjobs%2Fteam-nlp%2Fmpijob%2Fgpt2-finetune" \
        "%2F%3Ftab%3Devents"
    # still signed in at OpenShift: straight back with a new code, then to the page
    again = _through_sign_in(client, demo_cluster, r["Location"], "alice", browser)
    assert again.status_code == 302
    assert again["Location"] == page
    assert session_token(client) not in ("", token)
    assert client.get(page).status_code == 200


def test_it_lets_anyone_see_the_sign_in_failure_page_in_plain_words(client, db):
    body = html.unescape(client.get(CALLBACK, {"error": "server_error"}).content.decode())
    assert "Sign in with OpenShift" in body


def test_it_keeps_the_token_out_of_the_page(client, db, demo_cluster):
    token = sign_in(client, demo_cluster, "alice")
    for url in ("/jobs/", GPT2, GPT2 + "?tab=configuration"):
        assert token not in client.get(url).content.decode()
