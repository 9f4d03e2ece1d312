"""Past runs read from the cluster with the person's credentials, for the SDK's
`job.recommend()`: the finished jobs of the job's kind still in its project, each with
what its Workers used where a Prometheus is known (`$ODH_PROMETHEUS_URL`, or passed).

The dashboard's wizard reads the same facts from its job history instead, which also
keeps the runs of jobs since deleted (and records their use when they finish), so it may
know more runs than the SDK; the rules that make advice of them are the same
(`odh.training.advice.advise`)."""

from __future__ import annotations

import logging
import os

from odh.training import errors
from odh.training.advice.advise import Advice, advise
from odh.training.advice.runs import PastRun, is_similar, past_run
from odh.training.kinds import JobSpec
from odh.training.metrics.export import PROMETHEUS_ENV
from odh.training.metrics.usage import Usage, read_usage
from odh.training.status.history import history_fields
from odh.training.status.queries import list_summaries

log = logging.getLogger("odh.training.advice")


def runs_in_cluster(client, spec: JobSpec, prometheus: str | None = None) -> list[PastRun]:
    """The finished jobs like `spec`'s in its project as past runs (`client`: a
    TrainingClient); their use asked of Prometheus where one is named (without, or when it
    does not answer, the runs come without it)."""
    listing = list_summaries(client.cluster, [spec.namespace], [spec.kind])
    url = (prometheus or os.environ.get(PROMETHEUS_ENV, "")).strip()
    prom = client.prometheus(url) if url else None
    runs: list[PastRun] = []
    try:
        for summary in listing.summaries:
            if not summary.is_finished or summary.name == spec.name:
                continue
            job, _pods = listing.objects[(summary.namespace, summary.kind.slug, summary.name)]
            record = history_fields(job, summary)
            run = past_run(record)
            if run is None or not is_similar(run, spec):
                continue
            usage = _usage(prom, spec, record) if prom is not None else Usage()
            runs.append(past_run({**record, "peak_memory_bytes": usage.peak_memory_bytes,
                                  "gpu_utilization": usage.gpu_utilization}) or run)
    finally:
        if prom is not None:
            prom.close()
    return runs


def _usage(prometheus, spec: JobSpec, record: dict) -> Usage:
    started, finished = record.get("started"), record.get("finished")
    if started is None or finished is None:
        return Usage()
    try:
        return read_usage(prometheus, spec.namespace, spec.kind, str(record["name"]),
                          started.timestamp(), finished.timestamp())
    except errors.ClusterError as e:
        log.info("cannot read the use of %s from Prometheus: %s", record["name"], e.message)
        return Usage()


def recommend(client, spec: JobSpec, prometheus: str | None = None) -> Advice | None:
    """The advice for `spec`'s job from the similar finished jobs of its project (None:
    there are none)."""
    return advise(runs_in_cluster(client, spec, prometheus), spec)
