"""When a queued job should start: the admitted jobs of its ClusterQueue end at their
estimates and release what they hold, the jobs ahead start first, in order, as soon as
they fit (odh/training/queueing.py `expected_start`, pure).

What goes in is read with the person's own token, like the rest of the standing:

- the Workloads the person may list (every namespace's when allowed, else those of the
  projects given): the admitted ones of the same ClusterQueue are the running jobs, and
  what each holds is its admission's `resourceUsage`; the pending ones give what the jobs
  ahead need;
- what the ClusterQueue reserves in all (its status): quota held by Workloads the person
  cannot see is a release whose time is unknown;
- each running job's end, from `ends_in(namespace, kind, name)` (the dashboard and the SDK
  read the job's progress from its launcher's log; `None`: it cannot be estimated).

The estimate is "unknown" (with the reason) whenever it depends on something the person
cannot see or nobody can estimate: a job ahead in a hidden project, a release of hidden
quota, a running job without an ETA. Cohort borrowing is not counted (the estimate uses
the ClusterQueue's own quota, and says so).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from odh.training import errors
from odh.training.i18n import _
from odh.training.kinds import KINDS
from odh.training.paths import as_dict, as_list, get_path
from odh.training.progress import hints_from_job, parse_progress, progress_source
from odh.training.quantity import GPU_RESOURCE
from odh.training.queueing import (
    ExpectedStart,
    Preemptor,
    QueueStanding,
    Running,
    expected_start,
    workload_needs,
)
from odh.training.status import summarize
from odh.training.summary import JobStatus
from odh.training.totals import ZERO, amount

Obj = dict[str, Any]
EndsIn = Callable[[str, str, str], "float | None"]  # (namespace, kind, name) -> seconds
_PREEMPTOR_UID = re.compile(r"\(UID: ([^,)\s]+)")
MAX_NAMESPACES = 20  # listed one by one when the person may not list every namespace's
LOG_LINES = 200  # of a running job's launcher, for its progress (as the Overview reads)


def _true(workload: Obj, type_: str) -> bool:
    return any(as_dict(c).get("type") == type_ and as_dict(c).get("status") == "True"
               for c in as_list(get_path(workload, ["status", "conditions"])))


def _owner(workload: Obj) -> tuple[str, str]:
    owner = as_dict((as_list(get_path(workload, ["metadata", "ownerReferences"])) or [{}])[0])
    return str(owner.get("kind") or ""), str(owner.get("name") or "")


def _key(workload: Obj) -> tuple[str, str]:
    meta = as_dict(workload.get("metadata"))
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def held(workload: Obj, resource: str) -> Decimal:
    """What an admitted Workload holds of `resource`, over its pod sets' assignments."""
    total = ZERO
    for ps in as_list(get_path(workload, ["status", "admission", "podSetAssignments"])):
        total += amount(as_dict(as_dict(ps).get("resourceUsage")).get(resource) or 0)
    return total


def reserved(cluster_queue: Obj, resource: str) -> Decimal:
    """What the ClusterQueue reserves of `resource` in all, over its flavors."""
    total = ZERO
    for flavor in as_list(get_path(cluster_queue, ["status", "flavorsReservation"])):
        for r in as_list(as_dict(flavor).get("resources")):
            if as_dict(r).get("name") == resource:
                total += amount(as_dict(r).get("total") or 0)
    return total


def readable_workloads(client: Any, namespaces: Iterable[str]) -> list[Obj]:
    """Every namespace's Workloads if the person may list them, else those of
    `namespaces` (at most MAX_NAMESPACES) they may read."""
    try:
        return client.list_workloads()
    except errors.Forbidden:
        pass
    found: list[Obj] = []
    for namespace in sorted(set(namespaces))[:MAX_NAMESPACES]:
        try:
            found.extend(client.list_workloads(namespace))
        except errors.Forbidden:
            continue
    return found


def preemptor(workloads: list[Obj], message: str,
              may_see: Callable[[str], bool]) -> Preemptor | None:
    """Who preempted a job: Kueue's message names the preempting Workload's UID
    ("Preempted to accommodate a workload (UID: ..., JobUID: ...) due to ..."); None when
    that Workload is not among those the person may read."""
    found = _PREEMPTOR_UID.search(message or "")
    if not found:
        return None
    for w in workloads:
        if get_path(w, ["metadata", "uid"]) == found.group(1):
            namespace = _key(w)[0]
            return Preemptor(int(get_path(w, ["spec", "priority"], 0) or 0),
                             str(get_path(w, ["spec", "priorityClassName"], "") or ""),
                             _owner(w)[1] if may_see(namespace) else "")
    return None


def estimate(standing: QueueStanding, cluster_queue: Obj, workloads: list[Obj],
             ahead: list[Obj], ends_in: EndsIn) -> ExpectedStart:
    """The job's expected start from what the person could read (see the module's text).

    `ahead`: the pending list's items before the job, in queue order (the visibility API's
    PendingWorkloads: names, no resources); `workloads`: those the person may read.
    """
    resource = GPU_RESOURCE if standing.needs.get(GPU_RESOURCE) else "cpu"
    need = standing.needs.get(resource, ZERO)
    if standing.free is None:
        return ExpectedStart(None, [_("unknown: what the ClusterQueue has free cannot be "
                                      "read")])
    by_key = {_key(w): w for w in workloads}
    ahead_needs: list[Decimal] = []
    for item in ahead:
        known = by_key.get(_key(item))
        if known is None:
            return ExpectedStart(None, [_("unknown: jobs ahead of it are in projects you "
                                          "cannot see")])
        ahead_needs.append(workload_needs(known).get(resource, ZERO))
    running: list[Running] = []
    visible_hold = ZERO
    for w in workloads:
        if (get_path(w, ["status", "admission", "clusterQueue"]) != standing.cluster_queue
                or not _true(w, "QuotaReserved") or _true(w, "Finished")):
            continue
        holds = held(w, resource)
        kind, name = _owner(w)
        visible_hold += holds
        running.append(Running(name or _key(w)[1], holds,
                               ends_in(_key(w)[0], kind, name) if name else None))
    hidden = reserved(cluster_queue, resource) - visible_hold
    if hidden > ZERO:
        running.append(Running(_("jobs in projects you cannot see"), hidden, None))
    free = standing.free.get(resource, ZERO)
    result = expected_start(need, free, running, ahead_needs)
    if result.seconds is not None:
        result.assumptions.append(_("borrowing from the cohort is not counted"))
    return result


def progress_ends(client: Any, now: datetime | None = None) -> EndsIn:
    """`ends_in` from each running job's progress, as its launcher's log tells it (the
    Overview's progress bar's estimate): one get of the job, one list of its pods and one
    read of a log tail per job, with the person's client. None when the job cannot be read,
    is not running or its log gives no estimate."""
    now = now or datetime.now(UTC)

    def ends_in(namespace: str, kind_name: str, name: str) -> float | None:
        kind = next((k for k in KINDS.values() if k.kind == kind_name), None)
        if kind is None:
            return None
        try:
            job = client.get_job(kind, namespace, name)
            summary = summarize(job, client.list_job_pods(namespace, name), None, now)
            source = progress_source(summary.replicas)
            if summary.status != JobStatus.RUNNING or source is None \
                    or getattr(source, "status", "") != "Running":
                return None
            text = client.read_log(namespace, source.name, tail_lines=LOG_LINES,
                                   timestamps=True)
        except errors.ClusterError:
            return None
        epochs, steps = hints_from_job(job)
        progress = parse_progress(str(text).splitlines(), total_hint=epochs, step_hint=steps)
        return progress.eta_at(now) if progress is not None else None

    return ends_in
