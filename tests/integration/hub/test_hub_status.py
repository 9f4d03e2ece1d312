"""The watch hub tells open pages when it cannot see the cluster, and when it can again.

Every live socket is in the `hub.status` group (training/live/consumers.py): while the hub's
watches fail, the page shows that live updates are paused; when they list again, the page
gets a fresh snapshot. Here the API server itself goes away (simcluster stopped) and comes
back (started again on the same ports and state directory).
"""

from __future__ import annotations

from tests.integration.hub.conftest import Subscriber, embedded_hub, start_cluster
from tests.waiting import wait_until


def states(subscriber: Subscriber) -> list[str]:
    return [m["state"] for m in subscriber.messages if m.get("type") == "hub.status"]


def test_viewers_hear_the_hub_lose_the_cluster_and_find_it_again(tmp_path_factory,
                                                                 loop_thread):
    from channels.layers import get_channel_layer

    from training.live.hub.groups import STATUS_GROUP

    sim = start_cluster(tmp_path_factory, "hub-status")
    try:
        with embedded_hub(sim, loop_thread) as hub:
            pages = Subscriber(loop_thread, loop_thread.call(get_channel_layer), STATUS_GROUP)
            assert hub.sees_cluster()

            sim.stop()  # the API server goes away: every watch fails
            pages.wait_for(lambda m: m["state"] == "down", 60,
                           what="the hub saying it cannot see the cluster")
            assert not hub.sees_cluster() and hub.stats()["sees_cluster"] is False
            # said again every few seconds (for pages that joined since), never "up" meanwhile
            def repeated() -> bool:
                pages.poll(1.0)
                return states(pages).count("down") >= 2
            wait_until(repeated, 60, message=lambda: f"'down' repeated; got {states(pages)}")
            told = states(pages)
            assert "up" not in told[told.index("down"):]

            sim.restart()  # back, on the same address: the watches list again
            def up_again() -> bool:
                pages.poll(1.0)
                told = states(pages)
                return "up" in told[told.index("down"):]
            wait_until(up_again, 90, message=lambda: f"'up' after 'down'; got {states(pages)}")
            assert hub.sees_cluster() and hub.stats()["sees_cluster"] is True
            # every watch lists again (each after its own back-off, some a moment later)
            wait_until(lambda: all(w.synced.is_set() for w in hub.watches), 30,
                       message=lambda: str([w.resource.title for w in hub.watches
                                            if not w.synced.is_set()]))
    finally:
        sim.stop()


def test_a_hung_api_server_is_noticed_within_seconds(tmp_path_factory, loop_thread):
    """An API server that stops answering without closing its connections (SIGSTOP: the
    kernel keeps them open, nothing answers): pages hear "down" within about 10 s, and
    "up" once it answers again, with the watches working."""
    import os
    import signal

    from channels.layers import get_channel_layer

    from training.live.hub.groups import STATUS_GROUP

    sim = start_cluster(tmp_path_factory, "hub-hung")
    try:
        with embedded_hub(sim, loop_thread) as hub:
            pages = Subscriber(loop_thread, loop_thread.call(get_channel_layer), STATUS_GROUP)
            assert hub.sees_cluster()
            os.kill(sim.process.pid, signal.SIGSTOP)
            try:
                # a deadline (the probe's 5 s of silence and the 3 s grace, with room): a
                # watch alone would wait out its 5-minute read timeout
                pages.wait_for(lambda m: m["state"] == "down", 15,
                               what="the hub saying it cannot see the cluster")
            finally:
                os.kill(sim.process.pid, signal.SIGCONT)

            def up_again() -> bool:
                pages.poll(1.0)
                told = states(pages)
                return "up" in told[told.index("down"):]
            wait_until(up_again, 60, message=lambda: f"'up' after 'down'; got {states(pages)}")
            # the watches reconnect once it answers: one may fail a moment longer (a stream
            # cut by the hang), inside the grace that keeps pages from flickering
            wait_until(hub.sees_cluster, 10, message=lambda: str(hub.stats()))
            assert all(w.synced.is_set() for w in hub.watches)
    finally:
        sim.stop()
