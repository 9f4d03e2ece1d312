"""The administrators' view of Kueue's queues (the /cluster/queues/ page): per
ClusterQueue, each flavor's nominal, borrowed and used quota per resource with the cohort's
lending and borrowing limits, the admitted Workloads and the pending ones in Kueue's own
order, with how long each has waited and why.

    views = queue_views(client.list_cluster_queues(), client.list_workloads(),
                        {cq: client.pending_workloads(cluster_queue=cq) for cq in names})

What is read (with the administrator's token): the ClusterQueues, every Workload (one
list), and each ClusterQueue's pending list from Kueue's visibility API (its order is
Kueue's: priority, then arrival, and StrictFIFO's head first). Why a Workload waits is its
QuotaReserved=False condition's message, Kueue's own words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from odh.training.capacity.shares import QuotaShare
from odh.training.durations import parse_timestamp
from odh.training.kinds import KINDS
from odh.training.manifests.totals import ZERO, amount, number
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import GPU_RESOURCE, format_resources

Obj = dict[str, Any]
PENDING_SHOWN = 100  # per ClusterQueue; the rest are counted


@dataclass
class FlavorQuota(QuotaShare):
    flavor: str
    resource: str
    nominal: Decimal
    used: Decimal  # reserved by its admitted Workloads (flavorsReservation)
    borrowed: Decimal  # of that, beyond its nominal quota, from the cohort
    borrowing_limit: Decimal | None  # None: no limit
    lending_limit: Decimal | None  # None: lends all it does not use

    def _used_of(self) -> tuple[Decimal, Decimal]:
        return self.used, self.nominal

    @property
    def borrowed_text(self) -> str:
        return number(self.resource, self.borrowed)

    @property
    def borrowing_limit_text(self) -> str:
        """"4", "512Gi"; "" without a limit."""
        return "" if self.borrowing_limit is None else number(self.resource,
                                                              self.borrowing_limit)

    @property
    def lending_limit_text(self) -> str:
        return "" if self.lending_limit is None else number(self.resource, self.lending_limit)


@dataclass
class QueuedWorkload:
    namespace: str
    name: str  # the Workload's
    job_kind: str  # its owner's ("MPIJob"), "" without one
    job_name: str
    local_queue: str
    priority: int
    priority_class: str
    created: datetime | None
    position: int | None = None  # in the ClusterQueue, from 1 (pending ones)
    message: str = ""  # why it waits (Kueue's words); "" for admitted ones
    since: datetime | None = None  # admitted at (admitted ones)
    holds: dict[str, Decimal] = field(default_factory=dict)  # admitted ones

    @property
    def job_slug(self) -> str:
        """The job's kind as the dashboard's addresses name it ("mpijob"); "" if unknown."""
        return next((k.slug for k in KINDS.values() if k.kind == self.job_kind), "")

    @property
    def holds_text(self) -> str:
        """"8 CPU, 64Gi, 8 GPUs"."""
        return format_resources(self.holds.get("cpu"), self.holds.get("memory"),
                                self.holds.get(GPU_RESOURCE))


@dataclass
class QueueView:
    name: str
    cohort: str
    strategy: str  # BestEffortFIFO or StrictFIFO
    preemption: str  # withinClusterQueue policy ("Never" when unset)
    flavors: list[FlavorQuota]
    pending: list[QueuedWorkload]
    admitted: list[QueuedWorkload]
    pending_count: int  # Kueue's count (the status' pendingWorkloads)
    admitted_count: int
    pending_more: int = 0  # pending not listed (beyond PENDING_SHOWN)
    pending_unreadable: bool = False  # the visibility API refused or failed


def _limit(value: Any) -> Decimal | None:
    return None if value is None else amount(value)


def _flavors(cq: Obj) -> list[FlavorQuota]:
    reserved: dict[tuple[str, str], tuple[Decimal, Decimal]] = {}
    for flavor in as_list(get_path(cq, ["status", "flavorsReservation"])):
        fname = str(as_dict(flavor).get("name") or "")
        for r in as_list(as_dict(flavor).get("resources")):
            r = as_dict(r)
            reserved[(fname, str(r.get("name") or ""))] = (amount(r.get("total") or 0),
                                                          amount(r.get("borrowed") or 0))
    rows = []
    for group in as_list(get_path(cq, ["spec", "resourceGroups"])):
        for flavor in as_list(as_dict(group).get("flavors")):
            fname = str(as_dict(flavor).get("name") or "")
            for q in as_list(as_dict(flavor).get("resources")):
                q = as_dict(q)
                name = str(q.get("name") or "")
                used, borrowed = reserved.get((fname, name), (ZERO, ZERO))
                rows.append(FlavorQuota(fname, name, amount(q.get("nominalQuota") or 0),
                                        used, borrowed, _limit(q.get("borrowingLimit")),
                                        _limit(q.get("lendingLimit"))))
    return rows


def _condition(workload: Obj, type_: str) -> Obj:
    for c in as_list(get_path(workload, ["status", "conditions"])):
        if as_dict(c).get("type") == type_:
            return as_dict(c)
    return {}


def _queued(workload: Obj) -> QueuedWorkload:
    meta = as_dict(workload.get("metadata"))
    owner = as_dict((as_list(meta.get("ownerReferences")) or [{}])[0])
    spec = as_dict(workload.get("spec"))
    return QueuedWorkload(
        namespace=str(meta.get("namespace") or ""), name=str(meta.get("name") or ""),
        job_kind=str(owner.get("kind") or ""), job_name=str(owner.get("name") or ""),
        local_queue=str(spec.get("queueName") or ""), priority=int(spec.get("priority") or 0),
        priority_class=str(spec.get("priorityClassName") or ""),
        created=parse_timestamp(meta.get("creationTimestamp")))


def _admitted(workload: Obj) -> QueuedWorkload:
    row = _queued(workload)
    row.since = parse_timestamp(_condition(workload, "QuotaReserved").get("lastTransitionTime"))
    for ps in as_list(get_path(workload, ["status", "admission", "podSetAssignments"])):
        for name, value in as_dict(as_dict(ps).get("resourceUsage")).items():
            row.holds[name] = row.holds.get(name, ZERO) + amount(value)
    return row


def _is_true(workload: Obj, type_: str) -> bool:
    return _condition(workload, type_).get("status") == "True"


def queue_views(cluster_queues: list[Obj], workloads: list[Obj],
                pending: dict[str, list[Obj] | None]) -> list[QueueView]:
    """One view per ClusterQueue (by name). `pending[cq]`: the visibility API's pending
    list for it (None: it could not be read, and the view says so)."""
    by_key = {(str(get_path(w, ["metadata", "namespace"], "")),
               str(get_path(w, ["metadata", "name"], ""))): w for w in workloads}
    admitted: dict[str, list[QueuedWorkload]] = {}
    for w in workloads:
        if _is_true(w, "Finished"):
            continue
        cq = str(get_path(w, ["status", "admission", "clusterQueue"], "") or "")
        if cq and _is_true(w, "QuotaReserved"):
            admitted.setdefault(cq, []).append(_admitted(w))
    views = []
    for cq in sorted(cluster_queues, key=lambda c: str(get_path(c, ["metadata", "name"], ""))):
        name = str(get_path(cq, ["metadata", "name"], ""))
        status = as_dict(cq.get("status"))
        items = pending.get(name)
        rows = []
        for index, item in enumerate((items or [])[:PENDING_SHOWN]):
            meta = as_dict(item.get("metadata"))
            key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
            full = by_key.get(key)
            row = _queued(full if full is not None else item)
            row.position = int(item.get("positionInClusterQueue", index) or index) + 1
            row.local_queue = row.local_queue or str(item.get("localQueueName") or "")
            row.priority = int(item.get("priority", row.priority) or 0)
            if full is not None:
                row.message = str(_condition(full, "QuotaReserved").get("message") or "")
            rows.append(row)
        views.append(QueueView(
            name=name, cohort=str(get_path(cq, ["spec", "cohort"], "") or ""),
            strategy=str(get_path(cq, ["spec", "queueingStrategy"], "") or "BestEffortFIFO"),
            preemption=str(get_path(cq, ["spec", "preemption", "withinClusterQueue"], "")
                           or "Never"),
            flavors=_flavors(cq), pending=rows,
            admitted=sorted(admitted.get(name, []),
                            key=lambda r: (r.since is None, r.since or datetime.min)),
            pending_count=int(status.get("pendingWorkloads") or len(items or [])),
            admitted_count=int(status.get("admittedWorkloads") or
                               len(admitted.get(name, []))),
            pending_more=max(0, len(items or []) - PENDING_SHOWN),
            pending_unreadable=items is None))
    return views
