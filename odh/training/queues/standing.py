"""Where a job queued by Kueue stands: its Workload, its queue, its position among the
pending ones, what it needs against what is free, and why it waits, read with the
person's own token (framework-free; the job page, its list row, `describe` and the SDK's
status use it).

    standing = read_standing(client, kind, job, may_see=lambda ns: ns == "team-nlp")
    standing.sentence()
    # "Queued in team-nlp-queue: position 2 of 5 (ClusterQueue gpu-a100), needs 16 GPUs,
    #  8 free now"

The Workload is found by name, as Kueue names it (`<kind>-<name>-<5 hex>`: see
simcluster/README.md, "Kueue"). The position comes from Kueue's visibility API: the
ClusterQueue's pending workloads where the person may read them, else their LocalQueue's
(the position then counts that queue only, and says so). What is free is the
ClusterQueue's nominal quota less what it holds, when the person may read the
ClusterQueue; else it is left out and the reason given. Jobs ahead are named when the
person may see their project (`may_see`), counted otherwise.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from odh.training import errors
from odh.training.capacity.allocation import pod_requests
from odh.training.durations import rough_duration
from odh.training.i18n import _
from odh.training.kinds import JobKind
from odh.training.manifests.totals import ZERO, amount, number
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import GPU_RESOURCE, format_resources

Obj = dict[str, Any]

QUEUED, ADMITTED, INADMISSIBLE, PREEMPTED, FINISHED, UNKNOWN = (
    "queued", "admitted", "inadmissible", "preempted", "finished", "unknown")


def workload_name(kind: JobKind, job: Obj) -> str:
    """The Workload Kueue makes for the job (jobframework's GetWorkloadNameForOwnerWithGVK)."""
    meta = as_dict(job.get("metadata"))
    name, uid = str(meta.get("name") or ""), str(meta.get("uid") or "")
    digest = hashlib.sha1(f"{kind.kind}\n{kind.group}\n{name}\n{uid}".encode(),
                          usedforsecurity=False).hexdigest()[:5]
    return f"{kind.kind.lower()}-{name}"[:253 - 6] + "-" + digest


@dataclass
class JobAhead:
    namespace: str
    name: str  # the job's name (its Workload's owner), "" when not visible
    priority: int


@dataclass
class Preemptor:
    """The Workload whose admission preempted a job (named by UID in Kueue's message)."""

    priority: int
    priority_class: str  # its WorkloadPriorityClass, "" without one
    name: str  # its job's name, "" in a project the person may not see


@dataclass
class QueueStanding:
    queue: str  # the LocalQueue the job names
    state: str  # QUEUED, ADMITTED, INADMISSIBLE, PREEMPTED, FINISHED or UNKNOWN
    cluster_queue: str = ""
    position: int | None = None  # from 1
    of: int | None = None  # pending workloads counted in the same scope
    in_cluster_queue: bool = True  # False: the position counts the LocalQueue only
    priority: int = 0
    needs: dict[str, Decimal] = field(default_factory=dict)
    free: dict[str, Decimal] | None = None  # None: the ClusterQueue cannot be read
    ahead: list[JobAhead] = field(default_factory=list)  # the visible ones
    ahead_hidden: int = 0  # jobs ahead in projects the person may not see
    message: str = ""  # Kueue's own words (why it waits, or was preempted)
    since: str = ""  # when that happened (RFC 3339)
    queues_there: list[str] = field(default_factory=list)  # a queue that does not exist
    unknown: list[str] = field(default_factory=list)  # what could not be read, and why
    expected: ExpectedStart | None = None  # when asked for (read_standing's ends_in)
    preempted_by: Preemptor | None = None  # None: not preempted, or by a Workload unseen

    @property
    def waiting(self) -> bool:
        return self.state in (QUEUED, INADMISSIBLE, PREEMPTED)

    def headline(self) -> str:
        """The job's one line while Kueue holds it (odh.training.diagnosis.story): the same words as
        the job list's `queued_lines`, from the same count."""
        return queued_line(self.queue, self.position, self.of)

    def sentence(self) -> str:
        """One line for the job page, its row, `describe` and the SDK."""
        if self.state == INADMISSIBLE:
            if self.queues_there:
                return _("Waiting: the queue %(queue)s does not exist in this project. "
                         "Queues there: %(queues)s.") % {
                    "queue": self.queue, "queues": ", ".join(self.queues_there)}
            if self.cluster_queue:
                return _("Waiting: the queue %(queue)s sends its jobs to the ClusterQueue "
                         "%(cq)s, which does not exist (any more). A cluster administrator "
                         "must create it, or point the queue at another.") % {
                    "queue": self.queue, "cq": self.cluster_queue}
            return _("Waiting: Kueue cannot admit it: %(message)s") % {"message": self.message}
        if self.state == ADMITTED:
            return _("Admitted by the ClusterQueue %(cq)s (queue %(queue)s).") % {
                "cq": self.cluster_queue, "queue": self.queue}
        if self.state == UNKNOWN:
            return _("Queued in %(queue)s; where it stands is unknown: %(why)s") % {
                "queue": self.queue, "why": "; ".join(self.unknown)}
        if self.state == FINISHED:
            return _("Finished; its quota in %(queue)s is released.") % {"queue": self.queue}
        parts = [self._where()]
        needs = self._needs_text()
        if needs:
            parts.append(needs)
        text = ", ".join(parts)
        if self.state == PREEMPTED:
            text = self._preempted() + "; " + text
        return text

    def _preempted(self) -> str:
        by = self.preempted_by
        if by is None:
            return _("Preempted by a job of higher priority")
        priority = (f"{by.priority_class} ({by.priority})" if by.priority_class
                    else str(by.priority))
        if by.name:
            return _("Preempted by %(job)s, of priority %(priority)s") % {
                "job": by.name, "priority": priority}
        return _("Preempted by a job of priority %(priority)s in a project you cannot "
                 "see") % {"priority": priority}

    def _where(self) -> str:
        values = {"queue": self.queue, "position": self.position, "of": self.of,
                  "cq": self.cluster_queue}
        if self.position is None:
            return _("Queued in %(queue)s") % values
        if self.in_cluster_queue:
            return _("Queued in %(queue)s: position %(position)d of %(of)d "
                     "(ClusterQueue %(cq)s)") % values
        return _("Queued in %(queue)s: position %(position)d of %(of)d in this queue "
                 "(ClusterQueue %(cq)s)") % values

    def _needs_text(self) -> str:
        if not self.needs:
            return ""
        if self.needs.get(GPU_RESOURCE):
            needs = format_resources(None, None, self.needs[GPU_RESOURCE])
            if self.free is None:
                return _("needs %(needs)s") % {"needs": needs}
            free = self.free.get(GPU_RESOURCE, ZERO)
            return _("needs %(needs)s, %(free)s free now") % {"needs": needs,
                                                                "free": number(GPU_RESOURCE, free)}
        needs = format_resources(self.needs.get("cpu"), self.needs.get("memory"), None)
        if self.free is None:
            return _("needs %(needs)s") % {"needs": needs}
        free = format_resources(self.free.get("cpu", ZERO), self.free.get("memory", ZERO),
                                None)
        return _("needs %(needs)s; free now: %(free)s") % {"needs": needs, "free": free}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (`describe -o json`'s `queue`, the SDK's JobStatus.to_dict)."""
        by = self.preempted_by
        return {
            "localQueue": self.queue, "clusterQueue": self.cluster_queue,
            "state": self.state, "position": self.position, "of": self.of,
            "positionIn": "ClusterQueue" if self.in_cluster_queue else "LocalQueue",
            "priority": self.priority, "text": self.sentence(),
            "ahead": [{"namespace": a.namespace, "name": a.name, "priority": a.priority}
                      for a in self.ahead],
            "aheadElsewhere": self.ahead_hidden, "message": self.message,
            "unknown": list(self.unknown),
            "expectedStartSeconds": None if self.expected is None else self.expected.seconds,
            "expectedStart": self.expected_text(),
            "expectedStartAssumptions": [] if self.expected is None
            else list(self.expected.assumptions),
            "preemptedBy": None if by is None else {
                "priority": by.priority, "priorityClass": by.priority_class, "name": by.name}}

    def expected_text(self) -> str:
        """"Expected start: in about 25m" or "Expected start: unknown: ..."; "" when not
        estimated. An estimate is said no more precisely than it is ("about 4h 40m")."""
        if self.expected is None:
            return ""
        if self.expected.seconds is None:
            return _("Expected start: %(why)s") % {"why": "; ".join(self.expected.assumptions)}
        if self.expected.seconds <= 0:
            return _("Expected start: as soon as Kueue admits it (it fits now)")
        return _("Expected start: in about %(duration)s") % {
            "duration": rough_duration(self.expected.seconds)}

    def expected_value(self) -> str:
        """What the Queue card's "Expected start" line says: "in about 4h 40m"."""
        if self.expected is None:
            return ""
        if self.expected.seconds is None:
            return "; ".join(self.expected.assumptions)
        if self.expected.seconds <= 0:
            return _("as soon as Kueue admits it (it fits now)")
        return _("in about %(duration)s") % {"duration": rough_duration(self.expected.seconds)}

    def ahead_names(self) -> str:
        """"bert-ft, gpt2-sft, 2 in projects you cannot see" ("" when none is ahead)."""
        names = [a.name for a in self.ahead]
        if self.ahead_hidden:
            names.append(_("%(count)d in projects you cannot see") % {
                "count": self.ahead_hidden})
        return ", ".join(names)

    def ahead_text(self) -> str:
        """"Ahead of it: bert-ft, gpt2-sft and 2 jobs in other projects"."""
        names = self.ahead_names()
        return _("Ahead of it: %(jobs)s") % {"jobs": names} if names else ""


def workload_needs(workload: Obj) -> dict[str, Decimal]:
    """What all its pods ask for: Kueue's `status.resourceRequests` while it waits, else
    its pod sets' templates times their counts."""
    totals: dict[str, Decimal] = {}
    requested = as_list(get_path(workload, ["status", "resourceRequests"]))
    if requested:
        for entry in requested:
            for name, value in as_dict(as_dict(entry).get("resources")).items():
                totals[name] = totals.get(name, ZERO) + amount(value)
        return totals
    for ps in as_list(get_path(workload, ["spec", "podSets"])):
        ps = as_dict(ps)
        count = int(ps.get("count") or 1)
        per_pod = pod_requests({"spec": get_path(ps, ["template", "spec"], {})})
        for name, value in per_pod.items():
            totals[name] = totals.get(name, ZERO) + value * count
    return totals


def free_quota(cluster_queue: Obj) -> dict[str, Decimal]:
    """Per resource, the ClusterQueue's nominal quota less what it holds, over its flavors."""
    nominal: dict[str, Decimal] = {}
    for group in as_list(get_path(cluster_queue, ["spec", "resourceGroups"])):
        for flavor in as_list(as_dict(group).get("flavors")):
            for q in as_list(as_dict(flavor).get("resources")):
                q = as_dict(q)
                name = str(q.get("name") or "")
                nominal[name] = nominal.get(name, ZERO) + amount(q.get("nominalQuota") or 0)
    used: dict[str, Decimal] = {}
    for flavor in as_list(get_path(cluster_queue, ["status", "flavorsReservation"])):
        for r in as_list(as_dict(flavor).get("resources")):
            r = as_dict(r)
            name = str(r.get("name") or "")
            used[name] = used.get(name, ZERO) + amount(r.get("total") or 0)
    return {name: max(ZERO, value - used.get(name, ZERO)) for name, value in nominal.items()}


@dataclass
class Running:
    """An admitted job of the same ClusterQueue: what it holds and when it should end."""

    name: str
    holds: Decimal  # of the resource the queued job waits for (GPUs, else CPUs)
    ends_in: float | None  # seconds from now (its progress' estimate); None: unknown


@dataclass
class ExpectedStart:
    seconds: float | None  # None: unknown
    assumptions: list[str]


def expected_start(need: Decimal, free: Decimal, running: list[Running],
                   ahead: list[Decimal]) -> ExpectedStart:
    """When a queued job needing `need` should start: the admitted jobs end at their
    estimates, releasing what they hold, and the jobs `ahead` (what each needs, in queue
    order) start first as soon as they fit, and hold on (their end is not known). Unknown
    when it needs the release of a job whose end cannot be estimated, or can never fit."""
    assumptions = [_("the running jobs end when their progress says; the jobs ahead start "
                     "in order as soon as they fit, and run past this job's start")]
    releases = sorted(running, key=lambda r: (r.ends_in is None, r.ends_in or 0.0))
    total = free + sum((r.holds for r in running), ZERO)
    now, available = 0.0, free
    if need > total:
        return ExpectedStart(None, [_("it can never fit: it needs more than the queue "
                                      "holds in all")])
    for needed in [*ahead, need]:
        if needed > total:  # only once a job ahead ends, which cannot be told before it runs
            return ExpectedStart(None, [_("unknown: it must wait for jobs ahead of it to "
                                          "finish, which have not started yet")])
        while available < needed:
            if not releases:
                return ExpectedStart(None, assumptions)
            nxt = releases.pop(0)
            if nxt.ends_in is None:
                return ExpectedStart(None, [_("unknown: the end of %(job)s cannot be "
                                              "estimated") % {"job": nxt.name}])
            now = max(now, nxt.ends_in)
            available += nxt.holds
        available -= needed
        total -= needed  # held from then on: its end is not known
    return ExpectedStart(now, assumptions)


def queued_line(queue: str, position: int | None, of: int | None) -> str:
    """"Queued: 2 of 5 in gpu-queue" (its place among the ClusterQueue's pending jobs, or
    its LocalQueue's where the ClusterQueue's list may not be read), "Queued in gpu-queue"
    when the place is unknown."""
    if position is None or of is None:
        return _("Queued in %(queue)s") % {"queue": queue}
    return _("Queued: %(position)d of %(of)d in %(queue)s") % {
        "position": position, "of": of, "queue": queue}


MAX_QUEUES_READ = 10  # a page's rows name a few queues; each costs a read or two


def queued_lines(client: Any, jobs: Iterable[tuple[JobKind, str, str, str, str]]
                 ) -> dict[str, str]:
    """The one line of each job Kueue holds, by "<ns>/<kind slug>/<name>": `jobs` are
    (kind, namespace, name, uid, local queue). Counted as `read_standing` counts (the
    ClusterQueue's pending list, else the LocalQueue's), with one read of each queue's
    pending list, not one per job; a queue that cannot be read gives "Queued in <queue>"."""
    by_queue: dict[tuple[str, str], list[tuple[JobKind, str, str, str]]] = {}
    for kind, namespace, name, uid, queue in jobs:
        by_queue.setdefault((namespace, queue), []).append((kind, namespace, name, uid))
    pending: dict[str, list[Obj] | None] = {}
    found: dict[str, str] = {}
    for index, ((namespace, queue), rows) in enumerate(by_queue.items()):
        items = _pending_of(client, namespace, queue, pending) \
            if index < MAX_QUEUES_READ else None
        at = {(str(as_dict(i.get("metadata")).get("namespace") or namespace),
               str(as_dict(i.get("metadata")).get("name") or "")): n + 1
              for n, i in enumerate(items or [])}
        for kind, ns, name, uid in rows:
            place = at.get((ns, workload_name(kind, {"metadata": {"name": name, "uid": uid}})))
            found[f"{ns}/{kind.slug}/{name}"] = queued_line(
                queue, place, len(items) if place is not None and items is not None else None)
    return found


def _pending_of(client: Any, namespace: str, queue: str,
                read: dict[str, list[Obj] | None]) -> list[Obj] | None:
    """The pending list the job's place is counted in (`read` keeps what was read)."""
    try:
        local = client.get_local_queue(namespace, queue)
        cluster_queue = str(get_path(local, ["spec", "clusterQueue"], "") or "")
    except errors.ClusterError:
        cluster_queue = ""
    if cluster_queue:
        if cluster_queue not in read:
            try:
                read[cluster_queue] = client.pending_workloads(cluster_queue=cluster_queue)
            except errors.ClusterError:
                read[cluster_queue] = None
        if read[cluster_queue] is not None:
            return read[cluster_queue]
    try:
        return client.pending_workloads(namespace=namespace, local_queue=queue)
    except errors.ClusterError:
        return None
