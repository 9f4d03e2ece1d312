"""ResilientWatch's life (odh.training.cluster.watch): stopping it closes the client it holds."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from odh.training.cluster.watch import ResilientWatch, WatchedResource
from tests.waiting import wait_until

MPIJOBS = WatchedResource("mpijobs", "kubeflow.org", "v2beta1")


class FakeClient:
    """A ClusterClient whose cluster is away: every list fails. Counts `close()`."""

    timeout = (1.0, 1.0)

    def __init__(self) -> None:
        self.closed = 0
        self.lists = 0
        self.custom = SimpleNamespace(list_cluster_custom_object=self._list)

    def _list(self, *args, **kwargs):
        self.lists += 1
        raise ConnectionRefusedError("no cluster here")

    def close(self) -> None:
        self.closed += 1


def test_stop_closes_the_client_after_the_thread_ends():
    client = FakeClient()
    watch = ResilientWatch(client, MPIJOBS, backoff_initial=0.01, backoff_max=0.02).start()
    wait_until(lambda: watch.errors >= 2, 10, message="the watch retrying")
    assert client.closed == 0  # running: the client is in use
    watch.stop()
    assert not watch.running
    assert client.closed == 1
    watch.stop()  # again: closed once only
    assert client.closed == 1


def test_a_watch_never_started_closes_its_client_on_stop():
    client = FakeClient()
    ResilientWatch(client, MPIJOBS).stop()
    assert client.closed == 1


def test_a_thread_outliving_stops_timeout_closes_the_client_as_it_ends():
    entered, release = threading.Event(), threading.Event()

    class SlowClient(FakeClient):
        def _list(self, *args, **kwargs):
            entered.set()
            release.wait(10)
            return super()._list(*args, **kwargs)

    client = SlowClient()
    watch = ResilientWatch(client, MPIJOBS, backoff_initial=0.01).start()
    assert entered.wait(10)
    watch.stop(timeout=0)  # the thread is still inside a list call
    assert client.closed == 0
    release.set()
    wait_until(lambda: client.closed == 1 and not watch.running, 10,
               message="the watch's thread closing its client")
