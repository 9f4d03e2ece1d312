"""What the wizard checks before a job is created, for every way of creating one.

`read_project_facts` reads what the cluster says about the target project (the MPIJob
names taken, claims, priority classes, LocalQueues, LimitRanges, quotas) with the person's
own credentials; what they may not read is unknown, and its checks are skipped.
`preflight` adds the nodes and runs the wizard's validation and resource check
(`odh.training.capacity.fit.check_fit`) on a spec: the dashboard's wizard, the SDK's
`MPIJob.create` and the CLI's `create` all decide from it, so they say the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from odh.training import errors
from odh.training.capacity.allocation import room_now
from odh.training.capacity.fit import FitReport, Fix, check_fit
from odh.training.cluster.client import ClusterClient
from odh.training.findings import FieldError, ValidationContext
from odh.training.i18n import _
from odh.training.kinds import JobKind, default_kind
from odh.training.spec import JobSpec
from odh.training.validation import validate_spec

T = TypeVar("T")
DEFAULT_QUEUE = "default"  # Kueue's LocalQueueDefaulting: the queue of jobs naming none


@dataclass
class ProjectFacts:
    """What the cluster says about a project that validation and the resource check use."""

    namespace: str
    visible: bool
    existing_names: set[str] = field(default_factory=set)
    pvcs: list[str] | None = None
    priority_classes: list[str] | None = None
    local_queues: list[str] | None = None
    # Kueue's WorkloadPriorityClasses, name -> value (None: no Kueue, or not readable)
    workload_priorities: dict[str, int] | None = None
    limit_ranges: list[dict] = field(default_factory=list)
    quotas: list[dict] = field(default_factory=list)
    quotas_readable: bool = True

    def context(self) -> ValidationContext:
        return ValidationContext(
            existing_names=self.existing_names,
            priority_classes=set(self.priority_classes) if self.priority_classes is not None
            else None,
            pvc_names=set(self.pvcs) if self.pvcs is not None else None,
            local_queues=set(self.local_queues) if self.local_queues else None,
            workload_priorities=set(self.workload_priorities)
            if self.workload_priorities is not None else None,
            limit_ranges=self.limit_ranges)


def workload_priority_values(items: list[dict] | None) -> dict[str, int] | None:
    """name -> value of Kueue's WorkloadPriorityClasses (None stays None: unknown)."""
    if items is None:
        return None
    return {str((i.get("metadata") or {}).get("name") or ""): int(i.get("value") or 0)
            for i in items}


def readable(call: Callable[[], T], default: T) -> T:
    """A list the person may not be allowed to read: `default` (unknown) when refused."""
    try:
        return call()
    except errors.Forbidden:
        return default


def object_names(items: list[dict]) -> list[str]:
    return sorted(str((i.get("metadata") or {}).get("name", "")) for i in items)


def name_taken(client: ClusterClient, namespace: str, name: str,
               kind: JobKind | None = None) -> bool:
    """Is there a job of `kind` (the default kind if None) called `name` in the project?
    One get, however many jobs the project holds (unknown, when the person may not read
    it, counts as free: creating says)."""
    if not name:
        return False
    try:
        client.get_job(kind or default_kind(), namespace, name)
    except (errors.NotFound, errors.Forbidden, errors.Invalid):
        return False
    return True


def read_project_facts(client: ClusterClient, namespace: str, visible: bool = True,
                       name: str = "", kind: JobKind | None = None) -> ProjectFacts:
    """The project's facts as `client` may read them (`visible` False: only the cluster's
    priority classes, for a project the person cannot see); `name`: the job's (of `kind`), checked
    with one get (`existing_names` holds it when it is taken)."""
    facts = ProjectFacts(namespace=namespace, visible=visible)
    classes = readable(client.list_priority_classes, None)
    facts.priority_classes = object_names(classes) if classes is not None else None
    if not visible:
        return facts
    facts.existing_names = {name} if name_taken(client, namespace, name, kind) else set()
    pvcs = readable(lambda: client.list_pvcs(namespace), None)
    facts.pvcs = object_names(pvcs) if pvcs is not None else None
    facts.local_queues = object_names(readable(lambda: client.list_local_queues(namespace), []))
    if facts.local_queues:
        facts.workload_priorities = workload_priority_values(
            readable(client.list_workload_priority_classes, None))
    facts.limit_ranges = readable(lambda: client.list_limit_ranges(namespace), [])
    quotas = readable(lambda: client.list_quotas(namespace), None)
    facts.quotas_readable = quotas is not None
    facts.quotas = quotas or []
    return facts


@dataclass
class Preflight:
    """The wizard's verdict on a spec in its project."""

    findings: list[FieldError]
    fit: FitReport
    facts: ProjectFacts
    nodes_readable: bool

    @property
    def errors(self) -> list[FieldError]:
        return [f for f in self.findings if f.is_error]

    @property
    def warnings(self) -> list[FieldError]:
        return [f for f in self.findings if not f.is_error]

    @property
    def never_fits(self) -> bool:
        """No node can hold a Worker, the LimitRange refuses its pods, or a quota is
        smaller than the whole job: created as it is, it would never start."""
        return self.fit.never_fits

    @property
    def waits(self) -> bool:
        """It fits the cluster but not the quota's (or the nodes') room now: it will wait,
        Pending."""
        return not self.fit.fits and not self.fit.never_fits

    @property
    def capacity_note(self) -> str:
        """What the check could not see, in words ("" when it saw the nodes' room now)."""
        if self.fit.room_checked:
            return ""
        if not self.nodes_readable:
            return _("Free node capacity was not checked: you may not list the cluster's "
                     "nodes, so whether a node is large enough for a Worker, and whether the "
                     "nodes have room for the whole job now, is not known.")
        return _("Free node capacity was not checked: you may not list every pod of the "
                 "cluster, so whether the nodes have room for the whole job now is not known.")

    @property
    def verdict(self) -> str:
        """The resource check in one sentence, as the wizard says it (its problems,
        `fit.waiting_note` and `fit.fixes` say the rest)."""
        fit = self.fit
        if fit.count_quota_full:
            return _("The quota on the number of jobs is full: the cluster refuses to create "
                     "it.")
        if fit.never_fits:
            return _("This job can never start as it is.")
        if not fit.fits:
            return _("The job does not fit right now.")
        if fit.room_checked:
            return _("Fits: the project's quota and the cluster's nodes have room for this "
                     "job.")
        return _("It fits the project's quota; free node capacity was not checked.")


def offer_queue(fit: FitReport, spec: JobSpec, local_queues: list[str] | None) -> None:
    """A job that waits for room in a project with a Kueue LocalQueue is offered the queue
    first: without it its Workers start one by one and hold GPUs while the rest wait; the
    queue starts the whole job at once. Not for a full quota on the number of jobs (a queued
    job is a job object too), nor a job that names a queue already."""
    queues = sorted(local_queues or [])
    if fit.fits or fit.never_fits or fit.count_quota_full or not queues or spec.queue_name:
        return
    queue = DEFAULT_QUEUE if DEFAULT_QUEUE in queues else queues[0]
    fit.fixes.insert(0, Fix(_("Queue it in %(queue)s: Kueue starts the whole job at once")
                            % {"queue": queue}, {"queue_name": queue}))


def may_create(client: ClusterClient, namespace: str, kind: JobKind | None = None) -> None:
    """Forbidden, in plain words, unless the person may create jobs of `kind` (the default
    kind if None) in `namespace`."""
    kind = kind or default_kind()
    if not client.can_i("create", kind.plural, kind.group, namespace):
        raise errors.Forbidden(_("You may not create %(kinds)s in %(project)s: ask the "
                                 "project's administrator for the edit role, or choose "
                                 "another project.") % {"project": namespace,
                                                        "kinds": kind.plural_label},
                               status=403, namespace=namespace)


def preflight(client: ClusterClient, spec: JobSpec) -> Preflight:
    """Validation and the resource check of `spec` in its namespace, with what `client`
    may read (NotServed first if the cluster lacks the kind's API, then Forbidden if the
    person may not create jobs of its kind there; the kind's checks against the cluster,
    its runtime for a TrainJob, are findings as the rest). Nodes are read
    with the same credentials: where they are refused (people usually may not list nodes),
    the check covers quotas and LimitRanges only."""
    model = spec.kind.spec_model
    # what the kind needs of the cluster first (its API served: errors.NotServed)
    against_cluster = [f for rule in (model.cluster_rules if model else ())
                       for f in rule(client, spec)]
    may_create(client, spec.namespace, spec.kind)
    facts = read_project_facts(client, spec.namespace, name=spec.name, kind=spec.kind)
    nodes = readable(client.list_nodes, None)
    # the nodes' room now needs every pod of the cluster: an administrator's view
    pods = readable(client.list_pods, None) if nodes else None
    room = room_now(nodes or [], pods) if pods is not None else None
    findings = validate_spec(spec, facts.context()) + against_cluster
    fit = check_fit(spec, facts.quotas, facts.limit_ranges, nodes or [], spec.namespace,
                    room=room)
    offer_queue(fit, spec, facts.local_queues)
    return Preflight(findings=findings, fit=fit, facts=facts, nodes_readable=nodes is not None)
