"""The SDK's `job.recommend()` against the demo cluster: two finished runs of a job in
team-nlp make advice for a third like them (its Workers' peak memory read from the
cluster's Prometheus with alice's credentials), which `update(**advice.changes)` applies;
bob, who may not read team-nlp, gets none."""

from __future__ import annotations

import copy

import pytest

from odh.training import MPIJob
from odh.training.sdk import TrainingClient
from tests import simcluster_process
from tests.training_jobs import Jobs, mpijob

NS = "team-nlp"
LIMITS = {"limits": {"cpu": "1", "memory": "4Gi"}, "requests": {"cpu": "1", "memory": "4Gi"}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = simcluster_process.start(tmp_path_factory.mktemp("advice") / "state",
                                   scenario="demo", speed=50)
    yield sim
    sim.stop()


def _job(name: str) -> dict:
    return mpijob(name, workers=2, run_seconds=300, worker_resources=LIMITS,
                  launcher_command=["mpirun", "python", "/advice/train.py"],
                  annotations={"opendatahub.io/username": "alice"})


@pytest.fixture(scope="module")
def finished(cluster):
    jobs = Jobs(cluster.api_client("alice"), NS)
    for name in ("advice-1", "advice-2"):
        jobs.create(_job(name))
    for name in ("advice-1", "advice-2"):
        jobs.wait_condition(name, "Succeeded", timeout=120)
    yield
    jobs.cleanup()


def _draft(client: TrainingClient) -> MPIJob:
    manifest = copy.deepcopy(_job("advice-next"))
    manifest["metadata"]["namespace"] = NS
    worker = manifest["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    worker["resources"] = {"limits": {"cpu": "1", "memory": "16Gi"},
                           "requests": {"cpu": "1", "memory": "16Gi"}}
    return MPIJob.from_manifest(manifest, client=client)


def test_recommend_gives_the_advice_of_similar_finished_runs(cluster, finished):
    with TrainingClient(kubeconfig=str(cluster.kubeconfig("alice"))) as client:
        job = _draft(client)
        advice = job.recommend(prometheus=cluster.prometheus_url)
    assert advice is not None
    assert sorted(r.name for r in advice.runs) == ["advice-1", "advice-2"]
    assert advice.sentences[0] == "2 similar runs in this project: 2 Succeeded, 0 Failed."
    # the Workers peaked within their 4Gi limit: far less than the 16Gi asked for now
    assert 1 * 2 ** 30 < advice.peak_memory_bytes <= 4 * 2 ** 30
    assert advice.memory_per_worker in ("2Gi", "3Gi", "4Gi", "5Gi")
    assert any(s.startswith("Similar runs peaked at ") for s in advice.sentences)
    assert all(row.memory.endswith(")") and " of 4Gi (" in row.memory for row in advice.rows)
    job.update(**advice.changes)
    assert job.spec.memory_per_worker == advice.memory_per_worker


def test_without_prometheus_the_runs_come_without_their_use(cluster, finished, monkeypatch):
    monkeypatch.delenv("ODH_PROMETHEUS_URL", raising=False)
    with TrainingClient(kubeconfig=str(cluster.kubeconfig("alice"))) as client:
        advice = _draft(client).recommend()
    assert advice is not None and len(advice.runs) == 2
    assert advice.peak_memory_bytes is None and advice.memory_per_worker is None


def test_bob_gets_no_advice_from_a_project_he_may_not_read(cluster, finished):
    with TrainingClient(kubeconfig=str(cluster.kubeconfig("bob"))) as client:
        assert _draft(client).recommend(prometheus=cluster.prometheus_url) is None
