"""The `cluster` subscription of the live websocket: the admin overview's numbers move.

| kind      | value      | group (channel layer) | access asked                             |
|-----------|------------|-----------------------|------------------------------------------|
| `cluster` | `overview` | `cluster`             | list resourcequotas in every namespace   |

The watch hub sends `{"type": "hub.update", "cluster": true}` to the `cluster` group when
quotas, training jobs or their pods changed (at most every few seconds: see
`Hub.CLUSTER_NOTICE_SECONDS`). The hub holds the dashboard's service-account view of the
cluster, not the administrator's, so it sends no numbers: the socket tells the page
`{"type": "cluster-changed"}` and the page fetches its `#cluster-numbers` part again over
HTTP, read with the person's own token (static/js/cluster.js). On every (re)connect the
page gets `{"type": "cluster-snapshot"}`: after a reconnect it fetches again, since it may
have missed changes while away.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _

from odh.training.cluster.client import ClusterClient
from training.live.hub.groups import CLUSTER_GROUP
from training.live.hub.languages import in_viewer_language
from training.live.subscription_kinds import (
    SOCKET_PATH,
    BadSubscription,
    Frame,
    Subscription,
    SubscriptionKind,
    ViewState,
)
from training.permissions import LIST_QUOTAS_EVERYWHERE

VALUE = "overview"


class ClusterOverview(SubscriptionKind):
    name = "cluster"

    def parse(self, value: str) -> Subscription:
        if value != VALUE:
            with in_viewer_language():
                raise BadSubscription(_("“%(value)s” is not a part of the cluster pages.")
                                      % {"value": value[:40]})
        # namespace "": the access review is asked at cluster scope
        return Subscription(self.name, value, "", CLUSTER_GROUP, LIST_QUOTAS_EVERYWHERE)

    def snapshot(self, client: ClusterClient, sub: Subscription, view: ViewState,
                 now: datetime) -> list[Frame]:
        return [{"type": "cluster-snapshot"}]

    def on_message(self, sub: Subscription, message: dict[str, Any],
                   view: ViewState) -> list[Frame]:
        if message.get("type") == "hub.update" and message.get("cluster"):
            return [{"type": "cluster-changed"}]
        return []

SOCKET_URL = f"{SOCKET_PATH}?cluster={VALUE}"
