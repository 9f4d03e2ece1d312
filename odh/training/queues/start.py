"""When a queued job should start: the admitted jobs of its ClusterQueue end at their
estimates and release what they hold, the jobs ahead start first, in order, as soon as
they fit (odh/training/queues/standing.py `expected_start`, pure). `read_standing` (below) reads a
job's whole standing (its place, what is free, who preempted it, when it should start):
it builds on queueing's pieces, which never import this module.

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
from odh.training.kinds import KINDS, QUEUE_LABEL, JobKind
from odh.training.logs.progress import hints_from_job
from odh.training.logs.running import running_progress
from odh.training.manifests.totals import ZERO, amount
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import GPU_RESOURCE
from odh.training.queues.standing import (
    ADMITTED,
    FINISHED,
    INADMISSIBLE,
    PREEMPTED,
    QUEUED,
    UNKNOWN,
    ExpectedStart,
    JobAhead,
    Preemptor,
    QueueStanding,
    Running,
    expected_start,
    free_quota,
    workload_name,
    workload_needs,
)
from odh.training.status.summarize import summarize

Obj = dict[str, Any]
EndsIn = Callable[[str, str, str], "float | None"]  # (namespace, kind, name) -> seconds
_PREEMPTOR_UID = re.compile(r"\(UID: ([^,)\s]+)")
MAX_NAMESPACES = 20  # listed one by one when the person may not list every namespace's


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
    """`ends_in` from each running job's progress, as it reports it on itself (a TrainJob's
    trainerStatus) or its launcher's log tells it (the Overview's progress bar's estimate):
    one get of the job, one list of its pods and one read of a log tail per job, with the
    person's client. None when the job cannot be read, is not running or gives no estimate."""
    now = now or datetime.now(UTC)

    def ends_in(namespace: str, kind_name: str, name: str) -> float | None:
        kind = next((k for k in KINDS.values() if k.kind == kind_name), None)
        if kind is None:
            return None
        try:
            job = client.get_job(kind, namespace, name)
            summary = summarize(job, client.list_job_pods(namespace, name, kind), None, now)
            progress = running_progress(client, summary, hints_from_job(kind, job))
        except errors.ClusterError:
            return None
        return progress.eta_at(now) if progress is not None else None

    return ends_in


# -- a job's standing in its queue, read with the person's token -----------------------------
def _condition(obj: Obj, type_: str) -> Obj:
    for c in as_list(get_path(obj, ["status", "conditions"])):
        if as_dict(c).get("type") == type_:
            return as_dict(c)
    return {}


def read_standing(client: Any, kind: JobKind, job: Obj,
                  may_see: Callable[[str], bool] | None = None,
                  ends_in: Callable[[str, str, str], float | None] | None = None,
                  namespaces: Iterable[str] = (),
                  cluster_queue: Callable[[str], Obj | None] | None = None
                  ) -> QueueStanding | None:
    """Where the job stands in Kueue's queues (None: it names no queue).

    With `ends_in(namespace, kind, name)` (seconds until a running job ends, None when it
    cannot be told), a waiting job's expected start too (odh/training/queues/start.py),
    from the Workloads the person may read: every namespace's, else `namespaces`'.
    `cluster_queue(name)`: the ClusterQueue where the person may not read it (the
    dashboard reads it with its own account: training/kueue_settings.py)."""
    queue = str(get_path(job, ["metadata", "labels", QUEUE_LABEL], "") or "")
    if not queue:
        return None
    namespace = str(get_path(job, ["metadata", "namespace"], "") or "")
    may_see = may_see or (lambda ns: ns == namespace)
    try:
        workload = client.get_workload(namespace, workload_name(kind, job))
    except errors.NotFound:
        return QueueStanding(queue, UNKNOWN, unknown=[
            _("Kueue has not taken the job yet (is Kueue installed?)")])
    except errors.Forbidden:
        return QueueStanding(queue, UNKNOWN, unknown=[
            _("you may not read Kueue's workloads in this project")])
    standing = QueueStanding(queue, QUEUED, priority=int(
        get_path(workload, ["spec", "priority"], 0) or 0), needs=workload_needs(workload))
    if _condition(workload, "Finished").get("status") == "True":
        standing.state = FINISHED
        return standing
    reserved = _condition(workload, "QuotaReserved")
    if reserved.get("status") == "True":
        standing.state = ADMITTED
        standing.cluster_queue = str(get_path(workload, ["status", "admission",
                                                         "clusterQueue"], "") or "")
        return standing
    standing.message = str(reserved.get("message") or "")
    standing.since = str(reserved.get("lastTransitionTime") or "")
    if reserved.get("reason") == "Inadmissible":
        standing.state = INADMISSIBLE
        if standing.message.startswith("LocalQueue "):
            try:
                standing.queues_there = sorted(
                    str(get_path(q, ["metadata", "name"], "")) for q in
                    client.list_local_queues(namespace)) or [_("none")]
            except errors.ClusterError:
                pass
        elif standing.message.startswith("ClusterQueue "):  # "ClusterQueue X doesn't exist"
            standing.cluster_queue = standing.message.split()[1]
        return standing
    preempted = _condition(workload, "Preempted")
    if preempted.get("status") == "True":
        standing.state = PREEMPTED
        standing.message = str(preempted.get("message") or standing.message)
        standing.since = str(preempted.get("lastTransitionTime") or standing.since)
    ahead, queue_object = _place(client, standing, workload, namespace, may_see,
                                 cluster_queue)
    if ends_in is not None or standing.state == PREEMPTED:
        workloads = readable_workloads(client, {namespace, *namespaces})
        if standing.state == PREEMPTED:
            standing.preempted_by = preemptor(workloads, standing.message, may_see)
        if ends_in is not None and standing.position is not None:
            standing.expected = estimate(standing, queue_object or {}, workloads, ahead,
                                         ends_in)
    return standing


def _place(client: Any, standing: QueueStanding, workload: Obj, namespace: str,
           may_see: Callable[[str], bool],
           fallback: Callable[[str], Obj | None] | None) -> tuple[list[Obj], Obj | None]:
    """The queue's ClusterQueue, the position, those ahead and what is free. Returns the
    pending list's items ahead of the job and the ClusterQueue (None: not readable)."""
    try:
        local = client.get_local_queue(namespace, standing.queue)
        standing.cluster_queue = str(get_path(local, ["spec", "clusterQueue"], "") or "")
    except errors.ClusterError:
        standing.unknown.append(_("the queue %(queue)s could not be read") % {
            "queue": standing.queue})
        return [], None
    name = str(get_path(workload, ["metadata", "name"], ""))
    items: list[Obj] = []
    try:
        items = client.pending_workloads(cluster_queue=standing.cluster_queue)
    except errors.Forbidden:
        standing.in_cluster_queue = False
        standing.unknown.append(_("you may not see the ClusterQueue's whole queue: the "
                                  "position counts your queue only"))
        try:
            items = client.pending_workloads(namespace=namespace, local_queue=standing.queue)
        except errors.ClusterError:
            standing.unknown.append(_("the position is unknown: the queue's pending list "
                                      "could not be read"))
    except errors.ClusterError:
        standing.unknown.append(_("the position is unknown: the queue's pending list "
                                  "could not be read"))
    ahead: list[Obj] = []
    for index, item in enumerate(items):
        meta = as_dict(item.get("metadata"))
        if meta.get("name") == name and meta.get("namespace") == namespace:
            standing.position, standing.of = index + 1, len(items)
            break
        ahead.append(item)
        owner = as_dict((as_list(meta.get("ownerReferences")) or [{}])[0])
        ns = str(meta.get("namespace") or "")
        if may_see(ns):
            standing.ahead.append(JobAhead(ns, str(owner.get("name") or meta.get("name")),
                                           int(item.get("priority") or 0)))
        else:
            standing.ahead_hidden += 1
    cluster_queue = None
    try:
        cluster_queue = client.get_cluster_queue(standing.cluster_queue)
    except errors.ClusterError:
        if fallback is not None:
            cluster_queue = fallback(standing.cluster_queue)
    if cluster_queue is not None:
        standing.free = free_quota(cluster_queue)
    else:
        standing.free = None
        standing.unknown.append(_("what is free is unknown: you may not read the "
                                  "ClusterQueue %(cq)s") % {"cq": standing.cluster_queue})
    return ahead, cluster_queue
