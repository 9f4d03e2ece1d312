"""Reading the dashboard's /metrics in tests, and the cluster state to compare it with."""

from __future__ import annotations

import json

from prometheus_client.parser import text_string_to_metric_families

from odh.training.status.summary import JobSummary
from tests.simcluster_process import SimCluster

Samples = dict[tuple[str, frozenset], float]


def parse(text: str) -> Samples:
    """{(sample name, frozenset of label pairs): value} of a Prometheus text exposition."""
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, metric: str, /, **labels: str) -> float | None:
    """The value of the sample with exactly these labels (None: not exported)."""
    return samples.get((metric, frozenset(labels.items())))


def matching(samples: Samples, metric: str, /, **labels: str) -> dict[frozenset, float]:
    """Every sample of `metric` whose labels include these."""
    wanted = set(labels.items())
    return {pairs: v for (n, pairs), v in samples.items() if n == metric and wanted <= pairs}


def cluster_summaries(sim: SimCluster) -> list[tuple[dict, JobSummary]]:
    """Every training job of the cluster with its summary, read as the admin (the truth the
    metrics are compared with)."""
    from kubernetes import client

    from odh.training.kinds import KINDS
    from odh.training.kinds.base import JOB_NAME_LABEL
    from odh.training.status.summarize import summarize
    with sim.api_client("admin") as api:
        custom = client.CustomObjectsApi(api)
        pods = client.CoreV1Api(api).list_pod_for_all_namespaces(
            label_selector=JOB_NAME_LABEL, _preload_content=False)
        pod_items = json.loads(pods.data)["items"]
        found = []
        for kind in KINDS.values():
            try:
                jobs = custom.list_cluster_custom_object(kind.group, kind.version, kind.plural)
            except client.ApiException as e:
                if e.status == 404:  # the cluster does not serve this kind
                    continue
                raise
            for job in jobs["items"]:
                found.append((job, summarize(job, pod_items, [])))
        return found
