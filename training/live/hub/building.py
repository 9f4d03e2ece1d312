"""The watch hub of this process, built from its settings and channel layer."""


from __future__ import annotations

import asyncio
import functools
import sys

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from training.live.hub.hub import Hub
from training.live.hub.keepers.curves import CurveKeeper
from training.live.hub.keepers.evidence import EvidenceKeeper
from training.live.hub.keepers.notifying import NotificationSender
from training.live.hub.keepers.project_uids import ProjectUids
from training.live.hub.keepers.retries import RetryStarter
from training.live.hub.keepers.signs import SignWatcher, prometheus_with_service_account
from training.live.hub.keepers.transitions import TransitionRecorder
from training.live.hub.keepers.usage import UsageRecorder
from training.live.hub.pushing import Publisher
from training.live.hub.sessions import SessionSweeper


def build_hub(loop: asyncio.AbstractEventLoop | None = None, *,
              record_history: bool = True) -> Hub:
    """The hub for this process's settings and channel layer. The process that hosts it
    gives its threads shorter turns at the GIL (`LIVE_SWITCH_INTERVAL_MS`): with Python's
    5 ms turns a status waited several of them behind the rendering of what follows it."""
    from channels.layers import get_channel_layer

    sys.setswitchinterval(min(sys.getswitchinterval(), settings.LIVE_SWITCH_INTERVAL_MS / 1000))

    from training import cluster
    layer = get_channel_layer()
    if layer is None:
        raise ImproperlyConfigured("the watch hub needs a channel layer (CHANNEL_LAYERS)")
    # the dashboard's own service-account token (list/watch only), the current one at every
    # request as the kubelet rotates it; after a 401, the token file read again regardless
    publisher = Publisher(layer, loop)
    return Hub(cluster.service_account_client, publisher,
               lead=settings.LIVE_PUSH_LEAD_MS / 1000,
               refresh_client_factory=functools.partial(cluster.service_account_client,
                                                        refresh=True),
               transitions=TransitionRecorder(
                   project_uid=ProjectUids(cluster.service_account_client))
               if record_history else None,
               sessions=SessionSweeper() if record_history else None,
               evidence=EvidenceKeeper(cluster.service_account_client)
               if record_history else None,
               usage=UsageRecorder() if record_history else None,
               notifications=NotificationSender(publish=publisher.send)
               if record_history else None,
               signs=SignWatcher(prometheus=prometheus_with_service_account,
                                 every=settings.NOTIFY_SIGNS_SECONDS,
                                 hang_after=lambda: float(settings.DIAGNOSIS_HANG_SECONDS))
               if record_history else None,
               curves=CurveKeeper(cluster.service_account_client,
                                  every=float(settings.TRAINING_CURVES_SECONDS)),
               # creates with the watcher's own account: training/live/hub/keepers/retries.py
               retries=RetryStarter(cluster.service_account_client)
               if record_history else None)
