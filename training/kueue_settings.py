"""Kueue's cluster-wide settings, read with the dashboard's service account and shared for
KUEUE_TTL seconds: the ClusterQueues, their pending lists and the WorkloadPriorityClasses.

Kueue's user role lets people read their LocalQueues and Workloads, not the ClusterQueues
behind them; yet what a queue holds and has free is what tells a person whether and when
their job starts. Like the nodes (training/wizard/checks.py), these are settings of the
cluster, not of anyone's project: the wizard's queue check and a queued job's standing
read them here when the person may not. Of other projects' waiting jobs only their number
and priorities are used, never shown.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache import cache

from odh.training import errors
from odh.training.capacity.preflight import workload_priority_values
from training.cluster import client_for_token, cluster_config

log = logging.getLogger("training.kueue")

KUEUE_TTL = 10


def _service_account_read(key: str, read) -> Any:
    """`read(client)` with the dashboard's service account, shared KUEUE_TTL seconds; None
    when it cannot be read (logged)."""
    found = cache.get(key, default=False)
    if found is not False:
        return found
    try:
        with client_for_token(cluster_config().service_account_token) as sa:
            found = read(sa)
    except errors.ClusterError as e:
        log.warning("Kueue's %s cannot be read with the service account: %s", key, e.message)
        found = None
    cache.set(key, found, KUEUE_TTL)
    return found


def workload_priorities() -> dict[str, int] | None:
    return workload_priority_values(_service_account_read(
        "kueue:priorities", lambda sa: sa.list_workload_priority_classes()))


def cluster_queues() -> list[dict] | None:
    """Every ClusterQueue; None without Kueue or when they cannot be read."""
    return _service_account_read("kueue:clusterqueues", lambda sa: sa.list_cluster_queues())


def cluster_queue(name: str) -> dict | None:
    return next((q for q in cluster_queues() or []
                 if (q.get("metadata") or {}).get("name") == name), None)


def forget(cluster_queue: str) -> None:
    """An administrator changed a ClusterQueue or the priority of one of its Workloads
    here: read them again at the next question, so the wizard's check counts the change at
    once (in this process; other replicas with a cache of their own within KUEUE_TTL)."""
    cache.delete_many(["kueue:clusterqueues", f"kueue:pending:{cluster_queue}"])


def pending_in(name: str) -> list[dict] | None:
    """A ClusterQueue's pending Workloads in Kueue's order (None: not readable)."""
    return _service_account_read(f"kueue:pending:{name}",
                                 lambda sa: sa.pending_workloads(cluster_queue=name))
