"""What Kueue will do with a job not yet created (the wizard's check, where a project's
jobs go through Kueue): admit it at once, or queue it at a position, with an expected
start.

    forecast = queue_forecast(needs, priority, "gpu-queue", local_queue, cluster_queues,
                              pending)
    forecast.sentence()
    # "Kueue should admit it at once: the ClusterQueue gpu-a100 has room (needs 8 GPUs,
    #  16 free now)"

It follows Kueue's admission (simcluster/README.md, "Kueue"): the job fits when, for every
resource its ClusterQueue covers, what it needs is at most the queue's unused nominal
quota plus what it may borrow from its cohort (the other queues' unused quota, within
their lending limits and its own borrowing limit). Waiting jobs of the same or a higher
priority are ahead of it (a new job arrives last among equals); under StrictFIFO any job
ahead blocks it, under BestEffortFIFO the jobs ahead are waiting because they do not fit,
so a job that fits is admitted past them. The expected start of a queued job comes from
`odh/training/queues/start.py` (given by the caller, read with the person's token).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from odh.training.i18n import _
from odh.training.manifests.totals import ZERO, amount, number
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import GPU_RESOURCE, format_resources
from odh.training.queues.standing import QUEUED, ExpectedStart, QueueStanding, free_quota

Obj = dict[str, Any]
Estimator = Callable[[QueueStanding, Obj, list[Obj]], ExpectedStart]


@dataclass
class QueueForecast:
    queue: str
    cluster_queue: str = ""
    at_once: bool | None = None  # None: cannot be told (see `unknown`)
    standing: QueueStanding | None = None  # where it would stand, when queued
    needs: dict[str, Decimal] = field(default_factory=dict)
    room: dict[str, Decimal] = field(default_factory=dict)  # free + what it may borrow
    unknown: str = ""

    def sentence(self) -> str:
        if self.unknown:
            return _("Kueue: %(why)s") % {"why": self.unknown}
        if self.at_once:
            return _("Kueue should admit it at once: the ClusterQueue %(cq)s has room "
                     "(needs %(needs)s, %(room)s free now)") % {
                "cq": self.cluster_queue, "needs": _resources(self.needs),
                "room": _room(self.needs, self.room)}
        assert self.standing is not None
        return self.standing.sentence()

    def expected_text(self) -> str:
        return self.standing.expected_text() if self.standing is not None else ""


def _resources(amounts: dict[str, Decimal]) -> str:
    if amounts.get(GPU_RESOURCE):
        return format_resources(None, None, amounts[GPU_RESOURCE])
    return format_resources(amounts.get("cpu"), amounts.get("memory"), None)


def _room(needs: dict[str, Decimal], room: dict[str, Decimal]) -> str:
    if needs.get(GPU_RESOURCE):
        return number(GPU_RESOURCE, room.get(GPU_RESOURCE, ZERO))
    return format_resources(room.get("cpu", ZERO), room.get("memory", ZERO), None)


def _quotas(cq: Obj) -> dict[str, tuple[Decimal, Decimal | None, Decimal | None]]:
    """resource -> (nominal, borrowing limit, lending limit), over the flavors."""
    found: dict[str, tuple[Decimal, Decimal | None, Decimal | None]] = {}
    for group in as_list(get_path(cq, ["spec", "resourceGroups"])):
        for flavor in as_list(as_dict(group).get("flavors")):
            for q in as_list(as_dict(flavor).get("resources")):
                q = as_dict(q)
                name = str(q.get("name") or "")
                nominal, borrow, lend = found.get(name, (ZERO, None, None))
                nominal += amount(q.get("nominalQuota") or 0)
                if q.get("borrowingLimit") is not None:
                    borrow = (borrow or ZERO) + amount(q["borrowingLimit"])
                if q.get("lendingLimit") is not None:
                    lend = (lend or ZERO) + amount(q["lendingLimit"])
                found[name] = (nominal, borrow, lend)
    return found


def borrowable(cq: Obj, cluster_queues: list[Obj]) -> dict[str, Decimal]:
    """What `cq` may borrow now from the other ClusterQueues of its cohort, per resource:
    their unused nominal quota within their lending limits, within its borrowing limit."""
    cohort = str(get_path(cq, ["spec", "cohort"], "") or "")
    if not cohort:
        return {}
    name = get_path(cq, ["metadata", "name"])
    lent: dict[str, Decimal] = {}
    for other in cluster_queues:
        if get_path(other, ["spec", "cohort"]) != cohort or \
                get_path(other, ["metadata", "name"]) == name:
            continue
        free = free_quota(other)
        for resource, (_nominal, _borrow, lend) in _quotas(other).items():
            offer = free.get(resource, ZERO)
            if lend is not None:
                offer = min(offer, lend)
            lent[resource] = lent.get(resource, ZERO) + max(ZERO, offer)
    limits = _quotas(cq)
    return {r: min(v, limits[r][1]) if r in limits and limits[r][1] is not None else v
            for r, v in lent.items()}


def queue_forecast(needs: dict[str, Decimal], priority: int, queue: str,
                   local_queue: Obj | None, cluster_queues: list[Obj],
                   pending: list[Obj] | None,
                   estimate: Estimator | None = None) -> QueueForecast:
    """`pending`: the ClusterQueue's pending Workloads in Kueue's order (the visibility
    API's; None: not readable). `estimate(standing, cluster_queue, ahead)`: the expected
    start of a queued job (None: not estimated)."""
    forecast = QueueForecast(queue, needs=needs)
    if local_queue is None:
        forecast.unknown = _("the queue %(queue)s does not exist in this project") % {
            "queue": queue}
        return forecast
    forecast.cluster_queue = str(get_path(local_queue, ["spec", "clusterQueue"], "") or "")
    cq = next((c for c in cluster_queues
               if get_path(c, ["metadata", "name"]) == forecast.cluster_queue), None)
    if cq is None:
        forecast.unknown = _("the queue %(queue)s points at the ClusterQueue %(cq)s, which "
                             "does not exist: Kueue would hold the job until it does") % {
            "queue": queue, "cq": forecast.cluster_queue}
        return forecast
    free = free_quota(cq)
    lendable = borrowable(cq, cluster_queues)
    covered = _quotas(cq)
    forecast.room = {r: free.get(r, ZERO) + lendable.get(r, ZERO) for r in covered}
    fits = all(needs.get(r, ZERO) <= forecast.room[r] for r in covered)
    items = pending or []
    ahead = [i for i in items if int(i.get("priority") or 0) >= priority]
    strict = get_path(cq, ["spec", "queueingStrategy"]) == "StrictFIFO"
    if pending is None and not fits:
        forecast.unknown = _("the job does not fit the ClusterQueue %(cq)s's free quota now, "
                             "and its queue could not be read") % {"cq": forecast.cluster_queue}
        return forecast
    forecast.at_once = fits and not (strict and ahead)
    if forecast.at_once:
        return forecast
    standing = QueueStanding(queue, QUEUED, cluster_queue=forecast.cluster_queue,
                             position=len(ahead) + 1, of=len(items) + 1, priority=priority,
                             needs=needs, free=free)
    if estimate is not None:
        standing.expected = estimate(standing, cq, ahead)
    forecast.standing = standing
    return forecast
