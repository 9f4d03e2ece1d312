"""Per project: jobs running, pending and suspended, GPUs in use and each ResourceQuota's
use (hard/used/ratio, `count/mpijobs.kubeflow.org` included), most pressed first; a row is
flagged when any quota is at 90% or more."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from odh.training.capacity.allocation import Holdings, holdings_of, namespace_of, pod_requests
from odh.training.capacity.quota import compute_name
from odh.training.capacity.shares import QuotaShare, percent
from odh.training.i18n import _
from odh.training.manifests.totals import ZERO, amount, number
from odh.training.paths import as_dict, get_path
from odh.training.quantity import GPU_RESOURCE
from odh.training.status.summary import JobStatus, JobSummary

Obj = dict[str, Any]

MPIJOB_COUNT = "count/mpijobs.kubeflow.org"
PRESSURE_FLAG = Decimal("0.9")  # a project at 90% of any quota is flagged
# quota resources in the order the per-project table shows them
_QUOTA_ORDER = {GPU_RESOURCE: 0, "cpu": 1, "memory": 2, "pods": 3, "count/pods": 3,
                MPIJOB_COUNT: 4}


@dataclass
class QuotaUse(QuotaShare):
    """One resource of one ResourceQuota: hard against used."""

    quota: str
    resource: str  # the quota's key: "requests.nvidia.com/gpu", "pods", ...
    hard: Decimal
    used: Decimal

    def _used_of(self) -> tuple[Decimal, Decimal]:
        return self.used, self.hard

    @property
    def flagged(self) -> bool:
        return self.ratio >= PRESSURE_FLAG

    @property
    def text(self) -> str:
        """"GPUs: 10/16 (63%)"."""
        return _("%(resource)s: %(numbers)s (%(percent)d%%)") % {
            "resource": self.title, "numbers": self.numbers, "percent": self.percent}


def _table_order(use: QuotaUse) -> tuple:
    """GPUs, CPU, memory, pods, MPIJobs, then the rest; requests before limits."""
    return (_QUOTA_ORDER.get(compute_name(use.resource), 9), use.resource.startswith("limits."),
            use.resource, use.quota)


def quota_uses(quota: Obj) -> list[QuotaUse]:
    """Each resource a ResourceQuota limits, with what is used of it (status.used)."""
    name = str(get_path(quota, ["metadata", "name"], "") or "")
    used = as_dict(get_path(quota, ["status", "used"]))
    uses = []
    for key, hard in as_dict(get_path(quota, ["spec", "hard"])).items():
        uses.append(QuotaUse(quota=name, resource=str(key), hard=amount(hard),
                             used=amount(used.get(key, "0"))))
    return sorted(uses, key=_table_order)


@dataclass
class ProjectRow:
    namespace: str
    running: int = 0
    pending: int = 0
    suspended: int = 0
    gpus_in_use: Decimal = ZERO
    quotas: list[QuotaUse] = field(default_factory=list)

    @property
    def gpus_in_use_number(self) -> str:
        return number(GPU_RESOURCE, self.gpus_in_use)

    @property
    def pressure(self) -> Decimal:
        """The largest share of any quota in use (0 without quotas)."""
        return max((q.ratio for q in self.quotas), default=ZERO)

    @property
    def pressure_percent(self) -> int:
        return percent(self.pressure)

    @property
    def flagged(self) -> bool:
        return any(q.flagged for q in self.quotas)

    @property
    def pressed(self) -> list[QuotaUse]:
        return [q for q in self.quotas if q.flagged]

    def quota_for(self, resource: str) -> QuotaUse | None:
        """The quota line of a resource ("nvidia.com/gpu" matches requests.nvidia.com/gpu),
        the most used one when several quotas limit it."""
        lines = [q for q in self.quotas if q.resource == resource or (
            compute_name(q.resource) == resource and not q.resource.startswith("limits."))]
        return max(lines, key=lambda q: q.ratio, default=None)

    @property
    def quota_names(self) -> list[str]:
        """The names of the project's ResourceQuotas, each once."""
        return sorted({q.quota for q in self.quotas})

    @property
    def gpu_quota(self) -> QuotaUse | None:
        return self.quota_for(GPU_RESOURCE)

    @property
    def mpijobs(self) -> QuotaUse | None:
        return self.quota_for(MPIJOB_COUNT)


def project_rows(quotas: list[Obj], pods: list[Obj] | Holdings,
                 summaries: Iterable[JobSummary]) -> list[ProjectRow]:
    """One row per project that has a quota or a training job, most pressed first."""
    rows: dict[str, ProjectRow] = {}

    def row(namespace: str) -> ProjectRow:
        found = rows.get(namespace)
        return found if found is not None else rows.setdefault(namespace, ProjectRow(namespace))

    for quota in quotas:
        row(namespace_of(quota)).quotas.extend(quota_uses(quota))
    for summary in summaries:
        r = row(summary.namespace)
        if summary.status == JobStatus.RUNNING:
            r.running += 1
        elif summary.status == JobStatus.PENDING:
            r.pending += 1
        elif summary.status == JobStatus.SUSPENDED:
            r.suspended += 1
    for namespace, gpus in holdings_of(pods).by_namespace(GPU_RESOURCE).items():
        if namespace in rows:
            rows[namespace].gpus_in_use += gpus
    for r in rows.values():
        r.quotas.sort(key=_table_order)
    return sorted(rows.values(), key=lambda r: (-r.pressure, r.namespace))


# -- one project's page (/projects/<project>/) ------------------------------------------------
@dataclass
class QuotaPart(QuotaUse):
    """A quota line with the share of it that pods not yet running hold (Pending pods
    count against a quota from their creation); None: not counted for this resource
    (limits, object counts)."""

    pending: Decimal | None = None

    @property
    def pending_number(self) -> str:
        return number(compute_name(self.resource), self.pending or ZERO)

    @property
    def pending_percent(self) -> int:
        return percent(self.pending / self.hard) if self.hard and self.pending else 0


def _pending_of(key: str, pending_pods: list[Obj]) -> Decimal | None:
    if key in ("pods", "count/pods"):
        return Decimal(len(pending_pods))
    name = compute_name(key)
    if key.startswith("limits.") or name not in ("cpu", "memory", GPU_RESOURCE):
        return None
    return sum((pod_requests(p).get(name, ZERO) for p in pending_pods), ZERO)


def quota_parts(quotas: list[Obj], pods: list[Obj]) -> list[QuotaPart]:
    """Each line of the project's ResourceQuotas: hard against used, and what Pending pods
    (created, not running yet) hold of it."""
    pending = [p for p in pods if get_path(p, ["status", "phase"]) == "Pending"]
    parts = []
    for quota in quotas:
        for use in quota_uses(quota):
            parts.append(QuotaPart(quota=use.quota, resource=use.resource, hard=use.hard,
                                   used=use.used, pending=_pending_of(use.resource, pending)))
    return parts


def jobs_by_status(summaries: Iterable[JobSummary]) -> list[tuple[str, int]]:
    """How many jobs are in each status, every status named (0 too)."""
    counts = {str(s): 0 for s in JobStatus}
    for summary in summaries:
        counts[str(summary.status)] = counts.get(str(summary.status), 0) + 1
    return list(counts.items())
