"""The hub's live logs: `odh.training.logs.logstreams.LogStreams` driven over the channel layer.

Whichever process runs the hub (the web process when embedded, `runwatcher` in
production) joins the group `hub.control` and listens there for leases that websocket
consumers send, from any web replica (through Redis in production):

    {"type": "logs.subscribe",   "namespace": ns, "pod": pod, "container": c,
     "subscriber": <the consumer's channel name>,
     "owner": <a digest of the person's token: odh.training.cluster.access.identity>}
    {"type": "logs.renew",       ...same fields}   every ~20 s while the page follows
    {"type": "logs.unsubscribe", ...same fields}   the page stopped following that pod
    {"type": "logs.unsubscribe_all", "subscriber": ...}   the websocket closed

A consumer sends them only after the person's own SelfSubjectAccessReview allowed `get
pods/log` in that namespace (training/live/log_subscriptions.py); the hub then follows the pod
with the dashboard's service account, ONE follow request per pod whoever watches, and
sends batched lines to the group `logs.<ns>.<pod>`, which those consumers joined:

    {"type": "hub.log", "namespace", "pod", "container", "lines": [[ts, text], ...],
     "skipped": n}
    {"type": "hub.log_end", "namespace", "pod", "container", "reason"}

Leases run out after 60 s without renewal, so a web process that dies cannot keep a
stream open. A renewal the hub has never heard of (it restarted) subscribes again. One
owner (a person, over all their tabs) follows at most `MAX_STREAMS_PER_OWNER` pods: a lease
over that is refused (see odh.training.logs.logstreams).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from odh.training.cluster.api import is_namespace_name, is_object_name
from odh.training.cluster.client import ClusterClient
from odh.training.logs.logstreams import KubeLogSource, LogStreams, PodKey
from training.live.hub.groups import CONTROL_GROUP, logs_group
from training.live.hub.languages import RENEW as LANGUAGE_RENEW
from training.live.hub.languages import groups_of

log = logging.getLogger("training.live.hub")

REJOIN_SECONDS = 60.0  # group memberships expire in Redis (and vanish when it restarts)
ERROR_BACKOFF = (0.5, 10.0)

SUBSCRIBE, RENEW, UNSUBSCRIBE, UNSUBSCRIBE_ALL = (
    "logs.subscribe", "logs.renew", "logs.unsubscribe", "logs.unsubscribe_all")


def lease_message(action: str, subscriber: str, namespace: str = "", pod: str = "",
                  container: str = "", owner: str = "") -> dict[str, Any]:
    """What a consumer sends to CONTROL_GROUP (action: one of the four above)."""
    return {"type": action, "namespace": namespace, "pod": pod, "container": container,
            "subscriber": subscriber, "owner": owner}


def _key(message: dict[str, Any]) -> PodKey | None:
    ns, pod = str(message.get("namespace") or ""), str(message.get("pod") or "")
    container = str(message.get("container") or "")
    if not is_namespace_name(ns) or not is_object_name(pod) or (
            container and not is_namespace_name(container)):
        return None
    return ns, pod, container


class LogHub:
    def __init__(self, publisher: Any, client_factory: Callable[[], ClusterClient],
                 on_language: Callable[[str, list[str] | None], object] = (
                     lambda _language, _groups: None),
                 **options: Any) -> None:
        self.publisher = publisher
        self.on_language = on_language  # a viewer's language (training/live/hub/languages.py)
        self.streams = LogStreams(KubeLogSource(client_factory), self._publish, **options)
        self._future: Future | None = None
        self.control_messages = 0

    def start(self) -> LogHub:
        self.streams.start()
        self._future = asyncio.run_coroutine_threadsafe(self._control(), self.publisher.loop)
        return self

    def stop(self) -> None:
        if self._future is not None:
            self._future.cancel()
        self.streams.stop()

    def active_streams(self) -> int:
        return self.streams.active_streams()

    def stats(self) -> dict[str, Any]:
        return {**self.streams.stats(), "control_messages": self.control_messages}

    def _publish(self, key: PodKey, message: dict) -> None:
        self.publisher.send(logs_group(key[0], key[1]), message)

    def handle(self, message: dict[str, Any]) -> None:
        """One control message (ignored when malformed: it came from a web process, but a
        bad one must not stop the hub)."""
        self.control_messages += 1
        action = message.get("type")
        if action == LANGUAGE_RENEW:
            self.on_language(str(message.get("language") or "")[:16], groups_of(message))
            return
        subscriber = str(message.get("subscriber") or "")
        if not subscriber:
            return
        if action == UNSUBSCRIBE_ALL:
            self.streams.unsubscribe_all(subscriber)
            return
        key = _key(message)
        if key is None:
            log.warning("live logs: ignoring a lease for %r/%r", message.get("namespace"),
                        message.get("pod"))
            return
        if action in (SUBSCRIBE, RENEW):
            # a message without an owner (an older web process) counts as its own owner
            owner = str(message.get("owner") or "")[:64]
            self.streams.subscribe(key, subscriber, owner)
        elif action == UNSUBSCRIBE:
            self.streams.unsubscribe(key, subscriber)

    async def _control(self) -> None:
        """Listen on `hub.control` for as long as the hub runs."""
        layer = self.publisher.layer
        delay = ERROR_BACKOFF[0]
        channel = ""
        while True:
            try:
                if not channel:
                    channel = await layer.new_channel()
                await layer.group_add(CONTROL_GROUP, channel)
                while True:
                    try:
                        message = await asyncio.wait_for(layer.receive(channel), REJOIN_SECONDS)
                    except TimeoutError:
                        await layer.group_add(CONTROL_GROUP, channel)  # still a member
                        continue
                    delay = ERROR_BACKOFF[0]
                    try:
                        self.handle(message)
                    except Exception:
                        log.exception("live logs: a control message failed")
            except asyncio.CancelledError:
                try:
                    await layer.group_discard(CONTROL_GROUP, channel)
                except Exception:  # Redis away while stopping: the membership expires
                    log.debug("live logs: leaving %s failed", CONTROL_GROUP, exc_info=True)
                raise
            except Exception as e:  # Redis restarting: join again when it is back
                log.warning("live logs: control channel: %s; again in %.1fs", e, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, ERROR_BACKOFF[1])
