"""The administrator's view of the cluster: capacity and use, quotas, waiting jobs.

Pure arithmetic over API objects as the API returns them (dicts), so the admin overview,
the SDK and tests compute the same numbers. Each part has its own module; this one puts
them together and re-exports their names:

- `cluster_capacity(nodes, pods)` (odh.training.capacity.allocation): GPUs by model (the node label
  `nvidia.com/gpu.product`), CPUs and memory: what the nodes can allocate against what the
  pods bound to them request (pods not yet finished; requests as the scheduler counts them),
  added up by node and project in `Holdings`.
- `project_rows(quotas, pods, jobs)` (odh.training.overviews.projects): per project, jobs running
  and pending, GPUs in use and each ResourceQuota's use (hard/used/ratio,
  `count/mpijobs.kubeflow.org` included), most pressed first; a row is flagged when any
  quota is at 90% or more.
- `jobs_by_kind(jobs)` (odh.training.overviews.outcomes): how many jobs of each type are in each
  status.
- `waiting_jobs(jobs, now)` (odh.training.diagnosis.waiting): Pending and Suspended jobs, why they
  wait (quota, not enough GPUs or other resources on any node, queued by Kueue, suspended)
  and for how long.
- `success_rates(records, now)` (odh.training.overviews.outcomes): per job type, how many of the
  jobs that finished in the last 7 days succeeded (from history records, each counted once by
  uid).
- `cluster_queues(items)` (odh.training.queues.kueue): Kueue ClusterQueues' nominal quotas against
  their flavors' usage.

`overview(state, history)` computes them all; `read_cluster(client, kinds)` at the end
gathers the objects with one person's client (an administrator may list nodes, pods and
quotas cluster-wide); everything but it is free of I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from odh.training.capacity.allocation import (
    COMPUTE,
    GPU_PRODUCT_LABEL,
    TERMINAL_PHASES,
    Capacity,
    GpuModel,
    Holdings,
    ResourceUse,
    cluster_capacity,
    holds_node,
    pod_requests,
)
from odh.training.diagnosis import Diagnosis, Facts, diagnose
from odh.training.diagnosis.waiting import (
    WaitingJob,
    WaitReason,
    wait_reason,
    wait_reason_title,
    waiting_jobs,
)
from odh.training.kinds import JobKind
from odh.training.overviews.outcomes import (
    STATUSES,
    SUCCESS_WINDOW,
    HistoryRecord,
    KindCounts,
    SuccessRate,
    finished_records,
    jobs_by_kind,
    success_rates,
)
from odh.training.overviews.projects import (
    MPIJOB_COUNT,
    PRESSURE_FLAG,
    ProjectRow,
    QuotaUse,
    project_rows,
    quota_uses,
)
from odh.training.queues.kueue import ClusterQueueRow, QueueResource, cluster_queues
from odh.training.status.summary import JobStatus, JobSummary

if TYPE_CHECKING:
    from odh.training.cluster.client import ClusterClient

__all__ = [
    "COMPUTE", "GPU_PRODUCT_LABEL", "MPIJOB_COUNT", "PRESSURE_FLAG", "STATUSES",
    "SUCCESS_WINDOW", "TERMINAL_PHASES", "Capacity", "ClusterQueueRow", "ClusterState",
    "GpuModel", "HistoryRecord", "Holdings", "KindCounts", "Overview", "ProjectRow",
    "QueueResource",
    "QuotaUse", "ResourceUse", "SuccessRate", "WaitReason", "WaitingJob", "cluster_capacity",
    "cluster_queues", "finished_records", "holds_node", "jobs_by_kind", "overview",
    "pod_requests", "project_rows", "quota_uses", "read_cluster", "success_rates",
    "wait_reason", "wait_reason_title", "waiting_jobs",
]

Obj = dict[str, Any]


# -- everything at once -------------------------------------------------------------------------
@dataclass
class ClusterState:
    """What the overview is computed from, as read from the cluster."""

    nodes: list[Obj]
    pods: list[Obj]
    quotas: list[Obj]
    jobs: list[tuple[Obj, JobSummary]]
    kinds: list[JobKind]
    queues: list[Obj] | None  # None: the cluster has no Kueue
    observed_at: datetime
    # what most pods hold, already added up (the watch hub's running sums); `pods` are
    # then only the others, added to it
    holdings: Holdings | None = None
    # a job's own pods and events, for its diagnosis (the waiting table tells its story)
    parts: Callable[[Obj, JobSummary], tuple[list[Obj], list[Obj]]] | None = None
    # where the jobs Kueue holds stand ("Queued: 2 of 5 in gpu-queue"), by
    # "<ns>/<kind slug>/<name>" (odh.training.queues.standing.queued_lines)
    queued: dict[str, str] = field(default_factory=dict)

    def diagnosis_of(self, job: Obj, summary: JobSummary) -> Diagnosis | None:
        """What the diagnosis says of a job from its objects and the nodes (no logs, as
        every place that tells a waiting job's story can read)."""
        pods, events = self.parts(job, summary) if self.parts is not None else ([], [])
        return diagnose(Facts(job, pods, events, now=self.observed_at, summary=summary,
                              nodes=self.nodes or None))

    def all_holdings(self) -> Holdings:
        if self.holdings is None:
            return Holdings.of(self.pods)
        return self.holdings.plus(self.pods)


@dataclass
class Overview:
    capacity: Capacity
    projects: list[ProjectRow]
    jobs_by_kind: list[KindCounts]
    waiting: list[WaitingJob]
    success: list[SuccessRate]
    queues: list[ClusterQueueRow] | None
    observed_at: datetime

    @property
    def flagged_projects(self) -> list[ProjectRow]:
        return [p for p in self.projects if p.flagged]


def overview(state: ClusterState, history: Iterable[HistoryRecord] = ()) -> Overview:
    summaries = [s for _, s in state.jobs]
    now = state.observed_at
    records = list(history) + finished_records(summaries)
    holdings = state.all_holdings()
    return Overview(
        capacity=cluster_capacity(state.nodes, holdings),
        projects=project_rows(state.quotas, holdings, summaries),
        jobs_by_kind=jobs_by_kind(summaries, state.kinds),
        waiting=waiting_jobs(state.jobs, now, state.diagnosis_of, queued=state.queued),
        success=success_rates(records, now, kinds=[k.kind for k in state.kinds]),
        queues=cluster_queues(state.queues) if state.queues is not None else None,
        observed_at=now)


def read_cluster(client: ClusterClient, kinds: list[JobKind],
                 now: datetime | None = None) -> ClusterState:
    """Everything `overview` needs, read with `client` (an administrator's): nodes, every
    pod, every ResourceQuota, every job of `kinds`, the events of projects with waiting jobs
    (they say why), and Kueue's ClusterQueues when the cluster serves them."""
    from odh.training import errors
    from odh.training.status.pods import candidate_pods, group_pods_by_job
    from odh.training.status.queries import job_events
    from odh.training.status.summarize import summarize
    now = now or datetime.now(UTC)
    nodes = client.list_nodes()
    pods = client.list_pods()
    quotas = client.list_quotas_everywhere()
    raw_jobs: list[Obj] = []
    served: list[JobKind] = []
    for kind in kinds:
        try:
            items = client.list_jobs(kind)
        except errors.NotFound:
            continue  # this kind's API is not installed
        served.append(kind)
        raw_jobs.extend(items)
    # each job summarized with its own pods: grouped once (linear in pods and jobs)
    groups = group_pods_by_job(pods)
    kind_of = {(k.group, k.kind): k for k in served}

    def own_pods(job: Obj) -> list[Obj]:
        group = str(job.get("apiVersion") or "").split("/")[0]
        kind = kind_of.get((group, str(job.get("kind") or "")))
        return candidate_pods(kind, job, groups) if kind is not None else []

    jobs = [(job, summarize(job, own_pods(job), None, now)) for job in raw_jobs]
    # the reasons of waiting jobs (quota refusals, FailedScheduling) are in events
    waiting_ns = sorted({s.namespace for _, s in jobs if s.status == JobStatus.PENDING})
    events: dict[str, list[Obj]] = {}
    for namespace in waiting_ns:
        try:
            events[namespace] = client.list_events(namespace)
        except (errors.Forbidden, errors.NotFound):
            continue
    jobs = [(job, summarize(job, own_pods(job), events[s.namespace], now))
            if s.status == JobStatus.PENDING and s.namespace in events else (job, s)
            for job, s in jobs]

    def parts(job: Obj, summary: JobSummary) -> tuple[list[Obj], list[Obj]]:
        pods = own_pods(job)
        return pods, job_events(summary.kind, job, pods, events.get(summary.namespace, []))

    try:
        queues = client.list_cluster_queues()
    except errors.Forbidden:
        queues = None  # Kueue is there, but this person may not read its queues
    return ClusterState(nodes=nodes, pods=pods, quotas=quotas, jobs=jobs, kinds=served,
                        queues=queues, observed_at=now, parts=parts)
