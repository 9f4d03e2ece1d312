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

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

from odh.training.capacity.nodes import NodeSize, node_problem, node_sizes, room_problem, selected
from odh.training.capacity.quota import (
    QuotaLine,
    compute_name,
    line_problem,
    quota_lines,
    unset_compute,
)
from odh.training.checks.limits import FIELDS, LimitViolation, limit_violations
from odh.training.checks.names import MAX_WORKERS
from odh.training.checks.rules_job import command_processes, with_processes
from odh.training.checks.rules_pod import limit_message
from odh.training.i18n import _, ngettext
from odh.training.manifests.totals import Totals, cpus, gpus, totals_for, workers_text
from odh.training.paths import as_dict
from odh.training.quantity import display_memory, format_cpu, format_memory
from odh.training.spec import JobSpec

__all__ = ["FitReport", "Fix", "QuotaLine", "Totals", "check_fit", "keep_processes_in_step",
           "totals_for"]

GI = Decimal(2**30)
COUNT_QUOTA = "count/mpijobs.kubeflow.org"  # counts the MPIJob objects, finished ones too
MI = Decimal(2**20)
_MAX_TRIES = 64


@dataclass
class Fix:
    """A change that makes the job fit: JobSpec field -> new value."""

    label: str
    changes: dict[str, Any]

    def apply(self, spec: JobSpec) -> JobSpec:
        return dataclasses.replace(spec, **self.changes)


@dataclass
class FitReport:
    fits: bool
    totals: Totals
    lines: list[QuotaLine]
    problems: list[str]
    fixes: list[Fix]
    node_problem: str = ""
    # When it does not fit: that creating it anyway is allowed, and what then happens.
    waiting_note: str = ""
    # It can never start as it is: no node is large enough, the LimitRange refuses its
    # pods, or it asks for more than a quota holds even when nothing else runs.
    never_fits: bool = False
    # The nodes' room now was known, and the whole job placed on it (else "fits" is the
    # quotas' and the nodes' sizes only)
    room_checked: bool = False

    @property
    def count_quota_full(self) -> bool:
        """The quota on the number of MPIJobs is full: the cluster refuses the job itself,
        and the project's finished jobs are what fill it."""
        return any(line.resource == COUNT_QUOTA and not line.fits for line in self.lines)


def _affinity(spec: JobSpec) -> list:
    """The spec's required node affinity (a kind without one: none)."""
    found = getattr(spec, "node_affinity", None)
    return list(found) if isinstance(found, list) else []


def _worker_ready(spec: JobSpec) -> bool:
    return isinstance(spec.workers, int) and isinstance(spec.gpus_per_worker, int) \
        and not isinstance(spec.workers, bool) and spec.workers >= 1


def _assess(spec: JobSpec, quotas: list[dict], limit_ranges: list[dict],
            sizes: list[NodeSize], namespace: str,
            ever: bool = False) -> tuple[FitReport, list[LimitViolation]]:
    """The verdict; `ever`: whether the job could start at all (within the quotas' hard
    limits, on an empty node), not whether it fits now."""
    totals = totals_for(spec)
    lines = quota_lines(spec, totals, quotas)
    if ever:
        for line in lines:
            line.fits = line.hard < 0 or line.requested <= line.hard
    problems: list[str] = []
    for line in lines:
        if not line.fits:
            text = line_problem(line, namespace, len(quotas))
            if text not in problems:
                problems.append(text)
    problems += unset_compute(spec, quotas, limit_ranges, namespace)
    violations = limit_violations(spec, limit_ranges) if _worker_ready(spec) else []
    problems += [limit_message(v, spec.kind.counts_nodes) for v in violations]
    selector, affinity = as_dict(spec.node_selector), _affinity(spec)
    node_texts = [text for text in (
        node_problem(sizes, selector, "Worker", totals.cpu_per_worker,
                     totals.memory_per_worker, Decimal(totals.gpus_per_worker), affinity)
        if totals.workers else "",
        node_problem(sizes, selector, "Launcher", totals.launcher_cpu, totals.launcher_memory,
                     Decimal(0), affinity)) if text]
    node_text = " ".join(dict.fromkeys(node_texts))
    report = FitReport(fits=not problems and not node_text, totals=totals, lines=lines,
                       problems=problems, fixes=[], node_problem=node_text)
    return report, violations


def check_fit(spec: JobSpec, quotas: list[dict], limit_ranges: list[dict],
              nodes: list[dict], namespace: str,
              room: list[NodeSize] | None = None) -> FitReport:
    """The verdict on one spec in one project; `nodes` may be [] when they cannot be read.
    `room`, each node's room now (`allocation.room_now`) where the pods of the whole
    cluster may be read: the whole job (each Worker, then the Launcher) is placed on it,
    since without gang admission a job that half-fits starts half."""
    sizes = node_sizes(nodes)
    report, violations = _assess(spec, quotas, limit_ranges, sizes, namespace)
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
        return _assess(_applied(spec, changes), quotas, limit_ranges, sizes, namespace,
                       ever=report.never_fits)[0].fits

    offered: list[Fix] = []
    for alternatives in _candidates(spec, report, violations, sizes):
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
                        totals.launcher_memory, _affinity(spec))
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


def _applied(spec: JobSpec, changes: dict[str, Any]) -> JobSpec:
    return dataclasses.replace(spec, **changes)


def keep_processes_in_step(spec: JobSpec, changes: dict[str, Any]) -> dict[str, Any]:
    """`changes` plus the command with its `-np N` in step, when the changes alter workers
    or slots and N matched them before (a fix that changes the Workers keeps mpirun's rank
    count right)."""
    if not isinstance(spec.command, list) or not _worker_ready(spec):
        return changes
    asked = command_processes([str(w) for w in spec.command])
    before = spec.workers * spec.effective_slots
    after_spec = _applied(spec, changes)
    after = after_spec.workers * after_spec.effective_slots
    if asked is not None and asked[1] == before and after != before:
        return dict(changes, command=with_processes([str(w) for w in spec.command], after))
    return changes


# --- candidate fixes -------------------------------------------------------------------

# (in a Worker's words, in a node's: a TrainJob's nodes keep upstream's word)
_REDUCE = {
    "workers": (lambda: _("Reduce workers to %(amount)s"),
                lambda: _("Reduce nodes to %(amount)s")),
    "gpus_per_worker": (lambda: _("Reduce GPUs per worker to %(amount)s"),
                        lambda: _("Reduce GPUs per node to %(amount)s")),
    "cpu_per_worker": (lambda: _("Reduce CPUs per worker to %(amount)s"),
                       lambda: _("Reduce CPUs per node to %(amount)s")),
    "memory_per_worker": (lambda: _("Reduce memory per worker to %(amount)s"),
                          lambda: _("Reduce memory per node to %(amount)s")),
    "launcher_cpu": (lambda: _("Reduce Launcher CPUs to %(amount)s"),) * 2,
    "launcher_memory": (lambda: _("Reduce Launcher memory to %(amount)s"),) * 2,
}
_RAISE = {
    "gpus_per_worker": (lambda: _("Raise GPUs per worker to %(amount)s"),
                        lambda: _("Raise GPUs per node to %(amount)s")),
    "cpu_per_worker": (lambda: _("Raise CPUs per worker to %(amount)s"),
                       lambda: _("Raise CPUs per node to %(amount)s")),
    "memory_per_worker": (lambda: _("Raise memory per worker to %(amount)s"),
                          lambda: _("Raise memory per node to %(amount)s")),
    "launcher_cpu": (lambda: _("Raise Launcher CPUs to %(amount)s"),) * 2,
    "launcher_memory": (lambda: _("Raise Launcher memory to %(amount)s"),) * 2,
}


def _shape_label(spec: JobSpec, each: str, workers: int) -> str:
    """"Use 4 GPUs per worker and 2 workers" ("per node and 2 nodes" for a TrainJob)."""
    if spec.kind.counts_nodes:
        return ngettext("Use %(each)s per node and %(count)d node",
                        "Use %(each)s per node and %(count)d nodes", workers) % {
            "each": each, "count": workers}
    return _("Use %(each)s per worker and %(workers)s") % {
        "each": each, "workers": workers_text(workers)}


def _fix(spec: JobSpec, labels: dict, name: str, value: Any) -> Fix:
    changes = keep_processes_in_step(spec, {name: value})
    label = labels[name][1 if spec.kind.counts_nodes else 0]() % {"amount": value}
    if name in ("cpu_per_worker", "memory_per_worker"):
        label = _with_cost(spec, label, changes)
    return Fix(label, changes)


def _with_cost(spec: JobSpec, label: str, changes: dict[str, Any]) -> str:
    """The label, and what the fix does to the Workers' totals where it cuts CPUs or
    memory or changes the GPUs: "Reduce CPUs per worker to 64 (in all: 128 CPUs instead of
    192 CPUs)". A label without it keeps them (or adds only CPUs or memory)."""
    before, after = totals_for(spec), totals_for(_applied(spec, changes))
    said = []
    if after.total_gpus != before.total_gpus:
        said.append((gpus(after.total_gpus), gpus(before.total_gpus)))
    if after.workers_cpu < before.workers_cpu:
        said.append((cpus(after.workers_cpu), cpus(before.workers_cpu)))
    if after.workers_memory < before.workers_memory:
        said.append((display_memory(after.workers_memory),
                     display_memory(before.workers_memory)))
    if not said:
        return label
    return _("%(fix)s (in all: %(changes)s)") % {"fix": label, "changes": ", ".join(
        _("%(after)s instead of %(before)s") % {"after": a, "before": b} for a, b in said)}


def _candidates(spec: JobSpec, report: FitReport, violations: list[LimitViolation],
                sizes: list[NodeSize]) -> Iterator[list[Fix]]:
    """Groups of alternative fixes, best first; the first of each group that fits is kept."""
    if not _worker_ready(spec):
        return
    failing = [line for line in report.lines if not line.fits]
    if report.never_fits:
        # the same compute in another shape first (Workers x GPUs), then as much of it as
        # the quota holds in all, then what the LimitRange or the quota alone would take
        if report.node_problem:
            yield from _node_fixes(spec, report.totals, sizes)
        over = [line for line in failing if line.hard >= 0 and line.requested > line.hard]
        if over:
            yield from _hard_quota_fixes(spec, report.totals, over, sizes)
        yield from _limit_split_fixes(spec, report, violations, sizes)
        yield from _limit_fixes(spec, violations)
        if failing:
            yield from _quota_fixes(spec, report.totals, failing)
        return
    if failing:
        yield from _quota_fixes(spec, report.totals, failing)
    yield from _limit_fixes(spec, violations)


def _quota_fixes(spec: JobSpec, totals: Totals, failing: list[QuotaLine]
                 ) -> Iterator[list[Fix]]:
    yield [_fix(spec, _REDUCE, "workers", n) for n in range(spec.workers - 1, 0, -1)]
    yield [_fix(spec, _REDUCE, "gpus_per_worker", n)
           for n in range(spec.gpus_per_worker - 1, 0, -1)]
    for line in failing:
        kind = compute_name(line.resource)
        room = line.available
        if kind == "cpu" and totals.cpu_per_worker:
            each = _round_cpu((room - totals.launcher_cpu) / totals.workers, ROUND_FLOOR)
            if each and each < totals.cpu_per_worker:
                yield [_fix(spec, _REDUCE, "cpu_per_worker", format_cpu(each))]
        elif kind == "memory" and totals.memory_per_worker:
            each = _round_memory((room - totals.launcher_memory) / totals.workers, ROUND_FLOOR)
            if each and each < totals.memory_per_worker:
                yield [_fix(spec, _REDUCE, "memory_per_worker", format_memory(each))]


def _hard_quota_fixes(spec: JobSpec, totals: Totals, over: list[QuotaLine],
                      sizes: list[NodeSize]) -> Iterator[list[Fix]]:
    """Workers x GPUs reshaped to as many GPUs as the quota holds in all (16 of 16, not 1):
    the Workers kept and fewer GPUs each, or the GPUs each kept (up to a node) and fewer
    Workers, whichever keeps more."""
    gpu_lines = [line for line in over if compute_name(line.resource) == "nvidia.com/gpu"]
    if not gpu_lines or not totals.gpus_per_worker:
        return
    room = int(min(line.hard for line in gpu_lines))
    most = max((n.gpus for n in sizes), default=Decimal(totals.gpus_per_worker))
    shapes = []
    for each in range(min(int(most), room), 0, -1):
        workers = min(room // each, MAX_WORKERS)
        if workers >= 1:
            changed = (workers != totals.workers) + (each != totals.gpus_per_worker)
            shapes.append((-workers * each, changed, abs(each - totals.gpus_per_worker),
                           workers, each))
    # each of the best shapes on its own: "Reduce workers to 2" and "Reduce GPUs per worker
    # to 4" both keep 16 of 32 GPUs, and the person chooses
    for _total, _changed, _distance, workers, each in sorted(shapes)[:2]:
        if workers == totals.workers:
            yield [_fix(spec, _REDUCE, "gpus_per_worker", each)]
        elif each == totals.gpus_per_worker:
            yield [_fix(spec, _REDUCE, "workers", workers)]
        else:
            yield [Fix(_shape_label(spec, gpus(each), workers),
                keep_processes_in_step(spec, {"workers": workers, "gpus_per_worker": each}))]


def _limit_fixes(spec: JobSpec, violations: list[LimitViolation]) -> Iterator[list[Fix]]:
    for violation in violations:
        name = violation.field
        if name not in FIELDS.values() or violation.bound not in ("max", "min"):
            continue
        if violation.resource == "cpu":
            value: Any = format_cpu(violation.limit)
        elif violation.resource == "memory":
            value = format_memory(violation.limit)
        else:
            value = int(violation.limit)
        yield [_fix(spec, _REDUCE if violation.bound == "max" else _RAISE, name, value)]


def _limit_split_fixes(spec: JobSpec, report: FitReport, violations: list[LimitViolation],
                       sizes: list[NodeSize]) -> Iterator[list[Fix]]:
    """More Workers, each within the LimitRange's maximum of CPUs or memory, for the same
    total (96 CPUs a Worker where a container may have 64: 3 x 64, where 2 x 64 would cut
    a third): up to what the quota holds in all, on the nodes there are; the GPUs per
    Worker kept, and said when their total grows."""
    totals = report.totals
    candidates = selected(sizes, as_dict(spec.node_selector), _affinity(spec))
    for violation in violations:
        if violation.bound != "max" or violation.field not in ("cpu_per_worker",
                                                               "memory_per_worker"):
            continue
        if violation.resource == "cpu":
            lead, amount, launcher = "cpu_per_worker", totals.cpu_per_worker, totals.launcher_cpu
            top = min(violation.limit, max((n.cpu for n in candidates), default=violation.limit))
            rounder = _round_cpu
        else:
            lead, amount = "memory_per_worker", totals.memory_per_worker
            launcher = totals.launcher_memory
            top = min(violation.limit,
                      max((n.memory for n in candidates), default=violation.limit))
            rounder = _round_memory
        top = rounder(top, ROUND_FLOOR)
        total = totals.workers * amount
        for line in report.lines:
            if compute_name(line.resource) == violation.resource and line.hard >= 0:
                total = min(total, line.hard - launcher)
        if top <= 0 or total <= 0:
            continue
        # shared evenly, rounded up; rounded down where the quota's hard limit is the total
        rounding = ROUND_CEILING if total == totals.workers * amount else ROUND_FLOOR
        first = max(math.ceil(total / top), totals.workers + 1)
        group = []
        for workers in range(first, min(first + _MAX_TRIES, MAX_WORKERS + 1)):
            each = rounder(total / workers, rounding)
            if 0 < each <= top:
                group += [_split_fix(spec, totals, lead, each, workers,
                                     each / amount if scaled else None)
                          for scaled in (False, True)]
        yield group


def _round_cpu(value: Decimal, rounding: str) -> Decimal:
    if value <= 0:
        return Decimal(0)
    if value >= 1 or rounding == ROUND_CEILING:
        whole = value.to_integral_value(rounding=rounding)
        if whole >= 1:
            return whole
    return (value * 10).to_integral_value(rounding=rounding) / 10


def _round_memory(value: Decimal, rounding: str) -> Decimal:
    if value <= 0:
        return Decimal(0)
    unit = GI if value >= GI else MI
    return (value / unit).to_integral_value(rounding=rounding) * unit


def _node_fixes(spec: JobSpec, totals: Totals, sizes: list[NodeSize]
                ) -> Iterator[list[Fix]]:
    selector, affinity = as_dict(spec.node_selector), _affinity(spec)
    candidates = selected(sizes, selector, affinity)
    if not candidates and sizes and (selector or affinity):
        # the rule that leaves no node, removed (the node affinity first where the node
        # selector alone leaves some)
        yield [fix for fix in (
            Fix(_("Remove the node affinity"), {"node_affinity": []})
            if affinity and selected(sizes, selector) else None,
            Fix(_("Remove the node selector"), {"node_selector": {}}) if selector else None,
            Fix(_("Remove the node selector and the node affinity"),
                {"node_selector": {}, "node_affinity": []}) if selector and affinity else None,
        ) if fix is not None]
        return
    if not candidates:
        return
    most_cpu = max(n.cpu for n in candidates)
    most_memory = max(n.memory for n in candidates)
    if totals.launcher_cpu > most_cpu:
        yield [_fix(spec, _REDUCE, "launcher_cpu",
                    format_cpu(_round_cpu(most_cpu, ROUND_FLOOR)))]
    if totals.launcher_memory > most_memory:
        yield [_fix(spec, _REDUCE, "launcher_memory",
                    format_memory(_round_memory(most_memory, ROUND_FLOOR)))]
    yield list(_split_fixes(spec, totals, candidates))


def _split_fixes(spec: JobSpec, totals: Totals, nodes: list[NodeSize]) -> Iterator[Fix]:
    """Smaller Workers, more of them, the same total: the lead resource (GPUs, else CPUs,
    else memory) per Worker as large as a node allows; the others kept, or scaled down."""
    if totals.gpus_per_worker:
        lead, amount = "gpus_per_worker", Decimal(totals.gpus_per_worker)
        top = min(max(n.gpus for n in nodes), amount - 1)

        def share(total: Decimal, workers: int) -> Decimal:
            return Decimal(math.ceil(total / workers))
    elif totals.cpu_per_worker and totals.cpu_per_worker > max(n.cpu for n in nodes):
        lead, amount = "cpu_per_worker", totals.cpu_per_worker
        top = _round_cpu(max(n.cpu for n in nodes), ROUND_FLOOR)

        def share(total: Decimal, workers: int) -> Decimal:
            return _round_cpu(total / workers, ROUND_CEILING)
    elif totals.memory_per_worker:
        lead, amount = "memory_per_worker", totals.memory_per_worker
        top = _round_memory(min(max(n.memory for n in nodes), amount - 1), ROUND_FLOOR)

        def share(total: Decimal, workers: int) -> Decimal:
            return _round_memory(total / workers, ROUND_CEILING)
    else:
        return
    if top <= 0:
        return
    total = totals.workers * amount
    # the fewest Workers that hold the total, shared evenly (12 GPUs on 8-GPU nodes: 2 x 6,
    # not 2 x 8), then one Worker more at a time
    first = max(math.ceil(total / top), totals.workers + 1)
    for workers in range(first, min(first + _MAX_TRIES, MAX_WORKERS + 1)):
        each = share(total, workers)
        if each <= 0 or each > top:
            continue
        for scaled in (False, True):
            yield _split_fix(spec, totals, lead, each, workers, each / amount if scaled else None)


def _split_fix(spec: JobSpec, totals: Totals, lead: str, each: Decimal, workers: int,
               factor: Decimal | None) -> Fix:
    changes: dict[str, Any] = {"workers": workers}
    parts: list[str] = []
    if lead == "gpus_per_worker":
        changes[lead] = int(each)
        parts.append(gpus(each))
    elif lead == "cpu_per_worker":
        changes[lead] = format_cpu(each)
        parts.append(cpus(each))
    else:
        changes[lead] = format_memory(each)
        parts.append(format_memory(each))
    if factor is not None:
        if lead != "cpu_per_worker" and totals.cpu_per_worker:
            cpu = _round_cpu(totals.cpu_per_worker * factor, ROUND_CEILING)
            changes["cpu_per_worker"] = format_cpu(cpu)
            parts.append(cpus(cpu))
        if lead != "memory_per_worker" and totals.memory_per_worker:
            memory = _round_memory(totals.memory_per_worker * factor, ROUND_CEILING)
            changes["memory_per_worker"] = format_memory(memory)
            parts.append(format_memory(memory))
    label = _shape_label(spec, ", ".join(parts), workers)
    changes = keep_processes_in_step(spec, changes)
    return Fix(_with_cost(spec, label, changes), changes)
