"""Kueue ClusterQueues: each flavor's nominal quota per resource against its usage."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from odh.training.capacity.shares import QuotaShare
from odh.training.manifests.totals import ZERO, amount
from odh.training.paths import as_dict, as_list, get_path

Obj = dict[str, Any]


@dataclass
class QueueResource(QuotaShare):
    flavor: str
    resource: str
    nominal: Decimal
    used: Decimal

    def _used_of(self) -> tuple[Decimal, Decimal]:
        return self.used, self.nominal


@dataclass
class ClusterQueueRow:
    name: str
    cohort: str
    pending: int
    admitted: int
    resources: list[QueueResource]


def cluster_queues(items: list[Obj]) -> list[ClusterQueueRow]:
    """Kueue ClusterQueues: each flavor's nominal quota per resource, and its usage."""
    rows = []
    for item in items:
        usage: dict[tuple[str, str], Decimal] = {}
        for flavor in as_list(get_path(item, ["status", "flavorsUsage"])):
            for res in as_list(as_dict(flavor).get("resources")):
                res = as_dict(res)
                usage[(str(as_dict(flavor).get("name", "")), str(res.get("name", "")))] = \
                    amount(str(res.get("total", "0")))
        resources = []
        for group in as_list(get_path(item, ["spec", "resourceGroups"])):
            for flavor in as_list(as_dict(group).get("flavors")):
                flavor_name = str(as_dict(flavor).get("name", ""))
                for res in as_list(as_dict(flavor).get("resources")):
                    res = as_dict(res)
                    name = str(res.get("name", ""))
                    resources.append(QueueResource(
                        flavor_name, name, amount(str(res.get("nominalQuota", "0"))),
                        usage.get((flavor_name, name), ZERO)))
        status = as_dict(item.get("status"))
        rows.append(ClusterQueueRow(
            name=str(get_path(item, ["metadata", "name"], "")),
            cohort=str(get_path(item, ["spec", "cohort"], "") or ""),
            pending=int(status.get("pendingWorkloads") or 0),
            admitted=int(status.get("admittedWorkloads") or 0),
            resources=resources))
    return sorted(rows, key=lambda r: r.name)
