"""The SDK and CLI with Kueue: `MPIJob(..., queue=, priority=)`, `odh training list
--queue`, and `describe`'s Queue line, against simcluster's Kueue."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from odh.training import MPIJob, ResourceSpec
from odh.training.sdk import TrainingClient
from tests.integration.kueue.support import (
    NS,
    _queued_job,
    _reserved,
    _waiting_with,
    _workload_of,
)
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[3]


def _cli(cluster, tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, KUBECONFIG=str(cluster.kubeconfig("alice")), HOME=str(tmp_path),
               PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "odh.training.cli", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_sdk_names_the_queue_and_the_priority(cluster, api, made):
    name = f"sdk-{uuid.uuid4().hex[:4]}"
    job = MPIJob(name, namespace=NS, workers=1, image="quay.io/team-a/train:1",
                 command=["mpirun", "python", "train.py"],
                 worker_resources=ResourceSpec(cpu="1", memory="2Gi", gpus=8),
                 queue="gpu-queue", priority="high",
                 kubeconfig=str(cluster.kubeconfig("alice")))
    job.create()
    made.append(name)
    labels = job.object["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "gpu-queue"
    assert labels["kueue.x-k8s.io/priority-class"] == "high"
    wait_until(lambda: _workload_of(api, name), 30, message="its Workload")
    assert _workload_of(api, name)["spec"]["priority"] == 1000


def test_list_by_queue_and_describe_says_where_the_job_stands(cluster, api, made, tmp_path):
    holder, _ = _queued_job(api, made, "holder", "gpu-queue", workers=2)
    wait_until(lambda: _reserved(api, holder), 30, message="the holder's admission")
    other, _ = _queued_job(api, made, "other", "a-queue", workers=0, gpus=0)
    waiting, _ = _queued_job(api, made, "waiting", "gpu-queue", workers=1)
    _waiting_with(api, waiting)
    listed = _cli(cluster, tmp_path, "list", "--queue", "gpu-queue", "-o", "json")
    assert listed.returncode == 0, listed.stderr
    names = {item["name"] for item in json.loads(listed.stdout)["items"]}
    assert {holder, waiting} <= names and other not in names
    described = _cli(cluster, tmp_path, "describe", "mpijob", waiting)
    assert described.returncode == 0, described.stderr
    lines = described.stdout.splitlines()
    queue = next(line for line in lines if line.strip().startswith("Queue:"))
    assert queue.split("Queue: ", 1)[1] == (
        "Queued in gpu-queue: position 1 of 1 in this queue (ClusterQueue gpu-a100), "
        "needs 8 GPUs")
    assert any(line.strip().startswith("Kueue: couldn't assign flavors to pod set worker")
               for line in lines)
    record = json.loads(_cli(cluster, tmp_path, "describe", "mpijob", waiting,
                             "-o", "json").stdout)
    assert record["queue"]["position"] == 1 and record["queue"]["positionIn"] == "LocalQueue"
    assert record["queue"]["clusterQueue"] == "gpu-a100"
    assert record["queue"]["expectedStart"] == (
        "Expected start: unknown: what the ClusterQueue has free cannot be read")
    assert any(line.strip() == record["queue"]["expectedStart"] for line in lines)


def test_the_sdk_status_of_a_queued_job_says_where_it_stands(cluster, api, made):
    holder, _ = _queued_job(api, made, "holder", "gpu-queue", workers=2)
    wait_until(lambda: _reserved(api, holder), 30, message="the holder's admission")
    waiting, _ = _queued_job(api, made, "waiting", "gpu-queue", workers=1)
    _waiting_with(api, waiting)
    client = TrainingClient(cluster.api_client("alice"))
    status = MPIJob.get(waiting, NS, client=client).status()
    assert status.phase == "Pending"
    assert status.queue.sentence() == ("Queued in gpu-queue: position 1 of 1 in this queue "
                                       "(ClusterQueue gpu-a100), needs 8 GPUs")
    assert status.to_dict()["queue"]["position"] == 1
    running = MPIJob.get(holder, NS, client=client).status()
    assert running.queue.sentence() == "Admitted by the ClusterQueue gpu-a100 (queue gpu-queue)."
