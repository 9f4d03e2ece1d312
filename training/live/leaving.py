"""After a socket ended: leaving its channel layer groups and dropping what reached its
channel (training/live/consumers.py calls `forget_channel`)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger("training.live")

LEAVE_RETRY_SECONDS = (0.5, 30.0)  # leaving the groups again, doubling
LEAVE_ATTEMPTS = 8  # about two minutes; past that Redis forgets the memberships in a day
FORGET_AFTER_SECONDS = 10.0  # messages already sent to the channel when it left arrive
_forgetting: set[asyncio.Task] = set()  # (a task nobody refers to may be collected)


def forget_channel(layer: Any, channel: str | None, groups: Any) -> None:
    """After a socket ended: leave the groups it is still in, then drop the messages that
    reached its channel. channels_redis keeps every message for a channel of this process
    in `receive_buffer` until someone receives it, and nobody will: a channel left in
    `hub.status` (a message every 10 s) or a job's group kept up to 100 of them, for as
    long as the membership lasted (a day), for every socket that ended that way."""
    if layer is None or not channel:
        return
    try:
        task = asyncio.get_running_loop().create_task(_leave(layer, channel, set(groups)))
    except RuntimeError:  # no loop (a consumer collected after its loop ended)
        return
    _forgetting.add(task)
    task.add_done_callback(_forgetting.discard)


async def _leave(layer: Any, channel: str, groups: set[str]) -> None:
    delay = LEAVE_RETRY_SECONDS[0]
    for attempt in range(LEAVE_ATTEMPTS):
        for group in sorted(groups):
            try:
                await layer.group_discard(group, channel)
                groups.discard(group)
            except Exception as e:
                if attempt == LEAVE_ATTEMPTS - 1:
                    log.warning("live updates: could not leave %s: %s", group, e)
        if not groups:
            break
        await asyncio.sleep(delay)
        delay = min(delay * 2, LEAVE_RETRY_SECONDS[1])
    await asyncio.sleep(FORGET_AFTER_SECONDS)
    buffers = getattr(layer, "receive_buffer", None)  # channels_redis's
    if buffers is not None:
        buffers.pop(channel, None)


def current_task() -> asyncio.Task | None:
    """The running task, or None when the socket's coroutine is closed outside its loop
    (garbage-collected after the loop ended)."""
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None
