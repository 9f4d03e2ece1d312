"""A running demo job's series exported, as alice: the SDK's `get_metrics()` and
`odh training metrics` (a process with her kubeconfig) against the demo simcluster's
Prometheus give the same points; without a Prometheus the CLI says how to name one."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from odh.training import MPIJob, errors
from odh.training.sdk import TrainingClient
from tests import simcluster_process

ROOT = Path(__file__).resolve().parents[2]
JOB, PROJECT = "sd-finetune", "team-cv"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = simcluster_process.start(tmp_path_factory.mktemp("export") / "state",
                                   scenario="demo", speed=50)
    yield sim
    sim.stop()


@pytest.fixture(scope="module")
def job(cluster):
    with TrainingClient(kubeconfig=str(cluster.kubeconfig("alice"))) as client:
        yield MPIJob.get(JOB, PROJECT, client=client)


def odh(cluster, *args: str, prometheus: bool = True, job: str = JOB,
        project: str = PROJECT) -> subprocess.CompletedProcess:
    env = dict(os.environ, KUBECONFIG=str(cluster.kubeconfig("alice")), PYTHONPATH=str(ROOT))
    env.pop("ODH_PROMETHEUS_URL", None)
    if prometheus:
        env["ODH_PROMETHEUS_URL"] = cluster.prometheus_url
    return subprocess.run([sys.executable, "-m", "odh.training.cli", "metrics", "mpijob", job,
                           "-n", project, *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_clis_csv_rows_are_the_sdks_series(cluster, job):
    # the range fixed, so both read the same instants
    sdk = job.get_metrics(prometheus=cluster.prometheus_url)
    end = max(p["time"] for series in sdk["gpu_util"].values() for p in series)
    start = min(p["time"] for series in sdk["gpu_util"].values() for p in series)
    sdk = job.get_metrics(start=start, end=end, prometheus=cluster.prometheus_url)
    assert sorted(sdk) == ["cpu", "disk_read", "disk_write", "gpu_memory", "gpu_util", "memory",
                           "network_receive", "network_transmit", "training"]
    # network and disk I/O per pod, bytes per second: gradients between the training Workers
    assert sorted(sdk["network_transmit"]) == ["launcher", "worker-0", "worker-1"]
    assert max(p["value"] for p in sdk["network_transmit"]["worker-0"]) > 100e6
    gpus = sdk["gpu_util"]
    assert gpus and all(name.startswith("worker-") and " GPU " in name for name in gpus)
    assert all(0 <= p["value"] <= 100 for points in gpus.values() for p in points)

    done = odh(cluster, "--start", start, "--end", end)
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert rows[0] == ["series", "time", "value", "step", "epoch"]
    prometheus = [(f"{chart}/{name}", p["time"], p["value"])
                  for chart, by_name in sdk.items() if chart != "training"
                  for name, points in by_name.items() for p in points]
    assert [(series, t, float(v)) for series, t, v, _step, _epoch in rows[1:]
            if not series.startswith("training/")] == prometheus
    assert len(prometheus) > 10
    # the training curves over the same range: the CLI read the log the SDK read (their
    # numbers against the log's: tests/integration/test_training_curves.py)
    training = [(f"training/{name}", p["time"], p["value"], p["step"], p["epoch"])
                for name, points in sdk["training"].items() for p in points]
    assert [(series, t, float(v), float(step) if step else None,
             float(epoch) if epoch else None)
            for series, t, v, step, epoch in rows[1:] if series.startswith("training/")
            ] == training

    as_json = odh(cluster, "--start", start, "--end", end, "-o", "json", "--metric", "cpu")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == {"cpu": sdk["cpu"]}


def test_without_a_prometheus_both_say_how_to_name_one(cluster, job, monkeypatch):
    monkeypatch.delenv("ODH_PROMETHEUS_URL", raising=False)
    with pytest.raises(errors.ClusterUnavailable, match="ODH_PROMETHEUS_URL"):
        job.get_metrics()
    done = odh(cluster, prometheus=False)
    assert done.returncode == 1 and done.stdout == ""
    assert "No Prometheus to read metrics from: set ODH_PROMETHEUS_URL" in done.stderr


def test_the_training_curves_alone_need_no_prometheus(cluster, monkeypatch):
    """A finished demo job's Launcher log (12 epochs): its curves from the SDK and the CLI,
    no Prometheus named."""
    monkeypatch.delenv("ODH_PROMETHEUS_URL", raising=False)
    with TrainingClient(kubeconfig=str(cluster.kubeconfig("alice"))) as client:
        sdk = MPIJob.get("resnet50-imagenet", "team-cv", client=client).get_metrics(
            names=["training"])
    assert list(sdk) == ["training"]
    loss = sdk["training"]["loss@epoch"]
    assert [p["epoch"] for p in loss] == list(range(1, 13))
    assert loss[0]["value"] > loss[-1]["value"] and loss[0]["step"] > 0
    done = odh(cluster, "--metric", "training", prometheus=False, job="resnet50-imagenet")
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert rows[0] == ["series", "time", "value", "step", "epoch"]
    assert [(series, t, float(v)) for series, t, v, _step, _epoch in rows[1:]] == [
        (f"training/{name}", p["time"], p["value"])
        for name, points in sdk["training"].items() for p in points]


def test_a_prometheus_that_does_not_answer_is_named(cluster, job):
    with pytest.raises(errors.ClusterUnavailable, match="could not be reached"):
        job.get_metrics(prometheus=f"https://127.0.0.1:{simcluster_process.free_port()}")


def test_an_unknown_chart_name_lists_the_known_ones(job, cluster):
    with pytest.raises(ValueError, match="gpu_util, gpu_memory, cpu, memory, network_receive"):
        job.get_metrics(names=["loss"], prometheus=cluster.prometheus_url)


def test_a_jobs_own_patterns_reach_the_sdk_and_a_wrong_one_is_refused(cluster, monkeypatch):
    from odh.training.manifests.metric_patterns import ANNOTATION
    monkeypatch.delenv("ODH_PROMETHEUS_URL", raising=False)
    script = "echo 'Iter 10 | bleu 3.5'; echo 'Iter 20 | bleu 7.25'; sleep 1"
    with TrainingClient(kubeconfig=str(cluster.kubeconfig("alice"))) as client:
        def job(name: str, pattern: str) -> MPIJob:
            return MPIJob(name=name, namespace=PROJECT, workers=1, image="mpi:latest",
                          command=["sh", "-c", script], client=client,
                          annotations={ANNOTATION: pattern,
                                       "simcluster.io/run-seconds": "2"})
        with pytest.raises(errors.ValidationError) as wrong:
            job("own-words-wrong", "bleu {bleu}").create()
        assert "put {step} or {epoch} where the line gives it" in str(wrong.value)
        mine = job("own-words", "Iter {step} | bleu {bleu}").create()
        try:
            assert mine.wait_for_completion(timeout=90).phase == "Succeeded"
            bleu = mine.get_metrics(names=["training"])["training"]["bleu"]
        finally:
            mine.delete()
    assert [(p["step"], p["value"]) for p in bleu] == [(10, 3.5), (20, 7.25)]


def test_curves_the_job_pushed_take_the_place_of_its_logs(cluster):
    """A script that pushes its loss to the Pushgateway: the SDK's training curves are
    Prometheus' numbers, not the log's, for that metric; the log's others stay."""
    import requests

    from tests.waiting import wait_until
    gateway = f"{cluster.prometheus_url}/metrics/job/pushes-loss/namespace/{PROJECT}"
    with TrainingClient(kubeconfig=str(cluster.kubeconfig("alice"))) as client:
        mine = MPIJob(name="pushes-loss", namespace=PROJECT, workers=1, image="mpi:latest",
                      command=["mpirun", "-n", "1", "python", "train.py"], client=client,
                      annotations={"simcluster.io/run-seconds": "600"})
        mine.create()
        try:
            wait_until(lambda: mine.status().phase == "Running", 60, message="it runs")
            pushed = {10: 0.5, 20: 0.25, 30: 0.125}
            for step, loss in pushed.items():
                r = requests.put(gateway, data=f"training_loss {loss}\ntraining_step {step}\n",
                                 verify=str(cluster.ca_file), timeout=10)
                assert r.status_code == 200, r.text
                wait_until(lambda step=step: mine.get_metrics(
                    names=["training"], prometheus=cluster.prometheus_url)["training"]
                    .get("loss", [{}])[-1].get("step") == step, 30,
                    message=f"step {step} read back")
            training = mine.get_metrics(names=["training"],
                                        prometheus=cluster.prometheus_url)["training"]
            from_log = mine.get_metrics(names=["training"])["training"]  # no Prometheus
        finally:
            mine.delete()
    assert [(p["step"], p["value"]) for p in training["loss"]] == list(pushed.items())
    assert "loss@epoch" not in training  # the pushed metric replaces both of the log's
    assert from_log["loss"] != training["loss"] and "lr" in training  # the others stay
