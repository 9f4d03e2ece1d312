"""What every kind of live subscription is made of, and the two kinds of the job pages.

`SubscriptionKind` is what a kind implements (see training/live/subscriptions.py, which lists
every kind in its registry `KINDS` and holds the helpers the consumer calls); `ProjectJobs`
(`ns=<project>`: a project's rows) and `OneJob` (`job=<project>/<kind>/<name>`: one job's
page) are here, the admin overview, live logs and Kueue's queues in modules of their own
(training/live/cluster_subscriptions.py, log_subscriptions.py, queue_subscriptions.py). None of
them imports the registry: it imports them.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from odh.training.cluster.access import Access
from odh.training.cluster.client import ClusterClient
from training.permissions import may

log = logging.getLogger("training.live")

SOCKET_PATH = "/ws/live/"
MAX_SUBSCRIPTIONS = 50  # per socket: one page needs a few (a job list: its projects)
LIST_TABLE = "job-table"  # the job list's element that a `refresh` frame fetches again

Frame = str | dict[str, Any]


class BadSubscription(ValueError):
    """A subscription the socket cannot serve; `reason` is shown to the person."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class AccessRefused(Exception):
    """The person may not see this project (any more)."""

    def __init__(self, namespace: str) -> None:
        super().__init__(namespace)
        self.namespace = namespace


@dataclass(frozen=True)
class Subscription:
    kind: str
    value: str
    namespace: str
    group: str
    access: Access
    job_ref: str = ""  # "<ns>/<kind slug>/<name>" for subscriptions to one job
    hub_group: str = ""  # the watch hub's group it is fed by (in no language), if any

    @property
    def key(self) -> str:
        return f"{self.kind}={self.value}"


@dataclass
class ViewState:
    """What one socket's page shows, as far as the kinds need to remember it."""

    statuses: dict[str, str] = field(default_factory=dict)  # job ref -> last status sent
    # project -> slugs of the job kinds the person may get there (`ns` subscriptions)
    kinds: dict[str, frozenset[str]] = field(default_factory=dict)
    # project -> may the person list its pods / its events (what the parts that show pods
    # and Events rows need, as their HTTP twins do); unknown counts as no
    pods: dict[str, bool] = field(default_factory=dict)
    events: dict[str, bool] = field(default_factory=dict)

    # the job list's rows on the page ("<ns>/<kind>/<name>"), when the page names them
    # (`rows=`): only these are sent; None: every row of the followed projects
    shown: frozenset[str] | None = None
    listed: datetime | None = None  # when the page listed its jobs (`listed=`)
    offpage: set[str] = field(default_factory=set)  # jobs not shown that changed since
    # the job page's tab (`tab=`): Events rows are rendered and sent only to the Events
    # tab (the other tabs have no place for them); "": every part, as to an older page
    tab: str = ""
    # the signed-in person's user name (the session's): whose notices the bell may follow
    username: str = ""
    # the browser's time zone (the cookie pages read: training/web/localtime.py), "" if none
    time_zone: str = ""

    def wants_events(self) -> bool:
        return self.tab in ("", "events")

    def sees_pods(self, namespace: str) -> bool:
        return self.pods.get(namespace, False)

    def sees_events(self, namespace: str) -> bool:
        return self.events.get(namespace, False)


def announce(text: str, only_if: str = "") -> dict[str, Any]:
    """A JSON frame for the page's aria-live region; `only_if`: an element id the page
    must show for the sentence to concern it (a list row on this page of the list)."""
    return {"type": "announce", "text": text, "only_if": only_if}


def statuses(items: list[tuple[str, str, str]]) -> dict[str, Any]:
    """Sent just before a snapshot: (element id, status, sentence) of each job in it. The
    page announces the sentence of each element whose status it shows differently (the
    status label's `data-status`): what changed while the page was not connected."""
    return {"type": "statuses",
            "jobs": [{"only_if": i, "status": s, "text": t} for i, s, t in items]}


def refresh(target: str, items: list[tuple[str, str, str]]) -> dict[str, Any]:
    """Asks the page to fetch its element `target` again, over HTTP, at its own address:
    with its filters and the person's own token (static/js/live.js, debounced).

    `items`: (element id, creation time or "", sentence) of each job that may have to
    appear. The page fetches only if one of them is not shown yet and, when a time is
    given, was created after the page listed its jobs (the table's `data-listed-at`); it
    announces the sentence of each that the new table shows. Pushed for a job the watch
    hub reports as added (only the person's filters can tell whether the list shows it),
    and in the job list's snapshot, for a job created while the page was not (yet, or any
    more) connected."""
    return {"type": "refresh", "target": target,
            "jobs": [{"only_if": i, "created": c, "text": t} for i, c, t in items]}


def variant(message: dict[str, Any], key: str, full: bool) -> Any:
    """A hub message's part as this viewer may have it: `key` when it may see the job's
    pods and events, else `<key>_status` (what the job object alone says)."""
    return message.get(key) if full else message.get(f"{key}_status")


# -- kinds -------------------------------------------------------------------------------------
class SubscriptionKind(ABC):
    name = ""

    @abstractmethod
    def parse(self, value: str) -> Subscription:
        ...

    def authorize(self, client: ClusterClient, token: str, sub: Subscription,
                  view: ViewState) -> None:
        """Raises `AccessRefused` unless the token's owner may follow `sub` (blocking;
        answers kept in training/permissions.py). By default: the subscription's one question."""
        if not may(client, token, sub.namespace, sub.access):
            raise AccessRefused(sub.namespace)

    @abstractmethod
    def snapshot(self, client: ClusterClient, sub: Subscription, view: ViewState,
                 now: datetime) -> list[Frame]:
        ...

    def on_message(self, sub: Subscription, message: dict[str, Any],
                   view: ViewState) -> list[Frame]:
        return []
