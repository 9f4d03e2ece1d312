"""What the diagnosis reads besides the job's objects: the cluster's free GPUs (the
service account's view, counts only), similar runs from the history, Prometheus asked as
the person, and the evidence the watcher kept of pods the cluster no longer has."""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError

from odh.training import errors
from odh.training.capacity.allocation import cluster_capacity
from odh.training.diagnosis import SimilarRun
from odh.training.diagnosis.gather import Sources
from odh.training.kinds import default_kind, kind_for_object
from odh.training.metrics.prometheus import PrometheusClient
from odh.training.status.compare import similar_to
from odh.training.status.summary import JobStatus, JobSummary
from training.cluster import client_for_token
from training.wizard.checks import every_pod, get_nodes

log = logging.getLogger("training.diagnosis")
CAPACITY_KEY = "diagnosis:gpu-capacity"
CAPACITY_TTL = 15
PROMETHEUS_TIMEOUT = (1.0, 2.0)


_CAPACITY_LOCK = threading.Lock()


def gpu_capacity() -> tuple[int | None, int | None]:
    """(free, requested) GPUs of the whole cluster, from the service account's view of the
    nodes and pods (counts only; kept CAPACITY_TTL seconds)."""
    cached = cache.get(CAPACITY_KEY)
    if cached is not None:
        return tuple(cached)  # type: ignore[return-value]
    with _CAPACITY_LOCK:  # the list's threads ask at once: one of them reads
        cached = cache.get(CAPACITY_KEY)
        if cached is not None:
            return tuple(cached)  # type: ignore[return-value]
        nodes = get_nodes()
        pods = every_pod() if nodes else None
        if pods is None:
            return None, None  # not known, which is not "0 free"
        capacity = cluster_capacity(nodes, pods)
        answer = (int(capacity.gpus.free), int(capacity.gpus.requested))
        cache.set(CAPACITY_KEY, answer, CAPACITY_TTL)
        return answer


def similar_runs(job: dict, namespace: str, uid: str | None) -> list[SimilarRun]:
    """Successful jobs of the job's kind in the project (as it is now: `uid`) in the
    history that ran the same script from the same image, fewest differences first."""
    from training.models import JobHistory

    kind = kind_for_object(job) or default_kind()
    records = list(JobHistory.of_project(namespace, uid).filter(
        kind=kind.kind, outcome=JobHistory.Outcome.SUCCEEDED).order_by("-finished")[:50])
    by_uid = {r.uid: r for r in records}
    found = similar_to(job, [(r.uid, r.spec) for r in records if r.spec])
    return [SimilarRun(by_uid[uid].name, namespace, uid, by_uid[uid].finished, tuple(diffs))
            for uid, diffs in found]


def _prometheus(token: str) -> PrometheusClient | None:
    from training.cluster import prometheus_tls
    if not settings.PROMETHEUS_URL:
        return None
    ca_file, verify = prometheus_tls()
    return PrometheusClient(settings.PROMETHEUS_URL, token, ca_file, timeout=PROMETHEUS_TIMEOUT,
                            verify=verify)


def _may_see_metrics(request_token: str, project: str) -> bool:
    from training.permissions import GET_PODS, may

    try:
        with client_for_token(request_token) as client:
            client.timeout = PROMETHEUS_TIMEOUT
            return may(client, request_token, project, GET_PODS)
    except errors.ClusterError:
        return False


def sources_for(token: str, job: dict, summary: JobSummary,
                dismissed_here: frozenset[str] = frozenset(), brief: bool = False,
                project: str | None = None) -> Sources:
    unscheduled = [r for r in summary.replicas if r.reason == "Unschedulable"]
    free, requested = gpu_capacity() if any(r.gpus for r in unscheduled) else (None, None)
    if brief:
        return Sources(nodes=get_nodes() if unscheduled else None, free_gpus=free,
                       read_nodes=False, brief=True,
                       hang_after_seconds=settings.DIAGNOSIS_HANG_SECONDS)
    wants_metrics = summary.status == JobStatus.RUNNING or any(
        r.reason == "OOMKilled" for r in summary.replicas)
    prometheus = _prometheus(token) if wants_metrics and _may_see_metrics(
        token, summary.namespace) else None
    return Sources(prometheus=prometheus, nodes=get_nodes(), free_gpus=free,
                   allocated_gpus=requested,
                   similar=lambda: similar_runs(job, summary.namespace, project),
                   dismissed=dismissed_here, read_nodes=False,
                   hang_after_seconds=settings.DIAGNOSIS_HANG_SECONDS)


def kept_for(token: str, summary: JobSummary, pods: list[dict]
             ) -> tuple[list[dict], dict[str, str]]:
    """What the watcher kept of this job's pods that the cluster no longer has (their last
    state, and their last log lines: odh/training/diagnosis/evidence.py), for a person who may read
    the project's logs: ([ghost pods], {pod: log tail}); nothing for anyone else."""
    from odh.training.diagnosis.evidence import ghosts, kept_tails
    from training.live.log_subscriptions import GET_POD_LOGS
    from training.models import KeptEvidence
    from training.permissions import may
    if summary.status in (JobStatus.SUCCEEDED, JobStatus.SUSPENDED) or not summary.uid:
        return [], {}
    try:
        kept = KeptEvidence.of_job(summary.uid)
    except DatabaseError as e:  # the diagnosis goes on with what the cluster has
        log.warning("kept evidence of %s/%s not read: %s", summary.namespace, summary.name, e)
        return [], {}
    if not kept or not ghosts(pods, kept):
        return [], {}
    try:
        with client_for_token(token) as client:
            client.timeout = PROMETHEUS_TIMEOUT
            if not may(client, token, summary.namespace, GET_POD_LOGS):
                return [], {}
    except errors.ClusterError:
        return [], {}
    return ghosts(pods, kept), kept_tails(pods, kept)
