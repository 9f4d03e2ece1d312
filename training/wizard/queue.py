"""The wizard where Kueue governs a project (odh/training/queues/forecast.py): the queue
chosen by default, the WorkloadPriorityClasses offered, and what Kueue will do with the
job: admit it at once, or queue it at a position with an expected start.

The LocalQueue is read with the person's token; the ClusterQueues, their pending lists
and the WorkloadPriorityClasses with the dashboard's (training/kueue_settings.py); of other
projects' waiting jobs only their number and priorities are used, never shown. The
expected start is read with the person's token (odh/training/queues/start.py): it is
"unknown" when it depends on jobs they may not see.
"""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.translation import gettext as _

from odh.training import errors
from odh.training.capacity.preflight import DEFAULT_QUEUE, ProjectFacts
from odh.training.cluster.client import ClusterClient, Project
from odh.training.manifests.totals import totals_for
from odh.training.quantity import GPU_RESOURCE
from odh.training.queues.forecast import QueueForecast, queue_forecast
from odh.training.queues.start import estimate, readable_workloads
from odh.training.spec import JobSpec
from training.accounts import session
from training.kueue_settings import cluster_queues, pending_in, workload_priorities
from training.queue_standing import remembered_ends


def default_queue(local_queues: list[str]) -> str:
    """The queue a new job starts with: the project's "default" LocalQueue (where Kueue
    puts jobs that name none), else none: a project may keep queues for some jobs only,
    and the person chooses."""
    return DEFAULT_QUEUE if DEFAULT_QUEUE in local_queues else ""


def with_priorities(facts: ProjectFacts) -> ProjectFacts:
    """The project's facts with the WorkloadPriorityClasses, where Kueue governs it and
    the person could not read them."""
    if facts.local_queues and facts.workload_priorities is None:
        facts.workload_priorities = workload_priorities()
    return facts


def _needs(spec: JobSpec) -> dict:
    totals = totals_for(spec)
    return {"cpu": totals.total_cpu, "memory": totals.total_memory,
            GPU_RESOURCE: totals.total_gpus}


def forecast_for(request: HttpRequest, client: ClusterClient, spec: JobSpec,
                 facts: ProjectFacts, projects: list[Project]) -> QueueForecast | None:
    """What Kueue will do with the job; None where no queue is chosen (or no Kueue)."""
    if not spec.queue_name or not facts.visible or not facts.local_queues:
        return None
    try:
        local_queue = client.get_local_queue(spec.namespace, spec.queue_name)
    except errors.NotFound:
        local_queue = None
    except errors.ClusterError as e:
        return QueueForecast(spec.queue_name, unknown=_(
            "the queue %(queue)s could not be read: %(why)s") % {
            "queue": spec.queue_name, "why": e.message})
    all_queues = cluster_queues()
    if all_queues is None:
        return QueueForecast(spec.queue_name, unknown=_(
            "its ClusterQueues could not be read, so whether the job fits is not known"))
    cq_name = str(((local_queue or {}).get("spec") or {}).get("clusterQueue") or "")
    pending = pending_in(cq_name) if cq_name else []
    token = session.token(request)
    visible = {p.name for p in projects}

    def expected(standing, cluster_queue, ahead):
        return estimate(standing, cluster_queue, readable_workloads(client, visible), ahead,
                        remembered_ends(token, client))

    priority = (facts.workload_priorities or {}).get(spec.queue_priority, 0)
    return queue_forecast(_needs(spec), priority, spec.queue_name, local_queue,
                          all_queues, pending, expected)
