"""A webhook delivery that fails in a way that may pass (a 503) is tried again with back-off,
doubling, and given up after a day with the reason kept; a slow webhook holds its own
sending thread only, never the other deliveries (training/notifications/sending.py,
training/live/hub/keepers/notifying.py). The receivers are local HTTP servers, allowed by
NOTIFY_WEBHOOK_ALLOW as the demo allows them."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from tests.waiting import wait_until
from tests.webhook_receiver import Quiet, serving


def answering(status: int) -> type[Quiet]:
    """A receiver that keeps each delivery's path and answers `status`."""
    class Answering(Quiet):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.server.received.append(self.path)
            self.send_response(status)
            self.end_headers()
    return Answering


@pytest.mark.django_db(transaction=True)
def test_a_503_is_tried_again_later_and_later_then_given_up_after_a_day(settings):
    from training import notifications
    from training.models import NotificationDelivery, NotificationSubscription

    settings.NOTIFY_WEBHOOK_ALLOW = ["127.0.0.1"]
    with serving(answering(503)) as server:
        sub = NotificationSubscription.objects.create(
            username="alice", scope="mine", statuses=["Failed"], in_dashboard=False,
            webhook_url=f"http://127.0.0.1:{server.server_address[1]}/hook",
            webhook_secret="s")
        notifications.queue_test(sub)
        delivery = NotificationDelivery.objects.get(subscription=sub)
        start = delivery.created

        def attempt(at):
            claimed = notifications.claim_due(5, at)
            if not claimed:
                return None
            ((pk, claim),) = claimed
            return notifications.deliver(pk, claim, clock=lambda: at)

        assert attempt(start) == "queued"
        delivery.refresh_from_db()
        assert (delivery.attempts, delivery.status_code) == (1, 503)
        assert "503" in delivery.last_error
        assert delivery.next_attempt == start + notifications.RETRY_FIRST
        # not before its time
        assert attempt(start + notifications.RETRY_FIRST - timedelta(seconds=1)) is None
        second = start + notifications.RETRY_FIRST
        assert attempt(second) == "queued"
        delivery.refresh_from_db()
        assert delivery.next_attempt == second + 2 * notifications.RETRY_FIRST  # doubled
        # a day after it was queued, the next failure is the last
        assert attempt(start + notifications.GIVE_UP_AFTER) == "failed"
        delivery.refresh_from_db()
        assert (delivery.state, delivery.attempts) == ("failed", 3)
        assert "503" in delivery.last_error
        assert server.received == ["/hook"] * 3
        assert attempt(start + notifications.GIVE_UP_AFTER * 2) is None  # never again


@pytest.mark.django_db(transaction=True)
def test_a_slow_webhook_holds_back_none_of_the_other_deliveries(settings):
    from training import notifications
    from training.live.hub.keepers.notifying import NotificationSender
    from training.models import NotificationDelivery, NotificationSubscription

    release = threading.Event()

    class Slow(Quiet):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.server.received.append(self.path)
            release.wait(20)  # answers once the test has seen the others sent
            self.send_response(204)
            self.end_headers()

    settings.NOTIFY_WEBHOOK_ALLOW = ["127.0.0.1"]
    with serving(Slow) as slow, serving(answering(204)) as fast:
        def subscribe(name: str, server) -> NotificationSubscription:
            return NotificationSubscription.objects.create(
                username=name, scope="mine", statuses=["Failed"], in_dashboard=False,
                webhook_url=f"http://127.0.0.1:{server.server_address[1]}/{name}",
                webhook_secret="s")

        stuck = subscribe("alice", slow)
        notifications.queue_test(stuck)
        others = [subscribe(name, fast) for name in ("bob", "charlie", "dana")]
        for sub in others:
            notifications.queue_test(sub)
        sender = NotificationSender(workers=2, poll=0.2)
        sender.start()
        try:
            wait_until(lambda: slow.received == ["/alice"], 30,
                       message="the slow webhook reached")
            # while alice's webhook has not answered, everyone else's are sent
            wait_until(lambda: NotificationDelivery.objects.filter(
                subscription__in=others, state="sent").count() == 3, 30,
                message=lambda: str(list(NotificationDelivery.objects.values_list(
                    "subscription__username", "state", "last_error"))))
            assert sorted(fast.received) == ["/bob", "/charlie", "/dana"]
            # alice's attempt is still waiting for its answer (not given up for its timeout)
            held = NotificationDelivery.objects.get(subscription=stuck)
            assert (held.state, held.attempts) == ("queued", 0)
        finally:
            release.set()
            sender.stop()
