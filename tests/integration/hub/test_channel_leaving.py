"""A socket that ended without leaving its groups (Redis refused, or daphne killed it
before `disconnect` ran) leaves them afterwards, and what channels_redis buffered for
its channel is dropped: otherwise every such socket kept up to 100 messages (a `hub.status`
one every 10 s) for a day (found by benchmarks/soak.py)."""

from __future__ import annotations

import asyncio

import redis

from tests.integration.hub.conftest import LoopThread
from training.live import leaving


def test_an_ended_sockets_channel_leaves_its_groups_and_its_buffer_goes(redis_server,
                                                                        monkeypatch):
    from channels_redis.core import RedisChannelLayer

    monkeypatch.setattr(leaving, "FORGET_AFTER_SECONDS", 0.1)

    async def scenario() -> tuple[bool, bool, set[bytes]]:
        layer = RedisChannelLayer(hosts=[redis_server.url])
        gone, live = await layer.new_channel(), await layer.new_channel()
        for channel in (gone, live):
            await layer.group_add("hub.status", channel)
        await layer.group_send("hub.status", {"type": "hub.status", "state": "up"})
        # a live socket's receive reads this process's messages: the ended one's wait
        await layer.receive(live)
        await asyncio.sleep(0.1)
        buffered = gone in layer.receive_buffer
        await leaving._leave(layer, gone, {"hub.status"})
        dropped = gone not in layer.receive_buffer
        await layer.close_pools()
        members = set(redis.Redis.from_url(redis_server.url).zrange("asgi:group:hub.status",
                                                                    0, -1))
        return buffered, dropped, members

    loop = LoopThread()  # not asyncio.run: Playwright's loop may run in this thread
    try:
        buffered, dropped, members = loop.run(scenario())
    finally:
        loop.close()
    assert buffered  # what the ended socket would never receive
    assert dropped
    assert len(members) == 1  # only the live socket is left in the group
