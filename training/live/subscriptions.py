"""What an open page subscribes to over its websocket, and what it is sent.

The consumer (`training.live.consumers.LiveConsumer`) is only the protocol; this module says what
each kind of subscription means. `KINDS` is the dispatch table, keyed by the name used in
the socket's URL query and in subscribe messages:

| kind  | value                     | group (channel layer)  | access asked                  |
|-------|---------------------------|------------------------|-------------------------------|
| `ns`  | `<project>`               | `ns.<project>`         | get <plural>, per served kind |
| `job` | `<project>/<kind>/<name>` | `job.<project>.<name>` | get <kind plural> (its group) |
| `logs`| `<project>/<pod>[/<c>]`   | `logs.<project>.<pod>` | get pods/log (log_subscriptions) |
| `notices` | `<user name>`         | `notices.<digest>`     | none: their own name only |

A kind turns a value into a `Subscription` (`parse`, raising `BadSubscription` with a
sentence for the page), says whether the person may follow it (`authorize`, blocking,
asked on subscribing and again while the socket stays open), renders what a page must be
sent on every (re)connect (`snapshot`, blocking: called in a worker thread with a client
acting as the person) and turns a group message into frames for this socket
(`on_message`), or ignores it.

A project's rows are of every training job kind the cluster serves: `ns` asks `get` for
each kind, refuses the project only when every kind is refused, and sends the rows (the
snapshot's and the pushed ones) of the allowed kinds only (`ViewState.kinds`).

Frames are what goes to the browser: a `str` is HTML (top-level elements with ids and
`hx-swap-oob`, swapped by the htmx websocket extension); a `dict` is a JSON message
(`{"type": "announce", "text": ..., "only_if": <element id>}` for the aria-live region;
`{"type": "refresh", ...}` asks the job list to fetch its table again: see `refresh`).

A kind is a `SubscriptionKind` (training/live/subscription_kinds.py, where the job pages' two
kinds live); `KINDS` below lists every kind explicitly: a new kind is a module of its own
that imports the base classes and a line here, and the consumer needs no change beyond a
handler for its group message type that calls `route`. The kinds never import this module.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode

from django.utils.translation import gettext as _

from odh.training.durations import parse_timestamp
from training.cluster import client_for_token
from training.live.cluster_subscriptions import ClusterOverview
from training.live.hub.languages import in_viewer_language
from training.live.job_subscriptions import OneJob, ProjectJobs
from training.live.log_subscriptions import PodLogs
from training.live.notice_subscriptions import PersonNotices
from training.live.queue_subscriptions import QueueChanges
from training.live.subscription_kinds import (  # noqa: F401 - the names pages and tests know from here
    LIST_TABLE,
    MAX_SUBSCRIPTIONS,
    SOCKET_PATH,
    AccessRefused,
    BadSubscription,
    Frame,
    Subscription,
    SubscriptionKind,
    ViewState,
    announce,
    refresh,
    statuses,
)

log = logging.getLogger("training.live")

# every kind of subscription, by the name used in the socket's URL query and in messages
KINDS: dict[str, SubscriptionKind] = {k.name: k for k in (
    ProjectJobs(), OneJob(), ClusterOverview(), PodLogs(), QueueChanges(), PersonNotices())}


# -- helpers for the consumer and the pages ------------------------------------------------------
def parse(kind: str, value: Any) -> Subscription:
    handler = KINDS.get(kind) if isinstance(kind, str) else None
    with in_viewer_language():
        if handler is None:
            raise BadSubscription(_("Live updates cannot follow “%(kind)s”.")
                                  % {"kind": str(kind)[:40]})
        if not isinstance(value, str) or not value:
            raise BadSubscription(_("Live updates need something to follow."))
    return handler.parse(value)


# what the page shows, not subscriptions (`parse_page`): the job list's rows and when it
# listed them, the job page's tab
ROWS, LISTED, TAB = "rows", "listed", "tab"
TABS = ("overview", "topology", "logs", "events", "metrics", "configuration")
MAX_ROWS = 200


def _query_pairs(query_string: bytes | str) -> list[tuple[str, str]]:
    if isinstance(query_string, bytes):
        query_string = query_string.decode("latin-1")
    return parse_qsl(query_string, keep_blank_values=True)


def parse_page(query_string: bytes | str, view: ViewState) -> None:
    """`rows=<ns>/<kind>/<name>,...&listed=<time>`: the rows a job list page shows and when
    it listed them; `tab=events`: the job page's tab; into `view` (absent: every row, every
    part is sent, as to an older page)."""
    for key, value in _query_pairs(query_string):
        if key == ROWS:
            refs = [ref for ref in value.split(",") if ref]
            if len(refs) > MAX_ROWS:
                with in_viewer_language():
                    raise BadSubscription(_("Too many rows for live updates on one page."))
            view.shown = frozenset(refs)
        elif key == LISTED:
            view.listed = parse_timestamp(value)
        elif key == TAB:
            view.tab = value if value in TABS else ""


def parse_query(query_string: bytes | str) -> list[Subscription]:
    """`ns=team-nlp&ns=team-cv` or `job=team-nlp/mpijob/bert`: the socket's subscriptions."""
    pairs = [(k, v) for k, v in _query_pairs(query_string) if k not in (ROWS, LISTED, TAB)]
    if len(pairs) > MAX_SUBSCRIPTIONS:
        with in_viewer_language():
            raise BadSubscription(_("Too many live subscriptions on one page."))
    subs: dict[str, Subscription] = {}
    for kind, value in pairs:
        sub = parse(kind, value)
        subs.setdefault(sub.key, sub)
    return list(subs.values())


def list_namespaces(covered: Iterable[str], shown: Iterable[str],
                    unreadable: Iterable[str] = ()) -> list[str]:
    """The projects a job list's socket follows: every project its filters cover (so that
    a job created in one of them shows up), less those it could not wholly read
    (`unreadable`: the person may get no job kind there maybe, which would refuse the
    socket), plus those of the rows it shows; only the rows' projects when that would be
    more than a socket may follow."""
    unreadable = set(unreadable)
    shown = list(dict.fromkeys(shown))
    namespaces = list(dict.fromkeys([*(ns for ns in covered if ns not in unreadable), *shown]))
    return namespaces if len(namespaces) <= MAX_SUBSCRIPTIONS else shown[:MAX_SUBSCRIPTIONS]


def socket_url(namespaces: Iterable[str] = (), jobs: Iterable[str] = (),
               rows: Iterable[str] | None = None, listed: str = "", tab: str = "",
               queues: Iterable[str] = (), notices: str = "") -> str:
    """The address a page opens its socket on (relative: the browser adds ws[s]://host);
    a job list names the rows it shows and when it listed them (`parse_page`)."""
    params = [("ns", ns) for ns in dict.fromkeys(namespaces)]
    params += [("job", ref) for ref in dict.fromkeys(jobs)]
    params += [("queue", q) for q in dict.fromkeys(queues)]
    if notices:
        params.append(("notices", notices))
    if rows is not None:
        params.append((ROWS, ",".join(rows)))
    if listed:
        params.append((LISTED, listed))
    if tab:
        params.append((TAB, tab))
    return SOCKET_PATH + ("?" + urlencode(params) if params else "")


def route(subs: Iterable[Subscription], message: dict[str, Any],
          view: ViewState) -> list[Frame]:
    """The frames a group message becomes for a socket with these subscriptions.

    A socket in two groups that both carry a message's HTML (a job's page and its project's
    list) gets it once."""
    frames: list[Frame] = []
    for sub in subs:
        for frame in KINDS[sub.kind].on_message(sub, message, view):
            if frame not in frames:
                frames.append(frame)
    return frames


# -- blocking work, run in a worker thread by the consumer ----------------------------------------
def check_access(token: str, subs: Iterable[Subscription],
                 view: ViewState | None = None) -> None:
    """Ask (or recall) whether the token's owner may follow each subscription; what a
    kind learns on the way (the job kinds allowed in a project) goes into `view`.

    Raises `AccessRefused` for the first one refused, `errors.Unauthorized` when the token
    is expired or revoked, other `errors.ClusterError`s when the cluster cannot answer."""
    subs = list(subs)
    if not subs:
        return
    view = view if view is not None else ViewState()
    with client_for_token(token) as client:
        for sub in subs:
            KINDS[sub.kind].authorize(client, token, sub, view)


def snapshots(token: str, subs: Iterable[Subscription], view: ViewState,
              now: datetime | None = None) -> list[Frame]:
    """The current state for these subscriptions, read with the person's token, in the
    viewer's language."""
    now = now or datetime.now(UTC)
    frames: list[Frame] = []
    with in_viewer_language(), client_for_token(token) as client:
        for sub in subs:
            frames.extend(KINDS[sub.kind].snapshot(client, sub, view, now))
    return frames
