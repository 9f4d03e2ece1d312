"""The hub's "cluster changed" notices for the admin overview: one per burst, not too often,
none before the hub is ready, and not lost when a send fails."""

from __future__ import annotations

import threading

from tests.waiting import wait_until
from training.live.hub.cluster import ClusterNotices
from training.live.hub.groups import CLUSTER_GROUP


class Sends:
    def __init__(self, fail: int = 0) -> None:
        self.messages: list[tuple[str, dict]] = []
        self.fail = fail
        self.lock = threading.Lock()

    def __call__(self, group: str, message: dict) -> bool:
        with self.lock:
            if self.fail:
                self.fail -= 1
                return False
            self.messages.append((group, message))
            return True


def _notices(sends: Sends, ready: bool = True, **kwargs) -> ClusterNotices:
    flag = threading.Event()
    if ready:
        flag.set()
    return ClusterNotices(sends, flag, **kwargs).start()


def test_a_burst_of_changes_is_one_notice_to_the_cluster_group():
    sends = Sends()
    notices = _notices(sends, interval=0.05, settle=0.05)
    try:
        for _ in range(20):
            notices.changed()
        wait_until(lambda: sends.messages, 5, message="a notice")
        assert sends.messages[0][0] == CLUSTER_GROUP == "cluster"
        assert sends.messages[0][1]["type"] == "hub.update"
        assert sends.messages[0][1]["cluster"] is True
        notices.changed()
        wait_until(lambda: len(sends.messages) == 2, 5, message="a second notice")
    finally:
        notices.stop()
    assert len(sends.messages) == 2


def test_nothing_is_news_before_the_hub_has_listed_everything():
    sends = Sends()
    notices = _notices(sends, ready=False, interval=0.01, settle=0.01)
    try:
        notices.changed()
        notices.ready.set()
        notices.changed()
        wait_until(lambda: sends.messages, 5, message="the notice after ready")
    finally:
        notices.stop()
    assert len(sends.messages) == 1


def test_a_failed_send_is_tried_again():
    sends = Sends(fail=2)
    notices = _notices(sends, interval=0.01, settle=0.01)
    try:
        notices.changed()
        wait_until(lambda: sends.messages, 5, message="the notice, after two failures")
    finally:
        notices.stop()
    assert sends.fail == 0 and len(sends.messages) == 1


def test_the_cluster_subscription_turns_notices_into_a_refetch():
    import pytest

    from training.live import subscriptions
    from training.live.cluster_subscriptions import SOCKET_URL

    [sub] = subscriptions.parse_query(SOCKET_URL.split("?", 1)[1])
    assert (sub.kind, sub.value, sub.namespace, sub.group) == (
        "cluster", "overview", "", "cluster")  # no namespace: asked cluster-wide
    assert (sub.access.verb, sub.access.resource, sub.access.group) == (
        "list", "resourcequotas", "")
    view = subscriptions.ViewState()
    notice = {"type": "hub.update", "cluster": True, "job": ""}
    assert subscriptions.route([sub], notice, view) == [{"type": "cluster-changed"}]
    job_update = {"type": "hub.update", "job": "team-nlp/mpijob/bert", "html": "<tr></tr>"}
    assert subscriptions.route([sub], job_update, view) == []
    # a job list's subscription ignores the notice
    [ns] = subscriptions.parse_query("ns=team-nlp")
    assert subscriptions.route([ns], notice, view) == []
    with pytest.raises(subscriptions.BadSubscription):
        subscriptions.parse("cluster", "nodes")
