"""The watch hub's watches and the index they feed.

With the dashboard's service-account credentials `Watching` keeps one `ResilientWatch`
(odh/training/cluster/watch.py) per training job kind the cluster serves (MPIJob,
PyTorchJob, TFJob, TrainJob), one of pods per label naming their job (`training.kubeflow.org/
job-name`, a JobSet's `jobset.sigs.k8s.io/jobset-name`), one of
events (only those that may concern a training job are kept) and one of resource quotas,
all feeding a `JobIndex` (odh/training/status/jobindex.py). Each change tells the hub which
jobs it may touch (`changed`, the hub's coalescing: hub.py), a change of a job object as one
that may move the job's status; jobs, their pods and quotas tell the admin overview too.

Apart from those, and not waited for by the hub's readiness: the pods of no training job
(only their requests kept, for the overview's sums), Kueue's Workloads where the cluster
serves Kueue (any change tells the queue pages), and the objects the kinds leave their
jobs' layout to (a TrainJob's runtime: `JobKind.layout_resources`).

The watches are opened on a thread of their own (`background.Background`), once the
cluster's APIs say which kinds it serves (asked until it answers). `sees_cluster`,
`last_heard` and `reconnect` are what the hub's status and probe ask of the watches.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from odh.training.capacity.allocation import held_part
from odh.training.cluster.client import ClusterClient
from odh.training.cluster.compact import compact
from odh.training.cluster.jobcalls import other_pods_selector
from odh.training.cluster.watch import ResilientWatch, WatchedResource
from odh.training.kinds import JobKind, pod_job_labels
from odh.training.status.jobindex import JobIndex, may_concern_training_job
from training.live.hub.background import Background
from training.live.hub.keepers.evidence import EvidenceKeeper
from training.live.hub.pushing import uid_of

log = logging.getLogger("training.live.hub")

WATCH_TIMEOUT_SECONDS = 290  # the server ends each watch after ~5 min; it is opened again

# the pods of training jobs: one watch per label the kinds' pods name their job by ("pods":
# the Training and MPI Operators', "pods-jobset.sigs.k8s.io": a JobSet's)
POD_WATCHES = tuple(
    WatchedResource("pods", label_selector=label,
                    title="pods" if i == 0 else f"pods-{label.split('/')[0]}")
    for i, label in enumerate(pod_job_labels()))
EVENTS = WatchedResource("events")
QUOTAS = WatchedResource("resourcequotas")
# the pods of no training job: only their requests are kept, added up for the overview
OTHER_PODS = WatchedResource("pods", label_selector=other_pods_selector())
# Kueue's Workloads, where the cluster serves Kueue: any change tells the queue pages
WORKLOADS = WatchedResource("workloads", "kueue.x-k8s.io", "v1beta1")


def job_resource(kind: JobKind) -> WatchedResource:
    return WatchedResource(kind.plural, kind.group, kind.version)


class Watching(Background):
    """The watches, opened on the `hub-start` thread, and the index they feed.

    `changed(keys, may_move_status=False)`: the jobs a change may touch (the hub's `_mark`);
    `opened()`: the job watches are open; `cluster_changed()` / `queues_changed()`: the
    admin overview's and the queue pages' notices."""

    name = "hub-start"

    def __init__(self, client_factory: Callable[[], ClusterClient], *,
                 changed: Callable[..., None],
                 opened: Callable[[], None],
                 cluster_changed: Callable[[], None],
                 queues_changed: Callable[[], None],
                 evidence: EvidenceKeeper | None = None,
                 refresh_client_factory: Callable[[], ClusterClient] | None = None,
                 watch_timeout: int = WATCH_TIMEOUT_SECONDS) -> None:
        super().__init__()
        self.client_factory = client_factory
        # after a 401, the watches ask this one for a client with the credentials read again
        self.refresh_client_factory = refresh_client_factory or client_factory
        self.changed = changed
        self.opened = opened
        self.cluster_changed = cluster_changed
        self.queues_changed = queues_changed
        # each failed run of a job's container, kept before the cluster deletes it
        self.evidence = evidence
        self.watch_timeout = watch_timeout
        self.index = JobIndex()
        self.watches: list[ResilientWatch] = []
        self.kinds: list[JobKind] = []
        self.queue_watch: ResilientWatch | None = None
        self.other_pods_watch: ResilientWatch | None = None
        self.layout_watches: list[ResilientWatch] = []
        self._discovery_failing = False

    # -- life ---------------------------------------------------------------------------------
    def stop(self, timeout: float = 10.0) -> None:
        """Stop every watch (all told at once, then waited for), the opening thread, then
        the watches apart (which that thread opens last)."""
        self._stop.set()
        for w in list(self.watches):
            w.stop(timeout=0)
        for w in list(self.watches):
            w.stop(timeout=timeout)
        super().stop(timeout)
        for extra in (self.queue_watch, self.other_pods_watch, *self.layout_watches):
            if extra is not None:
                extra.stop(timeout=timeout)

    def sees_cluster(self) -> bool:
        """Whether the watches learn of changes now: some watch is not failing (a watch that
        is refused for good, e.g. one kind forbidden, does not make the hub blind), or,
        before the watches are open, the cluster's APIs could be read."""
        watches = list(self.watches)
        if watches:
            return not all(w.failing for w in watches)
        return not self._discovery_failing

    def last_heard(self) -> float:
        """When any watch last heard from the API server (time.monotonic())."""
        return max((w.heard_at for w in list(self.watches)), default=0.0)

    def reconnect(self) -> None:
        for w in list(self.watches):
            w.reconnect()

    # -- opening ------------------------------------------------------------------------------
    def _served_kinds(self) -> list[JobKind]:
        """The training job kinds the cluster serves, asked until it answers."""
        delay = 0.5
        while not self.stopping:
            try:
                with self.client_factory() as client:
                    kinds = client.served_kinds()
                self._discovery_failing = False
                return kinds
            except Exception as e:  # the cluster may not be reachable yet
                self._discovery_failing = True
                log.warning("watch hub: cannot read the cluster's APIs (%s); retrying in %.0fs",
                            e, delay)
                if self.wait(delay):
                    break
                delay = min(delay * 2, 30.0)
        return []

    def run(self) -> None:
        self.kinds = self._served_kinds()
        if self.stopping:
            return
        # kept compact (odh/training/cluster/compact.py: shared strings; pods, Events and quotas
        # without managedFields, jobs as read): one copy, held by the watch and the index
        job_compact = functools.partial(compact, keep_managed_fields=True)
        watches = [(job_resource(k), self._job_handler(k), None, job_compact)
                   for k in self.kinds]
        watches += [(pods, self._pod_handler, None, compact) for pods in POD_WATCHES]
        watches += [(EVENTS, self._handler("events"), may_concern_training_job, compact),
                    (QUOTAS, self._handler("quotas"), None, compact)]
        for resource, handler, keep, transform in watches:
            w = ResilientWatch(self.client_factory(), resource, handler, keep=keep,
                               timeout_seconds=self.watch_timeout,
                               client_factory=self.refresh_client_factory,
                               transform=transform)
            self.watches.append(w)
            w.start()
        log.info("watch hub: watching %s", ", ".join(w.resource.name for w in self.watches))
        self.opened()
        self._watch_other_pods()
        self._watch_workloads()
        self._watch_layouts()

    def _watch_layouts(self) -> None:
        """What the kinds leave their jobs' layout to (a TrainJob's runtime: whether it runs
        a Launcher, and as one of its nodes): apart from the job watches (readiness does
        not wait for it; a job whose runtime the hub may not read shows the pods its spec
        asks for), each change telling the jobs that name the object."""
        for group, version, plural in dict.fromkeys(
                r for k in self.kinds for r in k.layout_resources()):
            def handle(etype: str, obj: dict, group: str = group, plural: str = plural
                       ) -> None:
                self.changed(self.index.apply_layout(group, plural, etype, obj))
            watch = ResilientWatch(self.client_factory(), WatchedResource(plural, group, version),
                                   handle, timeout_seconds=self.watch_timeout,
                                   client_factory=self.refresh_client_factory)
            self.layout_watches.append(watch.start())

    def _watch_other_pods(self) -> None:
        """The pods of no training job, for the admin overview's sums only: apart from the
        job watches (readiness does not wait for it; until it has listed, the overview
        lists those pods itself), kept as `allocation.held_part`."""
        watch = ResilientWatch(self.client_factory(), OTHER_PODS, self._other_pod,
                               timeout_seconds=self.watch_timeout,
                               client_factory=self.refresh_client_factory,
                               transform=held_part)
        self.other_pods_watch = watch.start()

    def _other_pod(self, etype: str, obj: dict) -> None:
        self.index.apply("other-pods", etype, obj)
        self.cluster_changed()

    def _watch_workloads(self) -> None:
        """Kueue's Workloads, if the cluster serves Kueue and the hub may watch them: apart
        from the job watches (readiness does not wait for it; without it the queue pages
        fall back to fetching themselves now and then)."""
        try:
            with self.client_factory() as client:
                if client.list_cluster_queues() is None:
                    return  # no Kueue here
        except Exception as e:  # refused, or the cluster away: the pages poll instead
            log.info("watch hub: not watching Kueue's Workloads (%s)", e)
            return
        watch = ResilientWatch(self.client_factory(), WORKLOADS,
                               lambda _etype, _obj: self.queues_changed(),
                               timeout_seconds=self.watch_timeout,
                               client_factory=self.refresh_client_factory)
        self.queue_watch = watch.start()
        log.info("watch hub: watching %s", WORKLOADS.name)

    # -- what each watch sees -----------------------------------------------------------------
    def _job_handler(self, kind: JobKind) -> Callable[[str, dict], None]:
        def handle(etype: str, obj: dict) -> None:
            self.changed(self.index.apply("jobs", etype, obj, kind), may_move_status=True)
            self.cluster_changed()
        return handle

    def _pod_handler(self, etype: str, obj: dict) -> None:
        before = self.index.pod(uid_of(obj)) if self.evidence is not None else None
        keys = self.index.apply("pods", etype, obj)
        self.changed(keys)
        self.cluster_changed()
        if self.evidence is not None and keys:
            job = self.index.job_object(sorted(keys)[0])
            self.evidence.saw(before, None if etype == "DELETED" else obj, job)

    def _handler(self, what: str) -> Callable[[str, dict], None]:
        def handle(etype: str, obj: dict) -> None:
            self.changed(self.index.apply(what, etype, obj))
            if what in ("pods", "quotas"):
                self.cluster_changed()
        return handle
