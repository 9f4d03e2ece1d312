"""Notifications of job transitions, against the demo cluster: two hubs (two watchers) in
this process on the test database, each with its recorder and its sender. A job of
alice's fails: she gets exactly one webhook delivery (to a local receiver, allowed by
NOTIFY_WEBHOOK_ALLOW, that checks the HMAC), one email and one notice in the dashboard;
bob, who subscribed to the project but may not see its jobs (his access gone), gets
nothing: the SubjectAccessReview made at delivery says no."""

from __future__ import annotations

import pytest

from tests.integration.hub.conftest import NS, dashboard_client
from tests.training_jobs import mpijob
from tests.waiting import wait_until
from tests.webhook_receiver import Quiet, serving, signed_by

SECRET = "alice-webhook-secret"


_Receiver = signed_by(SECRET)


@pytest.fixture
def receiver():
    with serving(_Receiver) as server:
        yield server


def _hub(sim):
    from channels.layers import InMemoryChannelLayer

    from training.live.hub.hub import Hub, Publisher
    from training.live.hub.keepers.notifying import NotificationSender
    from training.live.hub.keepers.transitions import TransitionRecorder

    # one sending thread each: SQLite's in-memory test database takes one writer at a time
    return Hub(lambda: dashboard_client(sim), Publisher(InMemoryChannelLayer()),
               transitions=TransitionRecorder(), notifications=NotificationSender(workers=1))


@pytest.mark.django_db(transaction=True)
def test_a_failed_job_is_told_once_to_whoever_may_still_see_it(demo, jobs, receiver,
                                                               settings, mailoutbox):
    from training import cluster
    from training.models import (
        JobTransition,
        Notification,
        NotificationDelivery,
        NotificationSubscription,
    )

    port = receiver.server_address[1]
    settings.NOTIFY_WEBHOOK_ALLOW = ["127.0.0.1"]
    settings.CLUSTER_KUBECONFIG = str(demo.kubeconfig("dashboard"))
    settings.DASHBOARD_URL = "https://dashboard.example.com"
    cluster.cluster_config.cache_clear()
    alice = NotificationSubscription.objects.create(
        username="alice", scope="mine", statuses=["Failed", "Succeeded"], in_dashboard=True,
        email="alice@example.com", webhook_url=f"http://127.0.0.1:{port}/alice",
        webhook_secret=SECRET)
    bob = NotificationSubscription.objects.create(
        username="bob", scope="project", project=NS, statuses=["Failed"], in_dashboard=True,
        email="bob@example.com", webhook_url=f"http://127.0.0.1:{port}/bob",
        webhook_secret=SECRET)
    hubs = [_hub(demo), _hub(demo)]
    for hub in hubs:
        hub.start()
    try:
        job = jobs.create(mpijob("notify-fails", workers=1, run_seconds=30, annotations={
            "opendatahub.io/username": "alice", "simcluster.io/failure": "oom",
            "simcluster.io/failure-after-seconds": "2"}))
        uid = job["metadata"]["uid"]
        jobs.wait_condition("notify-fails", "Failed", timeout=90)
        failed = wait_until(lambda: JobTransition.objects.filter(
            uid=uid, to_status="Failed").first(), 60, message="the transition to Failed")

        def settled() -> bool:
            deliveries = NotificationDelivery.objects.filter(transition=failed)
            return deliveries.count() == 6 and not deliveries.filter(state="queued").exists()

        wait_until(settled, 60, message=lambda: str(list(
            NotificationDelivery.objects.filter(transition=failed).values_list(
                "subscription__username", "channel", "state", "last_error"))))
        wait_until(lambda: all(h.notifications.idle() for h in hubs), 30,
                   message="the senders done")

        # alice: one webhook delivery, signed, with the transition's words
        assert [(path, signed) for path, signed, _body in receiver.received] == \
            [("/alice", True)]
        body = receiver.received[0][2]
        assert set(body) == {"event", "job", "project", "kind", "from", "to", "at",
                             "headline", "url", "text"}
        assert (body["job"], body["project"], body["kind"], body["to"]) == (
            "notify-fails", NS, "MPIJob", "Failed")
        assert body["url"] == f"https://dashboard.example.com/jobs/{NS}/mpijob/notify-fails/"
        assert "notify-fails" in body["text"] and f"<{body['url']}|" in body["text"]
        assert body["headline"] == failed.headline
        # one email, one notice in the dashboard
        assert [m.to for m in mailoutbox] == [["alice@example.com"]]
        assert "notify-fails" in mailoutbox[0].subject and "Failed" in mailoutbox[0].subject
        assert body["url"] in mailoutbox[0].body
        notices = list(Notification.objects.filter(username="alice", job="notify-fails"))
        assert len(notices) == 1 and "Failed" in notices[0].text
        states = dict(NotificationDelivery.objects.filter(
            transition=failed, subscription=alice).values_list("channel", "state"))
        assert states == {"dashboard": "sent", "email": "sent", "webhook": "sent"}
        webhook = NotificationDelivery.objects.get(transition=failed, subscription=alice,
                                                   channel="webhook")
        assert (webhook.status_code, webhook.attempts) == (204, 1)
        # bob may not see team-nlp's jobs: nothing sent to him, and his deliveries say why
        assert not Notification.objects.filter(username="bob").exists()
        skipped = NotificationDelivery.objects.filter(transition=failed, subscription=bob)
        assert {d.state for d in skipped} == {"skipped"}
        assert all("bob may no longer see this job" in d.last_error for d in skipped)
        # the job's creation (Pending) and start (Running) were not asked for
        assert NotificationDelivery.objects.exclude(transition=failed).filter(
            transition__uid=uid).count() == 0
    finally:
        for hub in hubs:
            hub.stop()
        cluster.cluster_config.cache_clear()


@pytest.mark.django_db(transaction=True)
def test_a_webhook_that_is_gone_is_turned_off_and_its_owner_told(demo, settings):
    """410 Gone: the subscription is off, the delivery failed, a notice says so."""
    from datetime import UTC, datetime

    from training import notifications
    from training.models import Notification, NotificationDelivery, NotificationSubscription

    class Gone(Quiet):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(410)
            self.end_headers()

    with serving(Gone) as server:
        settings.NOTIFY_WEBHOOK_ALLOW = ["127.0.0.1"]
        sub = NotificationSubscription.objects.create(
            username="alice", scope="mine", statuses=["Failed"], in_dashboard=False,
            webhook_url=f"http://127.0.0.1:{server.server_address[1]}/", webhook_secret="s")
        notifications.queue_test(sub)
        ((pk, claim),) = notifications.claim_due(5, datetime.now(UTC))
        assert notifications.claim_due(5, datetime.now(UTC)) == []  # claimed: not twice
        assert notifications.deliver(pk, claim) == "failed"
        sub.refresh_from_db()
        assert not sub.active and "410 Gone" in sub.disabled_reason
        assert NotificationDelivery.objects.get(pk=pk).status_code == 410
        assert Notification.objects.filter(username="alice",
                                           text__contains="410 Gone").count() == 1


@pytest.mark.django_db(transaction=True)
def test_access_revoked_after_queueing_and_before_sending_sends_nothing(demo, settings):
    """bob may see team-nlp's jobs when the failure is queued for him, not when it is due:
    the SubjectAccessReview at delivery says no, and nothing reaches him."""
    from datetime import UTC, datetime

    from tests.dashboard_support import role_in
    from training import cluster, notifications
    from training.models import (
        JobTransition,
        Notification,
        NotificationDelivery,
        NotificationSubscription,
    )

    settings.CLUSTER_KUBECONFIG = str(demo.kubeconfig("dashboard"))
    cluster.cluster_config.cache_clear()
    try:
        bob = NotificationSubscription.objects.create(
            username="bob", scope="project", project=NS, statuses=["Failed"],
            in_dashboard=True)
        failed = JobTransition.objects.create(
            uid="revoked-1", namespace=NS, kind="MPIJob", name="revoked-job",
            created_by="alice", from_status="Running", to_status="Failed",
            at=datetime.now(UTC), headline="Out of memory")
        with role_in(demo, NS, "bob", "view", "bob-views-team-nlp"):
            assert notifications.may_see_with_sar(bob, failed)  # he may, while queued
            assert notifications.queue_for(failed) == 1
        ((pk, claim),) = notifications.claim_due(5)
        assert notifications.deliver(pk, claim) == "skipped"
        delivery = NotificationDelivery.objects.get(pk=pk)
        assert "bob may no longer see this job" in delivery.last_error
        assert not Notification.objects.filter(username="bob").exists()
    finally:
        cluster.cluster_config.cache_clear()
