"""Reading what a diagnosis needs, with one person's credentials, bounded in time.

What is read depends on the job's state, so a healthy job costs next to nothing:

- a pod failed or restarts, or the job failed: the Launcher's (or master's) log tail,
  its previous run's when it restarted, and a failed pod's own tail;
- Running: the Launcher's (or master's) last 200 lines with timestamps (possible hang),
  and the GPUs' utilization over the last 10 minutes (Prometheus);
- an MPIJob that failed or waits: the project's ResourceQuotas and LimitRanges (for fixes
  that fit), and for one that failed its NetworkPolicies (MPI communication);
- a pod OOMKilled: its peak memory (Prometheus);
- a pod that cannot pull its image: the project's image pull secrets (names only);
- a volume problem: the project's PersistentVolumeClaims;
- waiting for GPUs: the project's running jobs that hold GPUs, with their time left.

Every read has a short timeout and the whole gathering a budget (`budget` seconds): what
is refused (403), missing or too slow is left out and named in `Facts.unread`, so the
diagnosis says what it did not see instead of failing. The host may hand in what it reads
better itself (`Sources`): the nodes (the dashboard reads them with its service account),
the cluster's free GPUs, similar successful runs from its history, dismissed hints.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.diagnosis.evidence import ghosts, kept_on_job, kept_tails
from odh.training.diagnosis.facts import Facts, GpuHolder, LogTail, SimilarRun, Usage
from odh.training.i18n import _
from odh.training.kinds import KINDS
from odh.training.logs.progress import parse_progress, progress_source
from odh.training.metrics.prometheus import PrometheusClient
from odh.training.metrics.promql import ENGINE_ACTIVE, GPU_UTIL, JobQueries, quote
from odh.training.metrics.series import gpu_scale, parse_vector
from odh.training.status.pods import PULL_REASONS, ReplicaState
from odh.training.status.summarize import summarize
from odh.training.status.summary import JobStatus, JobSummary

log = logging.getLogger("odh.training.diagnosis")

TIMEOUT = (2.0, 4.0)            # connect, read: each call
BUDGET_SECONDS = 6.0            # all reads together
FAILED_TAIL = 120
RUNNING_TAIL = 200
GPU_WINDOW_SECONDS = 600
MAX_HOLDERS = 5                 # running jobs whose time left is read
PULL_SECRET_TYPE = "kubernetes.io/dockerconfigjson"  # noqa: S105 (a type, not a secret)
_VOLUME_WORDS = ("persistentvolumeclaim", "PersistentVolumeClaim", "MountVolume",
                 'secret "', 'configmap "', "couldn't find key")


@dataclass
class Sources:
    """What the host reads better itself; None: read it here with the person's client."""

    prometheus: PrometheusClient | None = None
    nodes: list[dict] | None = None
    free_gpus: int | None = None        # on the whole cluster
    allocated_gpus: int | None = None   # requested by running pods, the whole cluster
    similar: Callable[[], list[SimilarRun]] | None = None
    dismissed: frozenset[str] = frozenset()
    read_nodes: bool = True             # try listing nodes with the person's client
    hang_after_seconds: float | None = None
    # only what the headline rests on (the job list's line): logs, and the nodes and free
    # GPUs handed in; not the quotas, policies, secrets, claims or other jobs that make the
    # evidence and fixes of the full diagnosis
    brief: bool = False
    # log tails already read (current runs, with timestamps), by pod name: not read again
    logs: dict[str, str] = field(default_factory=dict)


@dataclass
class _Budget:
    seconds: float
    start: float = field(default_factory=time.monotonic)

    @property
    def remaining(self) -> float:
        return self.seconds - (time.monotonic() - self.start)

    @property
    def left(self) -> bool:
        return self.remaining > 0.2


class _Reader:
    def __init__(self, client: ClusterClient, namespace: str, budget: _Budget,
                 unread: list[str]) -> None:
        self.client = client
        self.namespace = namespace
        self.budget = budget
        self.unread = unread

    def note(self, text: str) -> None:
        if text not in self.unread:
            self.unread.append(text)

    def read(self, what: str, call: Callable[[], object], elsewhere: bool = False):
        """`call()`, or None (and a note) when refused, gone, failing or out of time.
        `elsewhere`: not the cluster's API (Prometheus), whose 401 is not a sign-in that
        expired but one more thing not seen."""
        if not self.budget.left:
            self.note(_("%(what)s (no time left to read it)") % {"what": what})
            return None
        # no call may outlast the budget (a read that takes longer is cut)
        remaining = self.budget.remaining
        self.client.timeout = (min(TIMEOUT[0], remaining), min(TIMEOUT[1], remaining))
        try:
            return call()
        except errors.Unauthorized:
            if not elsewhere:
                raise
            self.note(_("%(what)s (it did not accept your sign-in)") % {"what": what})
        except errors.Forbidden:
            self.note(_("%(what)s (you may not read it)") % {"what": what})
        except errors.NotFound:
            return None
        except errors.ClusterError as e:
            log.info("diagnosis: %s not read: %s", what, e.message)
            self.note(_("%(what)s (the cluster did not answer: %(reason)s)")
                      % {"what": what, "reason": e.message[:120]})
        return None


def _log_targets(summary: JobSummary) -> list[tuple[ReplicaState, bool, int]]:
    """(pod, previous run, tail lines) to read."""
    source = progress_source(summary.replicas)
    source = source if isinstance(source, ReplicaState) and source.exists else None
    troubled = [r for r in summary.replicas if r.exists and (r.problem or r.restarts)]
    targets: list[tuple[ReplicaState, bool, int]] = []
    failed = summary.status == JobStatus.FAILED
    if source is not None and (failed or troubled or summary.status == JobStatus.RUNNING):
        if source.status in ("Running", "Failed", "Succeeded") or source.exit_code is not None:
            targets.append((source, False, RUNNING_TAIL if not failed else FAILED_TAIL))
        if source.restarts:
            targets.append((source, True, FAILED_TAIL))
    for replica in troubled:
        if replica is source or replica.reason in ("OOMKilled", "Evicted") \
                or replica.reason in PULL_REASONS or replica.reason == "Unschedulable":
            continue
        if replica.restarts:
            targets.append((replica, True, 40))
        elif replica.exit_code not in (None, 0):
            targets.append((replica, False, 60))
    return targets[:4]


def _read_logs(reader: _Reader, summary: JobSummary, pods: list[dict],
               prefetched: dict[str, str]) -> dict[str, LogTail]:
    containers = {str((p.get("metadata") or {}).get("name")): [
        str(c.get("name", "")) for c in (p.get("spec") or {}).get("containers") or []]
        for p in pods}
    tails: dict[str, LogTail] = {}
    for replica, previous, lines in _log_targets(summary):
        if not previous and replica.name in prefetched:
            tails[replica.name] = LogTail.from_text(replica.name, prefetched[replica.name])
            continue
        container = (containers.get(replica.name) or [""])[0] or None
        what = _("the log of %(pod)s") % {"pod": replica.label}
        text = reader.read(what, lambda r=replica, c=container, p=previous, n=lines:
                           reader.client.read_log(reader.namespace, r.name, container=c,
                                                  tail_lines=n, timestamps=True, previous=p))
        if text is None:
            continue
        # a restarted pod's previous run is keyed by its name when its current run is not
        # read, else "<name>#previous"
        key = f"{replica.name}#previous" if previous and replica.name in tails else replica.name
        tails[key] = LogTail.from_text(replica.name, str(text), previous)
    return tails


def _prometheus_usage(reader: _Reader, prometheus: PrometheusClient, summary: JobSummary,
                      now: datetime) -> Usage | None:
    usage = Usage()
    what = _("the metrics from Prometheus")
    victims = [r for r in summary.replicas if r.reason == "OOMKilled"]
    for victim in victims[:2]:
        end = victim.finished or now
        start = victim.started or summary.started or end
        window = max(300, int((end - start).total_seconds()) + 60)
        promql = (f"max(max_over_time(container_memory_working_set_bytes{{namespace="
                  f"{quote(summary.namespace)},pod={quote(victim.name)},container!=\"\","
                  f"container!=\"POD\"}}[{window}s]))")
        result = reader.read(what, lambda q=promql, t=end: prometheus.query(
            q, summary.namespace, at=t.timestamp()), elsewhere=True)
        values = parse_vector(result or [])
        if values:
            usage.memory_peak[victim.name] = values[0][1]
    if summary.status == JobStatus.RUNNING and summary.gpus:
        queries = JobQueries(summary.namespace, summary.kind, summary.name)
        for metric in (ENGINE_ACTIVE, GPU_UTIL):
            promql = queries.gpu_util_average(metric, f"{GPU_WINDOW_SECONDS}s")
            result = reader.read(what, lambda q=promql: prometheus.query(
                q, summary.namespace, at=now.timestamp()), elsewhere=True)
            if result is None:
                usage.gpu_unread = True
                break
            samples = parse_vector(result, gpu_scale(metric))
            if samples:
                usage.gpu_util = sum(v for _labels, v in samples) / len(samples)
                running = (now - summary.started).total_seconds() if summary.started else 0
                usage.gpu_util_seconds = min(GPU_WINDOW_SECONDS, max(0.0, running))
                break
    return usage


def _holders(reader: _Reader, summary: JobSummary, now: datetime) -> list[GpuHolder] | None:
    """The project's running jobs that hold GPUs, with their time left when their log
    tells (at most MAX_HOLDERS logs are read)."""
    from odh.training.status.queries import list_summaries
    listing = reader.read(_("the other jobs of the project"), lambda: list_summaries(
        reader.client, [summary.namespace], list(KINDS.values()), now))
    if listing is None:
        return None
    running = [s for s in listing.summaries if s.status == JobStatus.RUNNING and s.gpus
               and s.uid != summary.uid]
    running.sort(key=lambda s: -s.gpus)
    holders = []
    for index, other in enumerate(running):
        eta = None
        source = progress_source(other.replicas)
        if other.reported_progress is not None:  # as the job reports it: no log to read
            eta = other.reported_progress.eta_at(now)
        elif index < MAX_HOLDERS and isinstance(source, ReplicaState) and source.exists:
            text = reader.read(_("the progress of the jobs holding GPUs"), lambda s=source, o=other:
                               reader.client.read_log(o.namespace, s.name, tail_lines=200,
                                                      timestamps=True))
            if text is not None:
                progress = parse_progress(str(text).splitlines())
                eta = progress.eta_at(now) if progress else None
        holders.append(GpuHolder(other.namespace, other.name, other.kind.slug, other.gpus, eta))
    return holders


def _count_free_gpus(reader: _Reader, facts: Facts, sources: Sources) -> None:
    """The cluster's free GPUs, when this person may list every pod (an administrator)."""
    from odh.training.capacity.allocation import cluster_capacity
    pods = reader.read(_("the cluster's free GPUs"), reader.client.list_pods)
    if pods is None:
        return
    capacity = cluster_capacity(facts.nodes or [], pods)
    facts.free_gpus = int(capacity.gpus.free)
    sources.allocated_gpus = int(capacity.gpus.requested)


def gather(client: ClusterClient, job: dict, pods: list[dict], events: list[dict], *,
           now: datetime | None = None, sources: Sources | None = None,
           budget: float = BUDGET_SECONDS, summary: JobSummary | None = None) -> Facts:
    """The facts for `diagnose`, read with `client` (the person's own)."""
    now = now or datetime.now(UTC)
    sources = sources or Sources()
    facts = Facts(job, pods, events, now=now, summary=summary, dismissed=sources.dismissed)
    if sources.hang_after_seconds is not None:
        facts.hang_after_seconds = sources.hang_after_seconds
    s = facts.s
    if s.status in (JobStatus.SUCCEEDED, JobStatus.SUSPENDED):
        return facts
    kept = kept_on_job(job)
    gone = ghosts(pods, kept)
    if gone:  # the pods the watcher kept on the job count as its pods, as they were
        tails = kept_tails(pods, kept)
        pods = pods + gone
        facts = Facts(job, pods, events, now=now, dismissed=sources.dismissed,
                      summary=summarize(job, pods, events, s.observed_at, s.layout))
        if sources.hang_after_seconds is not None:
            facts.hang_after_seconds = sources.hang_after_seconds
        s = facts.s
        sources = dataclasses.replace(sources, logs={**tails, **sources.logs})
    saved_timeout = client.timeout
    client.timeout = TIMEOUT
    reader = _Reader(client, s.namespace, _Budget(budget), facts.unread)
    try:
        _gather(reader, facts, sources)
    finally:
        client.timeout = saved_timeout
    return facts


def _gather(reader: _Reader, facts: Facts, sources: Sources) -> None:
    s, ns, client = facts.s, facts.s.namespace, reader.client
    failed = s.status == JobStatus.FAILED
    troubled = [r for r in s.replicas if r.exists and (r.problem or r.restarts)]
    unscheduled = [r for r in s.replicas if r.reason == "Unschedulable"]
    if failed or troubled or s.status == JobStatus.RUNNING:
        facts.logs = _read_logs(reader, s, facts.pods, sources.logs)
    mpijob = s.kind.creatable  # its spec is read: quotas and LimitRanges are weighed
    waiting = s.status == JobStatus.PENDING
    if sources.brief:
        facts.nodes = sources.nodes
        facts.free_gpus = sources.free_gpus if unscheduled else None
        return
    if mpijob and (failed or waiting or any(r.reason == "OOMKilled" for r in troubled)):
        facts.quotas = reader.read(_("the project's quotas"), lambda: client.list_quotas(ns))
        facts.limit_ranges = reader.read(_("the project's LimitRanges"),
                                         lambda: client.list_limit_ranges(ns))
    if sources.nodes is not None:
        facts.nodes = sources.nodes
    elif sources.read_nodes and (failed or waiting or unscheduled):
        facts.nodes = reader.read(_("the cluster's nodes"), client.list_nodes)
    if mpijob and (failed or any(r.restarts for r in s.replicas if r.role == "Launcher")):
        facts.network_policies = reader.read(_("the project's NetworkPolicies"),
                                             lambda: client.list_network_policies(ns))
    if any(r.reason in PULL_REASONS for r in troubled):
        secrets = reader.read(_("the project's image pull secrets"),
                              lambda: client.list_secret_names(ns, PULL_SECRET_TYPE))
        facts.pull_secrets = sorted(secrets) if secrets is not None else None
    texts = [r.message for r in s.replicas] + [str(e.get("message") or "")
                                              for e in facts.events]
    if any(word in text for text in texts for word in _VOLUME_WORDS):
        facts.pvcs = reader.read(_("the project's volume claims"), lambda: client.list_pvcs(ns))
    if mpijob and any('secret "' in text for text in texts):
        facts.secret_keys = reader.read(_("the project's Secrets"),
                                        lambda: client.list_secret_keys(ns))
    if sources.prometheus is not None and (
            s.status == JobStatus.RUNNING or any(r.reason == "OOMKilled" for r in s.replicas)):
        facts.usage = _prometheus_usage(reader, sources.prometheus, s, facts.now)
    if unscheduled and any(r.gpus for r in unscheduled):
        facts.free_gpus = sources.free_gpus
        if facts.free_gpus is None and sources.read_nodes and facts.nodes is not None:
            _count_free_gpus(reader, facts, sources)
        facts.gpu_holders = _holders(reader, s, facts.now)
        if sources.allocated_gpus is not None and facts.gpu_holders is not None:
            visible = sum(h.gpus for h in facts.gpu_holders)
            placed = sum(r.gpus for r in s.replicas if r.exists and r.scheduled)
            facts.hidden_gpus = max(0, sources.allocated_gpus - visible - placed)
    if sources.similar is not None and (failed or troubled):
        facts.similar = sources.similar()



def diagnose_job(client: ClusterClient, kind, namespace: str, name: str, *,
                 sources: Sources | None = None, now: datetime | None = None):
    """(the job's detail, its diagnosis or None), read with `client`: what the SDK's
    `TrainingClient.diagnose` and `odh training describe` say."""
    from odh.training.diagnosis import diagnose
    from odh.training.status.queries import job_detail
    detail = job_detail(client, kind, namespace, name, now)
    facts = gather(client, detail.job, detail.pods, detail.events, now=now, sources=sources,
                   summary=detail.summary)
    return detail, diagnose(facts)


def wants_telling(summary: JobSummary) -> bool:
    """Jobs whose story may be the diagnosis': failed, waiting, or a pod in trouble (a
    running job with none says what it does, and costs no read)."""
    return summary.status in (JobStatus.FAILED, JobStatus.PENDING) or any(
        r.exists and (r.problem or r.restarts) for r in summary.replicas)


def tell_listing(client: ClusterClient, listing, budget: float = BUDGET_SECONDS) -> dict:
    """Each listed job's story (odh.training.diagnosis.story), by "<ns>/<kind slug>/<name>", as the
    dashboard's job list tells it: the diagnosis from the job, its pods, its events and its
    pods' log tails (what the headline rests on; `Sources.brief`), and where the jobs Kueue
    holds stand in their queues. One list of events per project with such jobs; `budget`
    seconds in all, a job not reached by then says its step."""
    from odh.training.diagnosis import diagnose
    from odh.training.diagnosis.story import tell
    from odh.training.queues.standing import queued_lines
    from odh.training.status.queries import job_events
    from odh.training.status.summarize import summarize
    start = time.monotonic()
    wanted = [s for s in listing.summaries if wants_telling(s)]
    events: dict[str, list[dict] | None] = {}
    for namespace in sorted({s.namespace for s in wanted}):
        try:
            events[namespace] = client.list_events(namespace)
        except errors.ClusterError:
            events[namespace] = None
    diagnosed: dict[str, tuple[JobSummary, object]] = {}
    for s in wanted:
        left = budget - (time.monotonic() - start)
        job, pods = listing.objects.get((s.namespace, s.kind.slug, s.name), ({}, []))
        if not job or left < 0.5:
            continue
        mine = job_events(s.kind, job, pods, events.get(s.namespace) or [])
        summary = summarize(job, pods, mine, s.observed_at, s.layout)
        facts = gather(client, job, pods, mine, summary=summary, budget=min(left, 3.0),
                       sources=Sources(brief=True, read_nodes=False))
        diagnosed[f"{s.namespace}/{s.kind.slug}/{s.name}"] = (summary, diagnose(facts))
    try:
        queued = queued_lines(client, [(s.kind, s.namespace, s.name, s.uid, s.queue)
                                       for s in listing.summaries if s.held_by_queue])
    except errors.ClusterError:
        queued = {}
    told = {}
    for s in listing.summaries:
        ref = f"{s.namespace}/{s.kind.slug}/{s.name}"
        summary, diagnosis = diagnosed.get(ref, (s, None))
        told[ref] = tell(summary, diagnosis, queued.get(ref))
    return told
