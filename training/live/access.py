"""Whether the person behind a socket may still follow what it follows: who they are (the
session's cluster token), the check every LIVE_RECHECK_SECONDS while the socket is open,
and the refusals with the close codes the page acts on (training/live/consumers.py
describes the protocol). A mixin of the consumer, as PausingUpdates is."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from importlib import import_module
from types import SimpleNamespace
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY
from django.utils.translation import gettext as _

from odh.training import errors
from training.accounts import session as cluster_session
from training.live import subscriptions
from training.live.hub.languages import in_viewer_language
from training.live.pausing import CLUSTER_AWAY
from training.live.pausing import blocking as _blocking
from training.live.subscriptions import AccessRefused, Frame

log = logging.getLogger("training.live")

BAD_REQUEST = 4400
SIGN_IN = 4401
FORBIDDEN = 4403
SERVER_ERROR = 4500
TRY_AGAIN = 4503

RECHECK_SECONDS = 15.0  # how often an open socket re-checks the session and access


@dataclass(frozen=True)
class Person:
    username: str
    token: str
    session_key: str
    user_id: str


def person_from(data: dict[str, Any], session_key: str, user_id: str) -> Person | None:
    """The signed-in person of this session data, if their cluster token is still live."""
    if not session_key or not user_id or str(data.get(SESSION_KEY, "")) != user_id:
        return None
    shim = SimpleNamespace(session=data)  # training.accounts.session reads `request.session`
    if not cluster_session.has_live_token(shim):
        return None
    info = data.get(cluster_session.KEY) or {}
    return Person(str(info.get("username") or ""), cluster_session.token(shim), session_key,
                  user_id)



class CheckingAccess:
    """The consumer's checks of its person (it has `person`, `subs`, `view`, `closed` and
    the pausing and group methods these use)."""

    # -- while open: is the person still signed in and allowed? -----------------------------
    async def _recheck_loop(self) -> None:
        interval = float(getattr(settings, "LIVE_RECHECK_SECONDS", RECHECK_SECONDS))
        while not self.closed:
            await asyncio.sleep(interval)
            try:
                await self.recheck()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("live updates: re-checking access failed")

    async def recheck(self) -> None:
        assert self.person is not None
        person = await self._read_person(reload=True)
        if self.closed:
            return
        if person is None or person.token != self.person.token:
            with in_viewer_language():
                await self.refuse(SIGN_IN, _("Your session has ended: sign in again."))
            return
        if not await self._rejoin():
            self._channel_lost()
        try:
            await _blocking(subscriptions.check_access)(person.token, list(self.subs.values()),
                                                        self.view)
        except errors.ClusterUnavailable:
            # the cluster is away: the page says so and keeps what it shows; ask again
            # next time
            await self._pause(CLUSTER_AWAY)
            return
        except Exception as e:
            if not self.closed:
                await self._refuse_for(e, first_time=False)
            return
        await self._resume(CLUSTER_AWAY)

    # -- helpers --------------------------------------------------------------------------
    async def send_frame(self, frame: Frame) -> None:
        if isinstance(frame, str):
            await self.send(text_data=frame)
        else:
            await self.send(text_data=json.dumps(frame))

    async def refuse(self, code: int, reason: str) -> None:
        """Say why (the page shows it), then close with a code the page acts on."""
        if self.closed:
            return
        self.closed = True
        await self.send_frame({"type": "closing", "code": code, "reason": reason})
        await self.close(code=code, reason=reason)

    async def _refuse_for(self, e: Exception, first_time: bool) -> None:
        with in_viewer_language():
            if isinstance(e, AccessRefused):
                text = _("You do not have access to %(project)s.") if first_time else \
                    _("You no longer have access to %(project)s.")
                await self.refuse(FORBIDDEN, text % {"project": e.namespace})
            elif isinstance(e, errors.Unauthorized):
                await self.refuse(SIGN_IN, _("Your session has ended: sign in again."))
            elif isinstance(e, errors.ClusterUnavailable):
                await self.refuse(TRY_AGAIN, _("The cluster could not be reached."))
            elif isinstance(e, errors.ClusterError):
                log.warning("live updates: the cluster answered %s: %s", e.status, e.message)
                await self.refuse(TRY_AGAIN, _("The cluster could not answer."))
            else:
                log.error("live updates failed", exc_info=e)
                await self.refuse(SERVER_ERROR, _("Live updates stopped because of an error "
                                                  "on the server."))

    @database_sync_to_async
    def _read_person(self, reload: bool = False) -> Person | None:
        user = self.scope.get("user")
        session = self.scope.get("session")
        if user is None or not user.is_authenticated or session is None:
            return None
        key = session.session_key or ""
        if reload:  # the session as it is now: signed out elsewhere, token replaced...
            store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key)
            data = store.load()
        else:
            data = {k: session.get(k) for k in (SESSION_KEY, HASH_SESSION_KEY,
                                                cluster_session.KEY)}
        return person_from(data, key, str(user.pk))

