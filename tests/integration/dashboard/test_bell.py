"""The bell's side of the live websocket (training/live/notice_subscriptions.py), without a
browser: a notice the watcher stores reaches its owner's open sockets, and only theirs;
nobody may follow another person's notices. Sockets as in test_consumer.py (the real ASGI
application, a signed-in session cookie); the notice goes the watcher's way: a transition
queued, its delivery claimed and delivered, pushed through the channel layer."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from tests.integration.dashboard import test_consumer as consumer
from tests.webhook_receiver import Quiet, serving

# the live socket's fixtures (a loop standing in for daphne's, signed-in cookies, tabs)
loop, open_tab, cookie_of = consumer.loop, consumer.open_tab, consumer.cookie_of
_live_settings = consumer._live_settings

NS = "team-nlp"


def _publish(loop):
    from channels.layers import get_channel_layer

    return lambda group, message: loop.run(get_channel_layer().group_send(group, message))


def _deliver_transition(loop, username: str, job: str) -> None:
    """A transition of `username`'s job to Failed, queued and delivered by the watcher's
    code to their bell (the SubjectAccessReview answered yes here: tested elsewhere)."""
    from training import notifications
    from training.live.hub.keepers.notifying import tell
    from training.models import JobTransition, NotificationSubscription

    if not NotificationSubscription.objects.filter(username=username).exists():
        NotificationSubscription.objects.create(
            username=username, scope="mine", statuses=["Failed"], in_dashboard=True)
    transition = JobTransition.objects.create(
        uid=f"uid-{job}", namespace=NS, kind="MPIJob", name=job, created_by=username,
        from_status="Running", to_status="Failed", at=datetime.now(UTC),
        headline="Worker 1 ran out of memory")
    assert notifications.queue_for(transition) == 1
    publish = _publish(loop)
    for pk, claim in notifications.claim_due(10):
        notifications.deliver(pk, claim, may_see=lambda *_: True,
                              tell=lambda notice: tell(publish, notice))


def _frames_of_type(tab, kind: str) -> dict:
    return json.loads(tab.until(lambda f: f.startswith("{") and json.loads(f)["type"] == kind))


def test_a_notice_reaches_only_its_owner_s_sockets(open_tab, loop, cookie_of):
    alice = open_tab("notices=alice", cookie_of("alice"))
    alice_again = open_tab("notices=alice", cookie_of("alice"))  # her second tab
    bob = open_tab("notices=bob", cookie_of("bob"))
    for tab, who in ((alice, "alice"), (alice_again, "alice"), (bob, "bob")):
        snapshot = _frames_of_type(tab, "notices")
        assert snapshot["unread"] == 0 and 'id="bell-list"' in snapshot["html"]
        assert tab.until_ready()["subscriptions"] == [f"notices={who}"]

    _deliver_transition(loop, "alice", "alices-job")
    for tab in (alice, alice_again):
        notice = _frames_of_type(tab, "notice")
        assert notice["unread"] == 1
        assert "alices-job" in notice["html"] and "Worker 1 ran out of memory" in notice["html"]
        assert 'href="/jobs/team-nlp/mpijob/alices-job/"' in notice["html"]
        assert 'data-status="Running"' in notice["html"]
        assert 'data-status="Failed"' in notice["html"]
        assert notice["text"].startswith("New notification: alices-job in team-nlp is Failed")

    # bob hears nothing of alice's: the next frame his socket gets is his own notice
    _deliver_transition(loop, "bob", "bobs-job")
    frame = json.loads(bob.next())
    assert frame["type"] == "notice" and "bobs-job" in frame["html"]
    assert not any("alices-job" in f for f in bob.frames)
    assert not any("bobs-job" in f for f in alice.frames)


def test_nobody_may_follow_another_person_s_notices(open_tab, loop, cookie_of):
    # in the socket's address
    tab = open_tab("notices=alice", cookie_of("bob"))
    assert tab.until_closed() == 4403
    assert not any(f.startswith('{"type": "notices"') for f in tab.frames)
    # or asked for later, on a socket of bob's own
    bobs = open_tab("notices=bob", cookie_of("bob"))
    bobs.until_ready()
    bobs.send({"action": "subscribe", "kind": "notices", "value": "alice"})
    assert bobs.until_closed() == 4403
    assert not any(f.startswith('{"type": "notices"') and "alice" in f
                   for f in bobs.frames[1:])


def test_opening_the_drawer_lists_the_notices_and_marks_them_read(open_tab, loop, cookie_of,
                                                                  client, demo_cluster):
    from tests.dashboard_support import sign_in
    from training.models import Notification

    _deliver_transition(loop, "alice", "read-me")
    sign_in(client, demo_cluster, "alice")
    page = client.get("/jobs/")
    assert 'aria-label="Notifications, 1 unread"' in page.content.decode()
    listed = client.post("/notifications/read/").content.decode()
    assert "read-me" in listed and "New" in listed
    assert not Notification.objects.filter(username="alice", read=False).exists()
    assert 'aria-label="Notifications"' in client.get("/jobs/").content.decode()
    # a socket opened now starts from nothing unread
    tab = open_tab("notices=alice", cookie_of("alice"))
    assert _frames_of_type(tab, "notices")["unread"] == 0


class _Gone(Quiet):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(410)
        self.end_headers()


def test_a_webhook_turned_off_by_410_gone_is_told_in_the_bell(open_tab, loop, cookie_of,
                                                              settings):
    from training import notifications
    from training.live.hub.keepers.notifying import tell
    from training.models import NotificationSubscription

    settings.NOTIFY_WEBHOOK_ALLOW = ["127.0.0.1"]
    tab = open_tab("notices=alice", cookie_of("alice"))
    tab.until_ready()
    with serving(_Gone) as receiver:
        url = f"http://127.0.0.1:{receiver.server_address[1]}/gone"
        subscription = NotificationSubscription.objects.create(
            username="alice", scope="mine", statuses=["Failed"], in_dashboard=False,
            webhook_url=url, webhook_secret="s")
        notifications.queue_test(subscription)
        publish = _publish(loop)
        for pk, claim in notifications.claim_due(10):
            notifications.deliver(pk, claim, tell=lambda notice: tell(publish, notice))
    notice = _frames_of_type(tab, "notice")
    assert notice["unread"] == 1
    assert "Webhook turned off" in notice["html"] and url in notice["html"]
    assert 'href="/notifications/"' in notice["html"]
