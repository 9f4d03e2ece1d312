"""What the resource check rests on: the verdict on a job's spec against the quotas, the
LimitRanges and the nodes' sizes (`assess`), the report and the fixes it holds, and the
command's `-np` kept in step with a change of Workers (odh.training.capacity.fit)."""


from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from odh.training.capacity.nodes import NodeSize, node_problem
from odh.training.capacity.quota import (
    QuotaLine,
    line_problem,
    quota_lines,
    unset_compute,
)
from odh.training.checks.limits import LimitViolation, limit_violations
from odh.training.checks.rules_job import command_processes, with_processes
from odh.training.checks.rules_pod import limit_message
from odh.training.manifests.totals import Totals, totals_for
from odh.training.paths import as_dict
from odh.training.spec import JobSpec

GI = Decimal(2**30)
COUNT_QUOTA = "count/mpijobs.kubeflow.org"  # counts the MPIJob objects, finished ones too
MI = Decimal(2**20)


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


def required_affinity(spec: JobSpec) -> list:
    """The spec's required node affinity (a kind without one: none)."""
    found = getattr(spec, "node_affinity", None)
    return list(found) if isinstance(found, list) else []


def worker_ready(spec: JobSpec) -> bool:
    return isinstance(spec.workers, int) and isinstance(spec.gpus_per_worker, int) \
        and not isinstance(spec.workers, bool) and spec.workers >= 1


def assess(spec: JobSpec, quotas: list[dict], limit_ranges: list[dict],
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
    violations = limit_violations(spec, limit_ranges) if worker_ready(spec) else []
    problems += [limit_message(v, spec.kind.counts_nodes) for v in violations]
    selector, affinity = as_dict(spec.node_selector), required_affinity(spec)
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


def applied(spec: JobSpec, changes: dict[str, Any]) -> JobSpec:
    return dataclasses.replace(spec, **changes)


def keep_processes_in_step(spec: JobSpec, changes: dict[str, Any]) -> dict[str, Any]:
    """`changes` plus the command with its `-np N` in step, when the changes alter workers
    or slots and N matched them before (a fix that changes the Workers keeps mpirun's rank
    count right)."""
    if not isinstance(spec.command, list) or not worker_ready(spec):
        return changes
    asked = command_processes([str(w) for w in spec.command])
    before = spec.workers * spec.effective_slots
    after_spec = applied(spec, changes)
    after = after_spec.workers * after_spec.effective_slots
    if asked is not None and asked[1] == before and after != before:
        return dict(changes, command=with_processes([str(w) for w in spec.command], after))
    return changes


