"""The fixes the resource check offers (odh.training.capacity.fit): fewer or smaller
Workers, more Workers of smaller size, what a LimitRange allows, each checked again with
`assess` so that every fix offered makes the whole job fit."""


from __future__ import annotations

import math
from collections.abc import Iterator
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

from odh.training.capacity.assess import (
    GI,
    MI,
    FitReport,
    Fix,
    applied,
    keep_processes_in_step,
    required_affinity,
    worker_ready,
)
from odh.training.capacity.nodes import NodeSize, selected
from odh.training.capacity.quota import (
    QuotaLine,
    compute_name,
)
from odh.training.checks.limits import FIELDS, LimitViolation
from odh.training.checks.names import MAX_WORKERS
from odh.training.i18n import _, ngettext
from odh.training.manifests.totals import Totals, cpus, gpus, totals_for, workers_text
from odh.training.paths import as_dict
from odh.training.quantity import display_memory, format_cpu, format_memory
from odh.training.spec import JobSpec

_MAX_TRIES = 64


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
    before, after = totals_for(spec), totals_for(applied(spec, changes))
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


def candidates(spec: JobSpec, report: FitReport, violations: list[LimitViolation],
                sizes: list[NodeSize]) -> Iterator[list[Fix]]:
    """Groups of alternative fixes, best first; the first of each group that fits is kept."""
    if not worker_ready(spec):
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
    candidates = selected(sizes, as_dict(spec.node_selector), required_affinity(spec))
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
    selector, affinity = as_dict(spec.node_selector), required_affinity(spec)
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
