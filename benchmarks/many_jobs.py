"""The pages with many jobs: server time of /jobs/ (first page, a deep page, filtered),
one job's page and /cluster/ with 100, 1,000 (and, with --sizes, 10,000) running MPIJobs
of 5 pods each in the cluster (10,000 jobs: 50,000 pods), read from the API with the
person's token (a web process without the watch hub) and served from the hub's index (the
hub in the web process, as by default); and the hub's memory, in all and per job it holds.

For each size: simcluster started on a scenario made from the demo's
(simcluster/scenarios/demo.yaml) with that many MPIJobs added to team-nlp (`jobs[].count`:
one Launcher and 4 Workers each, 100m CPU and 128Mi per pod, training for weeks), its
quota lifted, and CPU nodes enough for every pod (`bulk-<i>`, 240 pods each); created
as the cluster starts, so they all run when it answers. Then the dashboard in this
process (Django's test client, a SQLite file, signed in as alice and as admin through real
OAuth tokens, as the view tests do), each page asked 5 times, the median kept. Cached
access answers are warmed by a first request that is not counted. Then the watch hub is
started in this process; its memory is what Python allocated for it (tracemalloc) once it
has listed everything. The figure is the ratio of each page's time at the
largest size to its time at 100 jobs: near 1 means the page does not grow with the
cluster.

    .venv/bin/python benchmarks/many_jobs.py [--sizes 100,1000,10000] [--no-record]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


from benchmarks.inprocess import setup_django, signed_in_clients  # noqa: E402
from benchmarks.readme import write_section  # noqa: E402
from tests import simcluster_process  # noqa: E402

NS = "team-nlp"
RUNS = 5
WORKERS = 4
PODS_PER_NODE = 240
PAGES = {
    "/jobs/ first page": ("alice", "/jobs/?project="),
    "/jobs/ deep page": ("alice", "/jobs/?project=&page={last}"),
    "/jobs/ filtered (status, name)": ("alice", "/jobs/?project=&status=Running&q=bulk-1"),
    "/cluster/": ("admin", "/cluster/"),
    # one job's page: its Events chosen from the hub's index (with the hub) or from the
    # project's events listed (without)
    "a job's page": ("alice", "/jobs/team-nlp/mpijob/bulk-1/"),
}


def scenario(jobs: int) -> dict:
    """The demo with `jobs` running MPIJobs in team-nlp and the nodes to run them."""
    import yaml

    demo = yaml.safe_load((ROOT / "simcluster" / "scenarios" / "demo.yaml").read_text())
    demo["objects"] = [o for o in demo["objects"] if not (
        o.get("kind") == "ResourceQuota" and o["metadata"].get("namespace") == NS)]
    pods = jobs * (WORKERS + 1)
    demo["nodes"].append({"name": "bulk-{i}", "count": -(-pods // PODS_PER_NODE) + 1,
                          "cpu": 128, "memory": "512Gi"})
    resources = {"requests": {"cpu": "100m", "memory": "128Mi"}}
    image = "mpioperator/mpi-pi:openmpi"
    demo["jobs"].append({"count": jobs, "as": "alice", "manifest": {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": "bulk-{i}", "namespace": NS,
                     "annotations": {"simcluster.io/run-seconds": "100000000"}},
        "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{
                "name": "launcher", "image": image, "command": ["mpirun", "/home/mpiuser/pi"],
                "resources": resources}]}}},
            "Worker": {"replicas": WORKERS, "template": {"spec": {"containers": [{
                "name": "worker", "image": image, "resources": resources}]}}}}}}})
    return demo


def start_cluster(work: Path, jobs: int):
    import yaml

    path = work / f"scenario-{jobs}.yaml"
    path.write_text(yaml.safe_dump(scenario(jobs)))
    # every job and pod is made while the cluster starts: minutes at 10,000 jobs
    return simcluster_process.start(work / f"state-{jobs}", scenario=str(path), speed=50,
                                    timeout=3600)


def measure(sim, jobs: int) -> dict[str, float]:
    """Median server time of each page (seconds), in this process."""
    from django.conf import settings

    clients = signed_in_clients(sim, ("alice", "admin"))
    figures = {}
    for name, (user, path) in PAGES.items():
        path = path.format(last=max(1, jobs // settings.JOBS_PER_PAGE))
        browser = clients[user]
        assert browser.get(path).status_code == 200, (name, path)  # warms access answers
        times = []
        for _ in range(RUNS):
            started = time.perf_counter()
            response = browser.get(path)
            times.append(time.perf_counter() - started)
            assert response.status_code == 200
        figures[name] = statistics.median(times)
    return figures


def settled(hub) -> bool:
    """Every watch listed (the other pods' too) and every job summarized since."""
    others = hub.other_pods_watch
    return (hub.ready.is_set() and all(w.synced.is_set() for w in hub.watches)
            and others is not None and others.synced.is_set() and hub.stats()["dirty"] == 0)


def measure_with_hub(sim, jobs: int) -> tuple[dict[str, float], float, int]:
    """The same pages with the watch hub running in this process (ready: it has listed
    everything), as the dashboard runs by default; the memory it took (MiB) and the
    number of jobs it holds (the demo's and the added ones)."""
    import gc
    import tracemalloc

    import training.live.hub
    from training.live.hub.building import build_hub
    # what the hub's objects hold (Python's allocations while it lists and indexes the
    # cluster, less what it freed): the process's RSS says little once the API pages
    # before it have parsed megabytes of JSON whose freed memory the allocator reuses
    gc.collect()
    tracemalloc.start()
    hub = build_hub(record_history=False).start()
    try:
        # ready may come before every first list (the hub starts without a late one):
        # measured once it has them all and has summarized every job since, so that the
        # pages do not share the machine with its first work
        deadline = time.monotonic() + 1800
        while not settled(hub):
            if time.monotonic() > deadline:
                raise SystemExit("the watch hub did not list the cluster within 30 minutes")
            time.sleep(0.5)
        gc.collect()
        memory = tracemalloc.get_traced_memory()[0] / 2**20
        tracemalloc.stop()
        training.live.hub._hub = hub  # what ensure_started() does on the first websocket
        return measure(sim, jobs), memory, hub.index.counts()["jobs"]
    finally:
        training.live.hub._hub = None
        hub.stop()


def _memory(name: str) -> bool:
    return "MiB" in name or "KiB" in name


def record(rows: list[str], sizes: list[int]) -> None:
    write_section("many_jobs.py", "\n".join([
        f"Measured {date.today().isoformat()} on {os.cpu_count()} CPUs ({platform.machine()}, "
        f"Python {platform.python_version()}): simcluster demo with "
        f"{', '.join(f'{s:,}' for s in sizes)} running MPIJobs of {WORKERS + 1} pods added "
        f"to team-nlp; server time of each page in process (Django's test client), median "
        f"of {RUNS}; the hub's memory: Python's allocations for it once it listed all "
        "(tracemalloc).", "",
        "| page | " + " | ".join(f"{s:,} jobs" for s in sizes) + " | ratio |",
        "|---|" + "---|" * (len(sizes) + 1), *rows]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="many-jobs-") as tmp:
        setup_django(Path(tmp))
        results = {}
        for size in sizes:
            sim = start_cluster(Path(tmp), size)
            try:
                results[size] = measure(sim, size)
                with_hub, memory, held = measure_with_hub(sim, size)
                results[size].update({f"{k}, hub": v for k, v in with_hub.items()})
                results[size]["hub memory (MiB)"] = memory
                # what grows with the cluster is what it holds: per job, it should not
                results[size]["hub memory per job (KiB)"] = memory * 1024 / held
            finally:
                sim.stop()
            print(f"{size} jobs: " + ", ".join(f"{k} {v * 1000:.0f} ms" if not _memory(k)
                                               else f"{k} {v:.0f}"
                                               for k, v in results[size].items()), flush=True)
    rows = []
    for name in results[sizes[0]]:
        ratio = results[sizes[-1]][name] / results[sizes[0]][name]
        cells = [f"{results[s][name]:.0f}" if _memory(name) else
                 f"{results[s][name] * 1000:.0f} ms" for s in sizes]
        rows.append(f"| {name} | " + " | ".join(cells) + f" | {ratio:.1f} |")
    if not args.no_record:
        record(rows, sizes)
    print("\n".join(rows))
    pages = [n for n in results[sizes[0]] if n.endswith(", hub")]
    worst = max(pages, key=lambda n: results[sizes[-1]][n] / results[sizes[0]][n])
    print(f"pages served by the hub at {sizes[-1]:,} jobs against {sizes[0]:,}: worst ratio "
          f"{results[sizes[-1]][worst] / results[sizes[0]][worst]:.1f} ({worst}); hub memory "
          f"{results[sizes[-1]]['hub memory (MiB)']:.0f} MiB")


if __name__ == "__main__":
    main()
