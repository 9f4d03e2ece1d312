"""Kueue at 1,000 jobs: simcluster's admission throughput, and the dashboard's time to show
a queue of 1,000 pending jobs.

simcluster is started on a scenario of its own (CPU nodes enough for every pod, one
ResourceFlavor, two ClusterQueues: `roomy` with quota for every job, `full` with none, a
LocalQueue in team-a for each). Then:

1. Admission: 1,000 MPIJobs (a Launcher and a Worker, 100m CPU each) are created in
   `roomy-queue` by 8 threads as alice; the figure is the time from the first create until
   the ClusterQueue counts 1,000 admitted Workloads (and jobs admitted per second).
2. Rendering: 1,000 MPIJobs are created in `full-queue`, where none fits; once the
   ClusterQueue counts them all pending, the dashboard in this process (Django's test
   client, signed in through real OAuth tokens) serves the administrators' queue page
   (/cluster/queues/, the whole page and the part it fetches again) and the Queue card of
   the last job for alice (her LocalQueue's order, 1,000 long), median of 5 each.

    .venv/bin/python benchmarks/kueue_queue.py [--jobs 1000] [--no-record]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.inprocess import setup_django, signed_in_clients  # noqa: E402
from benchmarks.readme import write_section  # noqa: E402
from tests import simcluster_process  # noqa: E402

NS = "team-a"
RUNS = 5
THREADS = 8
KUEUE = ("kueue.x-k8s.io", "v1beta1")


def _queue(name: str, cpu: str) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {"namespaceSelector": {}, "resourceGroups": [{
                "coveredResources": ["cpu", "memory"],
                "flavors": [{"name": "default", "resources": [
                    {"name": "cpu", "nominalQuota": cpu},
                    {"name": "memory", "nominalQuota": "100Ti"}]}]}]}}


def scenario(jobs: int) -> dict:
    pods = 2 * jobs
    return {
        "name": "kueue-bench", "description": "Kueue at scale", "apis": ["kueue"],
        "users": [{"name": "alice", "password": "alice", "groups": ["data-scientists"]},
                  {"name": "admin", "password": "admin", "groups": ["cluster-admins"]}],
        "namespaces": [{"name": NS}],
        "nodes": [{"name": "cpu-{i}", "count": -(-pods // 240) + 1, "cpu": 128,
                   "memory": "512Gi"}],
        "access": [{"user": "alice", "role": "edit", "namespaces": [NS]},
                   {"user": "admin", "clusterRole": "cluster-admin"}],
        "serviceAccounts": [{"namespace": "mpijob-dashboard", "name": "mpijob-dashboard",
                             "kubeconfig": "dashboard", "clusterRoles": ["view"]}],
        "oauth": {"clients": [{"name": "mpijob-dashboard",
                               "secret": "mpijob-dashboard-demo-secret",
                               "grantMethod": "auto",
                               "redirectURIs": ["http://127.0.0.1:8000/oauth/callback/"]}]},
        "objects": [
            {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
             "metadata": {"name": "default"}},
            _queue("roomy", str(jobs)), _queue("full", "0"),
            *({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
               "metadata": {"name": f"{cq}-queue", "namespace": NS},
               "spec": {"clusterQueue": cq}} for cq in ("roomy", "full"))],
    }


def job(name: str, queue: str) -> dict:
    resources = {"requests": {"cpu": "100m", "memory": "128Mi"}}
    image = "mpioperator/mpi-pi:openmpi"
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"kueue.x-k8s.io/queue-name": queue},
                         "annotations": {"simcluster.io/run-seconds": "100000000"}},
            "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{
                    "name": "launcher", "image": image, "command": ["mpirun", "pi"],
                    "resources": resources}]}}},
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [{
                    "name": "worker", "image": image, "resources": resources}]}}}}}}


def create_jobs(sim, prefix: str, queue: str, count: int) -> None:
    from kubernetes import client

    def make(names: list[str]) -> None:
        with sim.api_client("alice") as api:
            custom = client.CustomObjectsApi(api)
            for name in names:
                custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", NS,
                                                       "mpijobs", job(name, queue))

    names = [f"{prefix}-{i}" for i in range(count)]
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(make, [names[i::THREADS] for i in range(THREADS)]))


def queue_status(sim, name: str) -> dict:
    from kubernetes import client

    with sim.api_client("admin") as api:
        return client.CustomObjectsApi(api).get_cluster_custom_object(
            *KUEUE, "clusterqueues", name).get("status") or {}


def wait_for(sim, cq: str, key: str, count: int, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if int(queue_status(sim, cq).get(key) or 0) >= count:
            return time.monotonic()
        time.sleep(0.2)
    raise SystemExit(f"{cq}: {key} did not reach {count} within {timeout:.0f} s "
                     f"({queue_status(sim, cq)})")


def last_in_queue(sim, queue: str) -> str:
    """The job last in a LocalQueue's order (Kueue's visibility API)."""
    from odh.training.cluster.client import ClusterClient

    with ClusterClient(sim.api_client("admin")) as client:
        items = client.pending_workloads(namespace=NS, local_queue=queue, limit=100000)
    return items[-1]["metadata"]["ownerReferences"][0]["name"]


def measure_pages(sim, jobs: int) -> dict[str, float]:
    from django.urls import reverse

    clients = signed_in_clients(sim, ("admin", "alice"))
    admin, alice = clients["admin"], clients["alice"]
    last = last_in_queue(sim, "full-queue")  # created by threads: not "waiting-<jobs - 1>"
    pages = {
        "/cluster/queues/ (page)": (admin, reverse("training-cluster-queues"), {}),
        "/cluster/queues/ (part fetched again)": (
            admin, reverse("training-cluster-queues"), {"HTTP_HX_REQUEST": "true"}),
        "Queue card of the last job (alice)": (
            alice, reverse("training-job-queue", args=[NS, "mpijob", last]), {}),
    }
    figures = {}
    for name, (browser, path, headers) in pages.items():
        first = browser.get(path, **headers)  # warms access answers
        assert first.status_code == 200, (name, first.status_code)
        times = []
        for _ in range(RUNS):
            started = time.perf_counter()
            response = browser.get(path, **headers)
            times.append(time.perf_counter() - started)
            assert response.status_code == 200
        figures[name] = statistics.median(times)
        if "card" in name:
            text = response.content.decode()
            assert f"position {jobs} of {jobs}" in text, text[-3000:]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    jobs = args.jobs
    with tempfile.TemporaryDirectory(prefix="kueue-bench-") as tmp:
        import yaml

        setup_django(Path(tmp))
        path = Path(tmp) / "scenario.yaml"
        path.write_text(yaml.safe_dump(scenario(jobs)))
        sim = simcluster_process.start(Path(tmp) / "state", scenario=str(path), speed=50,
                                       timeout=600)
        try:
            started = time.monotonic()
            create_jobs(sim, "admitted", "roomy-queue", jobs)
            created = time.monotonic()
            admitted = wait_for(sim, "roomy", "admittedWorkloads", jobs, 1800)
            create_jobs(sim, "waiting", "full-queue", jobs)
            wait_for(sim, "full", "pendingWorkloads", jobs, 1800)
            pages = measure_pages(sim, jobs)
        finally:
            sim.stop()
    seconds = admitted - started
    rate = jobs / seconds
    lines = [
        f"Measured {date.today().isoformat()} on {os.cpu_count()} CPUs "
        f"({platform.machine()}, Python {platform.python_version()}), simcluster at speed "
        f"50; pages in process (Django's test client), median of {RUNS}.", "",
        "| figure | value |", "|---|---|",
        f"| {jobs:,} queued MPIJobs created (8 threads) | {created - started:.1f} s |",
        f"| first create to {jobs:,} admitted | {seconds:.1f} s ({rate:.0f} jobs/s) |",
        *(f"| {name}, {jobs:,} pending | {value * 1000:.0f} ms |"
          for name, value in pages.items())]
    if not args.no_record:
        write_section("kueue_queue.py", "\n".join(lines))
    print("\n".join(lines[2:]))
    print(f"admission: {rate:.0f} jobs/s; /cluster/queues/ with {jobs:,} pending: "
          f"{pages['/cluster/queues/ (page)'] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
