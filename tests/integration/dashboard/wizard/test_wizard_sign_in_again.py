"""A step's form sent when the person's OpenShift token has expired or was revoked: what
they typed is kept in their draft, and signing in again brings them back to it."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from django.test import Client
from django.urls import reverse

from odh.training.cluster.api import make_api_client
from odh.training.cluster.client import ClusterClient
from tests.dashboard_support import session_token, sign_in
from tests.integration.dashboard.wizard.wizard_flow import (
    draft,
    form_values,
    key_of,
    start,
    step_url,
)

LOGIN = reverse("training-login")
TYPED = {"name": "typed-before-sign-in", "image": "quay.io/example/trainer:1.2",
         "command": "mpirun -np 4 python /workspace/typed.py"}


def _expire_token(client) -> None:
    session = client.session
    session["openshift"] = dict(session["openshift"], expires_at=0)
    session.save()


def _revoke_token(client, demo_cluster) -> None:
    token = session_token(client)
    with ClusterClient(make_api_client(demo_cluster.api_url, token,
                                       str(demo_cluster.ca_file))) as own:
        own.delete_own_token(token)


def _form_with_typing(client, key: str, step: str = "configuration") -> dict:
    url = step_url(key, step)
    values = form_values(client.get(url).content.decode(), url)
    return {**values, **TYPED, "action": "next"}


def _sign_in_target(location: str) -> str:
    parts = urlsplit(location)
    assert parts.path == LOGIN, location
    return parse_qs(parts.query)["next"][0]


def _shown_after_signing_in_again(client, demo_cluster, next_url: str) -> dict:
    sign_in(client, demo_cluster, "alice")
    page = client.get(next_url)
    assert page.status_code == 200
    return form_values(page.content.decode(), next_url)


def test_it_keeps_a_step_sent_after_the_token_expired(alice, demo_cluster):
    key = start(alice)
    posted = _form_with_typing(alice, key)
    _expire_token(alice)
    r = alice.post(step_url(key, "configuration"), posted)
    assert r.status_code == 302
    back = _sign_in_target(r["Location"])
    assert back == step_url(key, "configuration")
    shown = _shown_after_signing_in_again(alice, demo_cluster, back)
    assert {name: shown[name] for name in TYPED} == TYPED


def test_it_keeps_a_step_sent_after_the_token_was_revoked(alice, demo_cluster):
    key = start(alice)
    posted = _form_with_typing(alice, key)
    _revoke_token(alice, demo_cluster)
    r = alice.post(step_url(key, "configuration"), posted)
    assert r.status_code == 302
    back = _sign_in_target(r["Location"])
    assert back == step_url(key, "configuration")
    shown = _shown_after_signing_in_again(alice, demo_cluster, back)
    assert {name: shown[name] for name in TYPED} == TYPED


def test_it_keeps_a_step_sent_by_htmx_after_the_token_expired(alice, demo_cluster):
    key = start(alice)
    resources = step_url(key, "resources")
    posted = {**form_values(alice.get(resources).content.decode(), resources),
              "workers": "7", "action": "next"}
    _expire_token(alice)
    r = alice.post(resources, posted, HTTP_HX_REQUEST="true", HTTP_HX_BOOSTED="true",
                   HTTP_HX_TARGET="wizard", HTTP_HX_CURRENT_URL="http://testserver" + resources)
    assert r.status_code == 204
    back = _sign_in_target(r["HX-Redirect"])
    assert back == resources
    assert _shown_after_signing_in_again(alice, demo_cluster, back)["workers"] == "7"


def test_it_keeps_what_the_field_check_sent_after_the_token_expired(alice, demo_cluster):
    key = start(alice)
    posted = {**_form_with_typing(alice, key), "step": "configuration"}
    _expire_token(alice)
    r = alice.post(reverse("training-job-new-validate", args=[key]), posted,
                   HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER_NAME="name")
    back = _sign_in_target(r["HX-Redirect"])
    assert _shown_after_signing_in_again(alice, demo_cluster, back)["name"] == TYPED["name"]


def test_it_writes_nothing_into_the_draft_from_a_forged_form(db, demo_cluster):
    browser = Client(enforce_csrf_checks=True)
    sign_in(browser, demo_cluster, "alice")
    page = browser.get(reverse("training-job-new"))
    token = form_values(page.content.decode(), reverse("training-job-new"))[
        "csrfmiddlewaretoken"]
    r = browser.post(reverse("training-job-new"), {"start": "mpijob",
                                                    "csrfmiddlewaretoken": token})
    key = key_of(r)
    before = dict(draft(key).data)
    _expire_token(browser)
    # another site's form: no CSRF token
    r = browser.post(step_url(key, "configuration"), {**TYPED, "action": "next"})
    assert r.status_code == 403
    assert draft(key).data == before
