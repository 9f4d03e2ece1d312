"""The `logs` subscription of the live websocket: one pod's log lines as they are written.

| kind   | value                              | group (channel layer) | access asked           |
|--------|------------------------------------|-----------------------|------------------------|
| `logs` | `<project>/<pod>[/<container>]`    | `logs.<project>.<pod>`| get pods/log ("" group)|

Browser -> server: `{"action": "subscribe", "kind": "logs", "value": "team-nlp/bert-worker-1"}`
(and "unsubscribe"), on the page's one socket (training/live/consumers.py).

Server -> browser (JSON frames, read by static/js/logs.js):

    {"type": "log", "namespace", "pod", "container", "snapshot": true,
     "lines": [["2024-05-01T10:00:00.123456789Z", "text"], ...], "problem": ""}
        on every (re)subscribe: the pod's last 500 lines, read with the person's token
    {"type": "log", "namespace", "pod", "container", "lines": [...], "skipped": 0,
     "reread": false}
        new lines, as the watch hub batches them (every ~150 ms); "reread": these lines
        begin a new reading of the log from some way back (the hub's stream just opened)
    {"type": "log_end", "namespace", "pod", "container", "reason": "finished"}
        the pod finished or was deleted: nothing more will come

Timestamps have nine fraction digits, so they compare as strings: the page drops lines it
already has (the hub's stream starts a little before the snapshot ends, and a reconnect
sends a new snapshot), comparing a snapshot or a "reread" batch with what it shows.

The consumer also holds a lease on the hub's stream for each `logs` subscription
(`lease_messages`, sent to the `hub.control` group): taken on subscribe, renewed every
20 s, given up on unsubscribe and when the socket closes; the hub (training/live/hub/logs.py)
keeps one follow request per pod for all of them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _

from odh.training import errors
from odh.training.cluster.access import Access
from odh.training.cluster.api import is_namespace_name, is_object_name
from odh.training.cluster.client import ClusterClient
from odh.training.logs.logstreams import RENEW_SECONDS, split_line
from training.live.hub.groups import CONTROL_GROUP, logs_group
from training.live.hub.languages import in_viewer_language
from training.live.hub.logs import RENEW, SUBSCRIBE, UNSUBSCRIBE, UNSUBSCRIBE_ALL, lease_message
from training.live.subscription_kinds import (
    AccessRefused,
    BadSubscription,
    Frame,
    Subscription,
    SubscriptionKind,
    ViewState,
)

GET_POD_LOGS = Access("get", "pods", "", "log")
SNAPSHOT_LINES = 500
RENEW_EVERY = RENEW_SECONDS


def _split(value: str) -> tuple[str, str, str]:
    parts = value.split("/")
    if len(parts) == 2:
        parts.append("")
    if len(parts) != 3 or not is_namespace_name(parts[0]) or not is_object_name(parts[1]) \
            or (parts[2] and not is_namespace_name(parts[2])):
        with in_viewer_language():
            raise BadSubscription(_("“%(value)s” does not name a pod (project/pod).")
                                  % {"value": value[:80]})
    return parts[0], parts[1], parts[2]


def _frame(mtype: str, ns: str, pod: str, container: str, **fields: Any) -> dict[str, Any]:
    return {"type": mtype, "namespace": ns, "pod": pod, "container": container, **fields}


class PodLogs(SubscriptionKind):
    """`logs=<project>/<pod>[/<container>]`: one pod's log, followed live."""

    name = "logs"
    leased = True  # the consumer holds a lease on the hub's stream (lease_messages)

    def parse(self, value: str) -> Subscription:
        ns, pod, _container = _split(value)
        return Subscription(self.name, value, ns, logs_group(ns, pod), GET_POD_LOGS)

    def snapshot(self, client: ClusterClient, sub: Subscription, view: ViewState,
                 now: datetime) -> list[Frame]:
        ns, pod, container = _split(sub.value)
        try:
            text = client.read_log(ns, pod, container=container or None,
                                   tail_lines=SNAPSHOT_LINES, timestamps=True)
        except errors.NotFound:
            return [_frame("log_end", ns, pod, container, reason="deleted")]
        except errors.Forbidden:
            raise AccessRefused(ns) from None
        except (errors.Unauthorized, errors.ClusterUnavailable):
            raise
        except errors.ClusterError as e:  # 400: the container has not started yet
            with in_viewer_language():
                problem = _("No logs yet: %(reason)s") % {"reason": e.message}
            return [_frame("log", ns, pod, container, snapshot=True, lines=[],
                           problem=problem)]
        lines = [list(split_line(raw)) for raw in text.splitlines()]
        return [_frame("log", ns, pod, container, snapshot=True, lines=lines, problem="")]

    def on_message(self, sub: Subscription, message: dict[str, Any],
                   view: ViewState) -> list[Frame]:
        mtype = message.get("type")
        if mtype not in ("hub.log", "hub.log_end"):
            return []
        ns, pod, container = _split(sub.value)
        if message.get("namespace") != ns or message.get("pod") != pod:
            return []  # another pod whose bounded group name collides
        if container and message.get("container") not in ("", container):
            return []
        if mtype == "hub.log_end":
            return [_frame("log_end", ns, pod, container, reason=message.get("reason", ""))]
        return [_frame("log", ns, pod, container, lines=message.get("lines") or [],
                       skipped=int(message.get("skipped") or 0),
                       reread=bool(message.get("reread")))]


def is_leased(sub: Subscription) -> bool:
    return sub.kind == PodLogs.name


def lease_messages(action: str, subscriber: str, subs: list[Subscription], owner: str = ""
                   ) -> list[tuple[str, dict[str, Any]]]:
    """(group, message) pairs a consumer sends to the hub for these subscriptions.

    `action`: "subscribe", "renew", "unsubscribe", or "unsubscribe_all" (subs unused).
    `owner`: whose socket it is (`odh.training.cluster.access.identity` of the person's token): the
    hub caps the pods one owner follows, over all their tabs."""
    if action == "unsubscribe_all":
        return [(CONTROL_GROUP, lease_message(UNSUBSCRIBE_ALL, subscriber))]
    mtype = {"subscribe": SUBSCRIBE, "renew": RENEW, "unsubscribe": UNSUBSCRIBE}[action]
    out = []
    for sub in subs:
        if is_leased(sub):
            ns, pod, container = _split(sub.value)
            out.append((CONTROL_GROUP, lease_message(mtype, subscriber, ns, pod, container,
                                                     owner)))
    return out
