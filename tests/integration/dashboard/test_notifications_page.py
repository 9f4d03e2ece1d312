"""/notifications/: subscriptions, their checks at save, the webhook's secret shown once,
"Send a test" queued for the watcher (nothing sent by the request), and "Notify me" on a
job's page."""

from __future__ import annotations

import html
import re

import pytest

PAGE = "/notifications/"


def text_of(response) -> str:
    """The page's words, tags taken out."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


@pytest.fixture(autouse=True)
def _allow_local(settings):
    settings.NOTIFY_WEBHOOK_ALLOW = ["127.0.0.1"]


def _subscribe(client, **fields):
    data = {"scope": "mine", "statuses": ["Failed", "Succeeded"], "in_dashboard": "on"}
    data.update(fields)
    return client.post(PAGE, data)


def test_the_page_is_in_the_user_menu_with_the_default_subscription(alice):
    from training.models import NotificationSubscription

    jobs = alice.get("/jobs/")
    assert 'href="/notifications/"' in jobs.content.decode()
    response = alice.get(PAGE)
    assert response.status_code == 200
    text = text_of(response)
    assert "My jobs" in text and "Failed, Succeeded" in text and "In the dashboard" in text
    (default,) = NotificationSubscription.objects.filter(username="alice")
    assert (default.scope, default.statuses, default.in_dashboard) == (
        "mine", ["Failed", "Succeeded"], True)
    for label in ("Webhook URL", "Email", "Send a test", "Subscribe"):
        assert label in text


@pytest.mark.parametrize(("url", "said"), [
    ("https://169.254.169.254/latest/meta-data/", "private, local or metadata address"),
    ("https://10.1.2.3/hook", "private, local or metadata address"),
    ("http://hooks.example.com/x", "https only"),
    ("not a url", "is not a URL"),
])
def test_a_webhook_that_may_not_be_reached_is_refused_at_save(alice, url, said):
    from training.models import NotificationSubscription

    response = _subscribe(alice, webhook_url=url)
    assert response.status_code == 400
    assert said in text_of(response)
    assert not NotificationSubscription.objects.filter(webhook_url=url).exists()


def test_an_invalid_email_is_refused_at_save(alice):
    response = _subscribe(alice, email="alice-at-example")
    assert response.status_code == 400
    assert "“alice-at-example” is not an email address" in text_of(response)


def test_a_project_one_may_not_see_is_refused(alice):
    response = _subscribe(alice, scope="project", project="research")
    assert response.status_code == 400
    assert "You may not see the jobs of “research”" in text_of(response)


def test_no_channel_is_refused(alice):
    response = alice.post(PAGE, {"scope": "mine", "statuses": ["Failed"]})
    assert response.status_code == 400
    assert "Choose at least one way to be told" in text_of(response)


def test_the_webhooks_secret_is_shown_once_and_a_test_is_queued_not_sent(alice):
    from training.models import NotificationDelivery, NotificationSubscription

    response = _subscribe(alice, scope="project", project="team-nlp",
                          webhook_url="http://127.0.0.1:9/hook", email="alice@example.com")
    assert response.status_code == 200
    saved = NotificationSubscription.objects.get(webhook_url="http://127.0.0.1:9/hook")
    assert saved.webhook_secret and saved.webhook_secret in response.content.decode()
    assert saved.project == "team-nlp" and saved.email == "alice@example.com"
    again = alice.get(PAGE)
    assert saved.webhook_secret not in again.content.decode()
    assert "http://127.0.0.1:9/hook" in text_of(again)

    sent = alice.post(f"/notifications/{saved.pk}/test/")
    assert sent.status_code == 302
    queued = NotificationDelivery.objects.filter(subscription=saved)
    # the watcher sends it: the request only queued it
    assert sorted(queued.values_list("channel", "state")) == [
        ("dashboard", "queued"), ("email", "queued"), ("webhook", "queued")]
    assert "Test" in text_of(alice.get(PAGE))


def test_another_persons_subscription_is_not_found(alice):
    from training.models import NotificationSubscription

    theirs = NotificationSubscription.objects.create(username="bob", scope="mine",
                                                     statuses=["Failed"])
    assert alice.post(f"/notifications/{theirs.pk}/delete/").status_code == 404
    assert alice.post(f"/notifications/{theirs.pk}/test/").status_code == 404
    assert NotificationSubscription.objects.filter(pk=theirs.pk).exists()


def test_notify_me_on_a_jobs_page(alice, demo_cluster):
    from django.test import Client

    from tests.dashboard_support import sign_in
    from training.models import NotificationSubscription

    page = alice.get("/jobs/team-nlp/mpijob/gpt2-finetune/")
    assert "Notify me" in text_of(page)
    response = alice.post("/jobs/team-nlp/mpijob/gpt2-finetune/notify/")
    assert response.status_code == 302
    assert response["Location"] == "/jobs/team-nlp/mpijob/gpt2-finetune/"
    (sub,) = NotificationSubscription.objects.filter(username="alice", scope="job")
    assert (sub.project, sub.kind, sub.job, sub.statuses) == (
        "team-nlp", "MPIJob", "gpt2-finetune", ["Failed", "Succeeded"])
    # bob may not see it: no subscription for him
    bob = Client()
    sign_in(bob, demo_cluster, "bob")
    refused = bob.post("/jobs/team-nlp/mpijob/gpt2-finetune/notify/")
    assert refused.status_code in (403, 404)
    assert not NotificationSubscription.objects.filter(username="bob", scope="job").exists()


def test_signs_before_a_job_ends_are_chosen_per_subscription(alice):
    """Pending longer than N minutes, a possible hang, a restart, the early warnings."""
    from training.models import NotificationSubscription

    response = _subscribe(alice, statuses=[], signals=["pending", "hang", "warnings"],
                          pending_minutes="45")
    assert response.status_code == 200
    sub = NotificationSubscription.objects.get(username="alice", pending_minutes=45)
    assert (sub.statuses, sub.signals) == ([], ["pending", "hang", "warnings"])
    assert all(sub.wants(s) for s in ("pending", "hang", "memory", "deadline"))
    assert not sub.wants("restart")
    text = text_of(alice.get(PAGE))
    assert "Pending longer than 45 minutes, A possible hang, Early warnings" in text


@pytest.mark.parametrize(("fields", "said"), [
    ({"signals": ["pending"], "pending_minutes": ""},
     "Say after how many minutes Pending you want to be told"),
    ({"signals": ["pending"], "pending_minutes": "ten"},
     "“ten” is not a number of minutes: enter a whole number from 1 to 10080"),
    ({"signals": ["pending"], "pending_minutes": "0"}, "“0” is not a number of minutes"),
    ({"statuses": [], "signals": []}, "Choose at least one thing to be told of"),
])
def test_a_bad_n_or_nothing_to_be_told_of_is_refused_with_how_to_fix_it(alice, fields, said):
    from training.models import NotificationSubscription

    alice.get(PAGE)  # the default subscription, made on the first visit
    before = NotificationSubscription.objects.count()
    response = _subscribe(alice, **fields)
    assert response.status_code == 400
    assert said in text_of(response)
    assert NotificationSubscription.objects.count() == before
