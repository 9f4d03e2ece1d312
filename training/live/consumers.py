"""Live updates: one websocket per browser tab, at `/ws/live/` (see dashboard/asgi.py).

A tab opens one socket (browsers cap websockets per host) and subscribes to what it shows;
`training.live.subscriptions` says what each kind of subscription means. This consumer is the
protocol only.

Connecting
    `/ws/live/?ns=team-nlp&ns=team-cv`: the job list (the projects its filters cover);
    `/ws/live/?job=team-nlp/mpijob/bert-large-pretrain`: a job's page;
    `&notices=alice` (or a subscribe message): the masthead's bell, only the person's own.
    The Origin must be the dashboard's own (scheme, host and port: training/live/origin.py)
    and the session cookie a signed-in person's.
    For each subscription, before joining its group, a SelfSubjectAccessReview made with
    the person's token must allow it (answers cached 60 s per person and project; a
    project's job list asks for each job kind, and gets the rows of the allowed ones). Then,
    on every (re)connect, the current state is sent first (read with the person's token),
    then `{"type": "ready"}`, then every update of the watch hub as it comes.

Browser -> server (JSON text frames; optional, the URL usually says it all)
    {"action": "subscribe", "kind": "job", "value": "team-nlp/mpijob/bert"}
    {"action": "unsubscribe", "kind": "job", "value": "team-nlp/mpijob/bert"}
    {"action": "show", "page": "rows=team-nlp/mpijob/bert,...&listed=<time>"}  (a job list
        shows other rows: see subscriptions.parse_page)

Server -> browser (text frames)
    HTML: top-level elements with ids and `hx-swap-oob`, swapped by the htmx websocket
        extension (list rows, the job's header status, Overview parts, Topology; the
        Events tab's rows in a frame of their own, since the HTML parser drops a <tbody>
        that does not start its fragment).
    JSON (the frame starts with "{"), read by static/js/live.js:
        {"type": "ready", "subscriptions": ["job=team-nlp/mpijob/bert"]}
        {"type": "subscribed" | "unsubscribed", "subscription": "job=..."}
        {"type": "announce", "text": "Job bert is now Running: 4/4 workers",
         "only_if": "<id of an element the page must show for the sentence to concern it>"}
        {"type": "statuses", "jobs": [{"only_if": "job-header-status", "status": "Running",
         "text": "Job bert is now Running: 4/4 workers"}]}   (just before a snapshot: the
         page announces what it showed differently, i.e. what changed while it was away)
        {"type": "refresh", "target": "job-table", "jobs": [{"only_if": "job-row-...",
         "created": "2024-05-01T10:00:00Z" or "", "text": "Job bert was created."}]}
         (a job was added, or the snapshot has jobs the page may lack: the job list fetches
         its table again over HTTP if it lacks one of them; see subscriptions.refresh)
        {"type": "closing", "code": 4403, "reason": "You no longer have access to team-nlp."}
        {"type": "paused"}   (the socket is open but updates cannot reach it for now: the
         watch hub does not see the cluster, the cluster does not answer the person, or the
         channel layer (Redis) is away; the page shows its "Reconnecting…" notice. When they
         can again, the current state is sent, then "ready" again.)

Close codes (sent by the server after a "closing" frame that carries the reason, because
daphne passes no close reason to the browser and its websocket library sends no code but
1000 and 3000-4999 from a server: 1008 or 1013 cannot be used):
    4400  the page asked for something this socket cannot follow (unknown kind, malformed
          value, unreadable message): the page stops live updates.
    4401  not signed in, session over, token expired or revoked: the page reloads, which
          goes through sign-in and back to the same page.
    4403  the person may not (or no longer) get MPIJobs in that project: the page shows the
          reason and stops live updates. (An HTTP-like 4403 rather than 1008 so that the
          page can tell "no access" from "sign in again".)
    4503  the cluster could not be asked (unreachable): the page reconnects with back-off.
    4500  an unexpected error on the server: the page reconnects with back-off.
Anything else (the server going away: 1001, 1006...) means reconnect with back-off.

While open
    Every LIVE_RECHECK_SECONDS (15 s) the socket checks the session and access again, and
    joins its groups again: Redis forgets group memberships when it restarts (and
    channels_redis after a day), which would leave an open socket silently deaf. Every
    socket is also in the `hub.status` group, where the watch hub says whether it sees the
    cluster (training/live/hub/status.py). A channel layer that fails under the socket (Redis
    restarting) pauses it until it can join its groups again, then sends the current state.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from django.utils.translation import gettext as _

from odh.training.cluster.access import identity
from training.live import log_subscriptions, subscriptions
from training.live.access import (
    BAD_REQUEST,
    SIGN_IN,
    CheckingAccess,
    Person,
)
from training.live.hub.groups import CONTROL_GROUP, STATUS_GROUP
from training.live.hub.languages import RENEW_SECONDS as LANGUAGE_RENEW_SECONDS
from training.live.hub.languages import (
    in_viewer_language,
    language_of_scope,
    renew_message,
    set_viewer_language,
)
from training.live.leaving import current_task, forget_channel
from training.live.pausing import HUB_BLIND, PausingUpdates
from training.live.pausing import blocking as _blocking
from training.live.subscriptions import (
    BadSubscription,
    Subscription,
    ViewState,
)
from training.monitoring import exposition as monitoring
from training.web.localtime import COOKIE as TZ_COOKIE

log = logging.getLogger("training.live")

HUB_READY_SECONDS = 20.0  # the longest a socket waits for a starting hub's first lists


class LiveConsumer(CheckingAccess, PausingUpdates, AsyncWebsocketConsumer):
    """One browser tab's live updates (the protocol is described above)."""

    async def connect(self) -> None:
        self.subs: dict[str, Subscription] = {}
        self.view = ViewState()
        self.joined: set[str] = set()
        self.person: Person | None = None
        self.closed = False
        self.recheck_task: asyncio.Task | None = None
        self.lease_task: asyncio.Task | None = None  # renews leases on live log streams
        self.language_task: asyncio.Task | None = None  # names the language to the hub
        self.hub_epoch = ""  # the watch hub last heard of (a new one: resync)
        self.rejoin_task: asyncio.Task | None = None  # after the channel layer failed
        self.paused: set[str] = set()  # why updates cannot reach this socket now, if they can't
        self.live = False  # "ready" was sent: the page shows what it is sent
        self.resync_lock = asyncio.Lock()
        # Accept first: a refused handshake reaches the page as a bare 1006, with no code to
        # tell "sign in again" from "no access", and the htmx extension retries it forever.
        await self.accept()
        monitoring.websocket_opened()  # mpijob_dashboard_websocket_connections
        self.counted = True
        self.language = language_of_scope(self.scope)
        set_viewer_language(self.language)  # this socket's sentences, renderings and groups
        self.person = await self._read_person()
        if self.person is None:
            with in_viewer_language():
                await self.refuse(SIGN_IN, _("Sign in again to see live updates."))
            return
        self.view.username = self.person.username  # whose notices it may follow
        self.view.time_zone = str((self.scope.get("cookies") or {}).get(TZ_COOKIE, ""))
        try:
            wanted = subscriptions.parse_query(self.scope.get("query_string", b""))
            subscriptions.parse_page(self.scope.get("query_string", b""), self.view)
        except BadSubscription as e:
            await self.refuse(BAD_REQUEST, e.reason)
            return
        try:  # before the snapshot: a "the hub is blind" said meanwhile is not missed
            await self.channel_layer.group_add(STATUS_GROUP, self.channel_name)
            self.joined.add(STATUS_GROUP)
        except Exception as e:
            await self._refuse_for(e, first_time=True)
            return
        hub = await self._hub_ready()
        # before the snapshot: the hub renders for this socket from now
        await self._name_language(wanted)
        if await self.add(wanted):
            await self.send_frame({"type": "ready", "subscriptions": list(self.subs)})
            self.live = True
            status = getattr(hub, "status", None)
            if status is not None and status.down:  # the embedded hub: known right here
                self.paused.add(HUB_BLIND)
            if self.paused:
                await self.send_frame({"type": "paused"})
            self.recheck_task = asyncio.create_task(self._recheck_loop())
            self.language_task = asyncio.create_task(self._renew_language())

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:  # however the socket ended (an error too), no task of it runs on
            self._end()
            # and its channel is forgotten: groups `disconnect` could not leave (Redis
            # refused, or the server killed a socket slow to end before it ran) are left
            # in the background, then what reached the channel meanwhile is dropped
            forget_channel(getattr(self, "channel_layer", None),
                            getattr(self, "channel_name", None), getattr(self, "joined", ()))

    def _end(self) -> None:
        self.closed = True
        if getattr(self, "counted", False):
            self.counted = False
            monitoring.websocket_closed()
        for task in (getattr(self, "recheck_task", None), getattr(self, "rejoin_task", None),
                     getattr(self, "lease_task", None), getattr(self, "language_task", None)):
            if task is not None and task is not current_task():
                task.cancel()

    async def disconnect(self, code: int) -> None:
        followed_logs = self.lease_task is not None
        self._end()
        if followed_logs:  # this socket followed logs: give the streams up
            await self._leases("unsubscribe_all", [])
        for group in list(self.joined):
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
                self.joined.discard(group)
            except Exception as e:  # left again later (_forget_channel), if Redis allows
                log.info("live updates: could not leave %s: %s", group, e)

    # -- from the browser -----------------------------------------------------------------
    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None
                      ) -> None:
        if self.closed:
            return
        try:
            message = json.loads(text_data or "")
            action = message["action"]
            if action == "show":  # the job list's page shows other rows now
                await self.show(str(message.get("page") or ""))
                return
            sub = subscriptions.parse(message.get("kind"), message.get("value"))
        except BadSubscription as e:
            await self.refuse(BAD_REQUEST, e.reason)
            return
        except (ValueError, TypeError, KeyError):
            with in_viewer_language():
                await self.refuse(BAD_REQUEST, _("The page sent a message the server does "
                                                 "not understand."))
            return
        if action == "subscribe":
            await self._name_language([sub])
            if await self.add([sub]):
                await self.send_frame({"type": "subscribed", "subscription": sub.key})
        elif action == "unsubscribe":
            await self.remove(sub)
            await self.send_frame({"type": "unsubscribed", "subscription": sub.key})
        else:
            with in_viewer_language():
                await self.refuse(BAD_REQUEST, _("The page sent a message the server does "
                                                 "not understand."))

    # -- from the watch hub (group messages) ----------------------------------------------
    async def hub_update(self, message: dict[str, Any]) -> None:
        await self.route(message)

    async def hub_log(self, message: dict[str, Any]) -> None:
        await self.route(message)  # new lines of a followed pod (log_subscriptions)

    async def hub_log_end(self, message: dict[str, Any]) -> None:
        await self.route(message)

    async def hub_notice(self, message: dict[str, Any]) -> None:
        await self.route(message)  # a notice for the person's bell (notice_subscriptions)

    async def hub_notices_read(self, message: dict[str, Any]) -> None:
        await self.route(message)  # read in another tab: the bell's count

    async def hub_status(self, message: dict[str, Any]) -> None:
        """The watch hub says whether it sees the cluster (training/live/hub/status.py)."""
        if self.closed:
            return
        if message.get("state") == "down":
            await self._pause(HUB_BLIND)
        elif message.get("state") == "up":
            epoch = str(message.get("hub") or "")
            another = bool(epoch and self.hub_epoch and epoch != self.hub_epoch)
            self.hub_epoch = epoch or self.hub_epoch
            if HUB_BLIND in self.paused or another:  # a new hub knows no language yet
                await self._name_language()
            if another and not self.paused and self.live:
                # a hub that took over pushed nothing of what changed before it: resync
                log.info("live updates of %s: a new watch hub; sending a fresh snapshot",
                         self.channel_name)
                await self._resync()
            await self._resume(HUB_BLIND)

    async def route(self, message: dict[str, Any]) -> None:
        """Forward a group message as the frames its subscriptions make of it."""
        if self.closed or not self.subs:
            return
        for frame in subscriptions.route(self.subs.values(), message, self.view):
            await self.send_frame(frame)

    # -- subscriptions --------------------------------------------------------------------
    async def add(self, wanted: list[Subscription]) -> bool:
        """Check access, join the groups, send the current state. False: socket closed."""
        assert self.person is not None
        new = [s for s in wanted if s.key not in self.subs]
        if len(self.subs) + len(new) > subscriptions.MAX_SUBSCRIPTIONS:
            with in_viewer_language():
                await self.refuse(BAD_REQUEST, _("Too many live subscriptions on one page."))
            return False
        token = self.person.token
        try:
            await _blocking(subscriptions.check_access)(token, new, self.view)
            for sub in new:  # join before reading the state: no change falls in between
                self.subs[sub.key] = sub
                if sub.group not in self.joined:
                    await self.channel_layer.group_add(sub.group, self.channel_name)
                    self.joined.add(sub.group)
            await self._leases("subscribe", new)  # the hub's log streams start now
            frames = await _blocking(subscriptions.snapshots)(token, new, self.view)
        except Exception as e:  # every failure closes with a code the page knows
            await self._refuse_for(e, first_time=True)
            return False
        for frame in frames:
            await self.send_frame(frame)
        return True

    async def show(self, page: str) -> None:
        """`{"action": "show", "page": "rows=...&listed=..."}`: a job list's table fetched
        again (another page, a filter, a new job) shows these rows; `"tab=events"`: the job
        page shows another tab. They are sent their current state (a change between the
        HTTP rendering and this message is not lost), and from now on only what they show."""
        self.view.shown, self.view.tab = None, ""
        self.view.offpage.clear()
        subscriptions.parse_page(page, self.view)
        listing = [s for s in self.subs.values() if s.kind in ("ns", "job")]
        try:
            frames = await _blocking(subscriptions.snapshots)(self.person.token, listing,
                                                               self.view)
        except Exception as e:
            await self._refuse_for(e, first_time=False)
            return
        for frame in frames:
            await self.send_frame(frame)

    async def remove(self, sub: Subscription) -> None:
        if self.subs.pop(sub.key, None) is not None:
            await self._leases("unsubscribe", [sub])
        if sub.group in self.joined and all(s.group != sub.group for s in self.subs.values()):
            await self.channel_layer.group_discard(sub.group, self.channel_name)
            self.joined.discard(sub.group)

    # -- leases on the hub's log streams (training/live/log_subscriptions.py) --------------------
    async def _leases(self, action: str, subs: list[Subscription]) -> None:
        """Tell the watch hub (whichever process runs it) which pods this socket follows."""
        owner = identity(self.person.token) if self.person else ""  # the hub caps per person
        messages = log_subscriptions.lease_messages(action, self.channel_name, subs, owner)
        if not messages:
            return
        if action == "subscribe" and self.lease_task is None:
            self.lease_task = asyncio.create_task(self._renew_leases())
        for group, message in messages:
            try:
                await self.channel_layer.group_send(group, message)
            except Exception as e:  # Redis away: the next renewal tries again
                log.warning("live logs: could not reach the watch hub: %s", e)

    async def _renew_leases(self) -> None:
        while not self.closed:
            await asyncio.sleep(log_subscriptions.RENEW_EVERY)
            await self._leases("renew", list(self.subs.values()))

    # -- the viewer's language, for the hub's renderings (training/live/hub/languages.py) --------
    async def _name_language(self, more: list[Subscription] = ()) -> None:
        """Tell the hub this socket's language and the groups it follows (`more`: about
        to be added): it renders their pushes for it (training/live/hub/languages.py)."""
        groups = sorted({s.hub_group for s in [*self.subs.values(), *more] if s.hub_group})
        if not groups:
            return
        try:
            await self.channel_layer.group_send(CONTROL_GROUP,
                                                renew_message(self.language, groups))
        except Exception as e:  # Redis away: the next renewal tries again
            log.warning("live updates: could not reach the watch hub: %s", e)

    async def _renew_language(self) -> None:
        while not self.closed:
            await asyncio.sleep(LANGUAGE_RENEW_SECONDS)
            await self._name_language()

    async def _hub_ready(self) -> Any:
        """Start the embedded watch hub with the first socket (daphne has no lifespan
        events) and let it finish its first lists before the snapshot is read: it pushes
        only what changes after those, so a change in between would be missed (unless it
        cannot see the cluster: then the page is told updates are paused). The embedded
        hub, if any."""
        try:
            from training.live.hub import ensure_started
            hub = ensure_started()
        except Exception:
            log.exception("live updates: the watch hub could not start")
            return None
        ready = getattr(hub, "ready", None)
        if ready is not None and not ready.is_set():
            await asyncio.to_thread(hub.wait_ready, HUB_READY_SECONDS)
        return hub
