"""What a finished job's Workers used, recorded by the watcher with its history: the peak
memory of the highest Worker, read at the finish from simcluster's Prometheus with the
dashboard's service account, against the Worker's limit."""

from __future__ import annotations

import pytest

from tests.integration.hub.conftest import dashboard_client
from tests.training_jobs import mpijob
from tests.waiting import wait_until

GI = 2 ** 30


def _hub(sim):
    from channels.layers import InMemoryChannelLayer

    from training.live.hub.hub import Hub, Publisher
    from training.live.hub.keepers.transitions import TransitionRecorder
    from training.live.hub.keepers.usage import UsageRecorder

    return Hub(lambda: dashboard_client(sim), Publisher(InMemoryChannelLayer()),
               transitions=TransitionRecorder(), usage=UsageRecorder())


@pytest.mark.django_db(transaction=True)
def test_the_watcher_records_the_workers_peak_memory_when_a_job_finishes(demo, jobs, settings):
    from training import cluster
    from training.models import JobHistory

    settings.CLUSTER_KUBECONFIG = str(demo.kubeconfig("dashboard"))
    settings.PROMETHEUS_URL = demo.prometheus_url
    cluster.cluster_config.cache_clear()
    limits = {"limits": {"cpu": "1", "memory": "4Gi"}, "requests": {"cpu": "1", "memory": "4Gi"}}
    hub = _hub(demo).start()
    try:
        jobs.create(mpijob("usage-ok", workers=2, run_seconds=300, worker_resources=limits,
                           annotations={"opendatahub.io/username": "alice"}))
        jobs.create(mpijob("usage-oom", workers=2, run_seconds=600, worker_resources=limits,
                           annotations={"opendatahub.io/username": "alice",
                                        "simcluster.io/failure": "oom",
                                        "simcluster.io/failure-after-seconds": "120"}))

        def recorded(name: str):
            row = JobHistory.objects.filter(namespace="team-nlp", name=name).first()
            return row if row is not None and row.peak_memory_bytes is not None else None

        wait_until(lambda: recorded("usage-ok") and recorded("usage-oom"), 120,
                   message=lambda: str(hub.stats()))
        ok, oom = recorded("usage-ok"), recorded("usage-oom")
        # a Worker training uses a good part of its limit, never more
        assert 0.3 * 4 * GI < ok.peak_memory_bytes <= 4 * GI
        assert ok.outcome == "Succeeded" and ok.gpu_utilization is None  # asked for no GPU
        # the OOM-killed Worker reached its limit
        assert oom.outcome == "Failed" and oom.cause_reason == "OOMKilled"
        assert oom.peak_memory_bytes == pytest.approx(4 * GI, rel=0.01)
        assert hub.usage.stats()["recorded"] >= 2
    finally:
        hub.stop()
        cluster.cluster_config.cache_clear()
