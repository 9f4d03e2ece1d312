"""The `queue` subscription of the live websocket: where jobs stand in Kueue's queues moved.

| kind    | value       | group (channel layer) | access asked                              |
|---------|-------------|-----------------------|-------------------------------------------|
| `queue` | `<project>` | `queues`              | get localqueues (Kueue) in the project    |
| `queue` | `*`         | `queues`              | list resourcequotas in every namespace    |

The watch hub watches Kueue's Workloads (where the cluster serves Kueue) and sends
`{"type": "hub.update", "queue": true}` to the `queues` group when one changed (at most
every `QUEUE_NOTICE_SECONDS`: training/live/hub/cluster.py). It says nothing of what changed,
whose job or where: the socket tells the page `{"type": "queue-changed"}` and the page
fetches its queue parts again over HTTP, read with the person's own token (a job's Queue
card: `hx-trigger` on that message; the administrators' /cluster/queues/ the same). A job
page follows its project (`queue=<project>`), the queue page every queue (`queue=*`, for
the people who may see the cluster pages). On every (re)connect the page gets
`{"type": "queue-snapshot"}`, and fetches again after a reconnect.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _

from odh.training.cluster.access import Access
from odh.training.cluster.api import is_namespace_name
from odh.training.cluster.client import ClusterClient
from odh.training.kinds import KINDS as JOB_KINDS
from training.live.hub.groups import QUEUES_GROUP
from training.live.hub.languages import in_viewer_language
from training.live.subscription_kinds import (
    AccessRefused,
    BadSubscription,
    Frame,
    Subscription,
    SubscriptionKind,
    ViewState,
)
from training.permissions import LIST_QUOTAS_EVERYWHERE, may

EVERY_QUEUE = "*"
READ_LOCAL_QUEUES = Access("get", "localqueues", "kueue.x-k8s.io")


class QueueChanges(SubscriptionKind):
    name = "queue"

    def parse(self, value: str) -> Subscription:
        if value == EVERY_QUEUE:  # namespace "": asked at cluster scope
            return Subscription(self.name, value, "", QUEUES_GROUP, LIST_QUOTAS_EVERYWHERE)
        if not is_namespace_name(value):
            with in_viewer_language():
                raise BadSubscription(_("“%(value)s” is not a project name.")
                                      % {"value": value[:40]})
        return Subscription(self.name, value, value, QUEUES_GROUP, READ_LOCAL_QUEUES)

    def authorize(self, client: ClusterClient, token: str, sub: Subscription,
                  view: ViewState) -> None:
        """A project's: anyone who may read its queues or one of its job kinds (the notice
        says nothing; refusing it would close the job page's socket for a person who may
        see the job but not Kueue's objects)."""
        if sub.value == EVERY_QUEUE:
            super().authorize(client, token, sub, view)
            return
        questions = [READ_LOCAL_QUEUES, *(Access("get", k.plural, k.group)
                                          for k in JOB_KINDS.values())]
        if not any(may(client, token, sub.namespace, q) for q in questions):
            raise AccessRefused(sub.namespace)

    def snapshot(self, client: ClusterClient, sub: Subscription, view: ViewState,
                 now: datetime) -> list[Frame]:
        return [{"type": "queue-snapshot"}]

    def on_message(self, sub: Subscription, message: dict[str, Any],
                   view: ViewState) -> list[Frame]:
        if message.get("type") == "hub.update" and message.get("queue"):
            return [{"type": "queue-changed"}]
        return []
