"""Keeping an open live socket honest while updates cannot reach it.

Three things can stop updates reaching an open socket without closing it: the watch hub
not seeing the cluster (it says so in the `hub.status` group), the cluster not answering
the person's access re-check, and the channel layer (Redis) failing under the socket,
which may also make Redis forget the socket's group memberships. For each the page is
sent `{"type": "paused"}` (it shows "Reconnecting…"); when the last reason goes, the
socket sends the current state read with the person's token, then "ready" again.
`PausingUpdates` is the part of training.live.consumers.LiveConsumer that does this.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from asgiref.sync import sync_to_async

from odh.training import errors
from training.live import subscriptions

log = logging.getLogger("training.live")

REJOIN_SECONDS = (0.5, 10.0)  # joining the groups again after the channel layer failed

# why updates cannot reach a socket for now (LiveConsumer.paused)
HUB_BLIND = "hub"  # the watch hub does not see the cluster
CLUSTER_AWAY = "cluster"  # the cluster does not answer the person's re-check
CHANNEL_LOST = "channel"  # the channel layer (Redis) failed: group memberships may be gone


def blocking(fn):
    """Cluster calls and rendering, off the event loop, several at once."""
    return sync_to_async(fn, thread_sensitive=False)


class PausingUpdates:
    """Pause and resync for LiveConsumer (which provides person, subs, view, joined,
    closed, live, paused, rejoin_task, resync_lock, send_frame and _refuse_for)."""

    closed: bool
    live: bool
    paused: set[str]
    joined: set[str]
    person: Any
    rejoin_task: asyncio.Task | None
    resync_lock: asyncio.Lock

    # -- while updates cannot reach the page ------------------------------------------------
    async def _pause(self, reason: str) -> None:
        """Updates cannot reach the page for now: it shows its "Reconnecting…" notice."""
        if self.closed:
            return
        told = bool(self.paused)
        self.paused.add(reason)
        if self.live and not told:
            log.info("live updates of %s paused (%s)", self.channel_name, reason)
            await self.send_frame({"type": "paused"})

    async def _resume(self, reason: str) -> None:
        """One reason fewer; with none left, the page gets the current state, then "ready"
        (what changed while it could not hear of it)."""
        if reason not in self.paused:
            return
        self.paused.discard(reason)
        if not self.paused and self.live:
            await self._resync()

    async def _resync(self) -> None:
        assert self.person is not None
        async with self.resync_lock:
            if self.closed or self.paused:
                return
            try:
                frames = await blocking(subscriptions.snapshots)(
                    self.person.token, list(self.subs.values()), self.view)
            except errors.ClusterUnavailable:
                await self._pause(CLUSTER_AWAY)  # the next re-check asks again
                return
            except Exception as e:
                await self._refuse_for(e, first_time=False)
                return
            if self.closed or self.paused:
                return
            for frame in frames:
                await self.send_frame(frame)
            await self.send_frame({"type": "ready", "subscriptions": list(self.subs)})
            log.info("live updates of %s resumed", self.channel_name)

    # -- the channel layer (Redis) going away under an open socket ----------------------------
    @property
    def channel_receive(self):
        return self._channel_receive

    @channel_receive.setter
    def channel_receive(self, receive) -> None:
        # channels sets this before dispatching. Its receive raising (Redis restarting)
        # would end the consumer, the socket with it; this one waits for Redis instead.
        self._channel_receive = self._receive_outlasting_the_layer(receive)

    def _receive_outlasting_the_layer(self, receive):
        async def outlasting() -> dict:
            delay = REJOIN_SECONDS[0]
            while True:
                try:
                    return await receive()
                except asyncio.CancelledError:
                    raise
                except Exception as e:
                    log.warning("live updates: the channel layer failed (%s); trying again",
                                e or type(e).__name__)
                    self._channel_lost()
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, REJOIN_SECONDS[1])
        return outlasting

    async def _rejoin(self) -> bool:
        """Join every group again (idempotent): Redis forgets memberships when it restarts,
        channels_redis after a day. False: the channel layer could not be reached."""
        try:
            for group in list(self.joined):
                await self.channel_layer.group_add(group, self.channel_name)
        except Exception as e:
            log.warning("live updates: could not join the groups again: %s",
                        e or type(e).__name__)
            return False
        return True

    def _channel_lost(self) -> None:
        """Updates may have been lost and the groups forgotten: pause, join again as soon
        as the layer is back, then send the current state."""
        if getattr(self, "closed", True) or getattr(self, "person", None) is None:
            return
        if self.rejoin_task is None or self.rejoin_task.done():
            self.rejoin_task = asyncio.create_task(self._join_again())

    async def _join_again(self) -> None:
        await self._pause(CHANNEL_LOST)
        delay = REJOIN_SECONDS[0]
        while not self.closed:
            await asyncio.sleep(delay)
            if await self._rejoin():
                await self._resume(CHANNEL_LOST)
                return
            delay = min(delay * 2, REJOIN_SECONDS[1])
