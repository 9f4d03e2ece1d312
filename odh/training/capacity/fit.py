"""The live resource check of the wizard: does the job fit the project and the cluster?

`check_fit` adds up what the job asks for (`Totals`), sets it against the project's
ResourceQuotas and LimitRanges and the nodes' allocatable sizes, says what does not fit
with numbers, and offers `Fix`es computed from those numbers. Every fix offered has been
checked again and makes the whole job fit the quotas, the LimitRanges and the nodes' sizes;
none goes below one Worker. Where the nodes' room now is known (`room`), a job that would
start only in part is told so; that room changes by the second, so no fix is computed from
it (the wizard offers the project's Kueue queue, which starts the whole job at once).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from odh.training.capacity.assess import (
    COUNT_QUOTA,
    FitReport,
    Fix,
    applied,
    assess,
    keep_processes_in_step,
    required_affinity,
)
from odh.training.capacity.fixes import candidates
from odh.training.capacity.nodes import NodeSize, node_sizes, room_problem
from odh.training.capacity.quota import (
    QuotaLine,
)
from odh.training.i18n import _
from odh.training.manifests.totals import Totals, totals_for
from odh.training.paths import as_dict
from odh.training.spec import JobSpec

__all__ = ["COUNT_QUOTA", "FitReport", "Fix", "QuotaLine", "Totals", "check_fit",
           "keep_processes_in_step", "totals_for"]


def check_fit(spec: JobSpec, quotas: list[dict], limit_ranges: list[dict],
              nodes: list[dict], namespace: str,
              room: list[NodeSize] | None = None) -> FitReport:
    """The verdict on one spec in one project; `nodes` may be [] when they cannot be read.
    `room`, each node's room now (`allocation.room_now`) where the pods of the whole
    cluster may be read: the whole job (each Worker, then the Launcher) is placed on it,
    since without gang admission a job that half-fits starts half."""
    sizes = node_sizes(nodes)
    report, violations = assess(spec, quotas, limit_ranges, sizes, namespace)
    report.room_checked = room is not None and bool(sizes)
    if report.fits:
        if room and report.totals.workers:
            _place_now(spec, report, room)
        return report
    report.never_fits = bool(report.node_problem or violations or any(
        line.hard >= 0 and line.requested > line.hard for line in report.lines))

    # A job that can never start is offered the changes that let it start (within the
    # quotas' hard limits, the nodes and the LimitRange), the job's total kept where it
    # can be; one that only has to wait, the changes that start it now.
    def fits(changes: dict[str, Any]) -> bool:
        return assess(applied(spec, changes), quotas, limit_ranges, sizes, namespace,
                       ever=report.never_fits)[0].fits

    offered: list[Fix] = []
    for alternatives in candidates(spec, report, violations, sizes):
        for fix in alternatives:
            if fix.changes in [f.changes for f in offered]:
                break
            if fits(fix.changes):
                offered.append(fix)
                break
    report.fixes = offered
    if report.node_problem:
        report.waiting_note = _("You can still create the job, but it will stay Pending until "
                                "a node large enough for it joins the cluster.")
    elif violations:
        report.waiting_note = _("You can still create the job, but the project's LimitRange "
                                "will refuse its pods until the amounts are within its bounds.")
    elif report.count_quota_full:
        # the API server refuses the MPIJob itself: nothing would wait
        report.waiting_note = _("The cluster refuses to create it while the quota is full: "
                                "delete finished jobs you no longer need first.")
    elif report.never_fits:
        report.waiting_note = _("You can still create the job, but the quota will refuse its "
                                "pods for as long as it asks for more than the quota holds in "
                                "all.")
    else:
        report.waiting_note = _waiting_note(spec, report, _(
            "You can still create the job: it will wait, Pending, until the quota has room "
            "(when other jobs finish or the quota is raised)."))
    return report


def _place_now(spec: JobSpec, report: FitReport, room: list[NodeSize]) -> None:
    totals = report.totals
    text = room_problem(room, as_dict(spec.node_selector), totals.workers,
                        totals.cpu_per_worker, totals.memory_per_worker,
                        Decimal(totals.gpus_per_worker), totals.launcher_cpu,
                        totals.launcher_memory, required_affinity(spec))
    if not text:
        return
    report.fits = False
    report.problems.append(text)
    report.waiting_note = _waiting_note(spec, report, _(
        "You can still create the job: it will wait, Pending, until other jobs finish and "
        "make room."))


def _waiting_note(spec: JobSpec, report: FitReport, otherwise: str) -> str:
    """What happens to a job created while there is no room for it."""
    if spec.queue_name:
        return _("You can still create the job: Kueue holds it in %(queue)s and starts the "
                 "whole job at once when there is room.") % {"queue": spec.queue_name}
    if report.totals.workers > 1 and report.totals.gpus_per_worker:
        # no gang admission: a Worker that fits starts, and holds its GPUs idle
        return _("You can still create the job, but it will wait, Pending, and its Workers "
                 "start one by one as other jobs make room: those started hold their GPUs, "
                 "idle, while the rest wait.")
    return otherwise


