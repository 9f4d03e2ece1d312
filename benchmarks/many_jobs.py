"""The pages with many jobs: server time of /jobs/ (first page, a deep page, filtered) and
/cluster/ with 100, 1,000 (and, with --sizes, 10,000) MPIJobs in the cluster, read from
the API with the person's token (a web process without the watch hub) and served from the
hub's summaries (the hub in the web process, as by default).

For each size: simcluster (demo scenario, speed 50) with that many suspended MPIJobs
(one Launcher and one Worker each; suspended, so no pods: the jobs are what grows) added
to team-nlp by the admin, its quota lifted for them; then the dashboard in this process
(Django's test client, a SQLite file, signed in as alice through a real OAuth token, as
the view tests do), each page asked 5 times, the median kept. Cached access answers are
warmed by a first request that is not counted. The figure is the ratio of each page's time
at the largest size to its time at 100 jobs: near 1 means the page does not grow with the
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
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client as k8s  # noqa: E402

from benchmarks.readme import write_section  # noqa: E402
from tests import simcluster_process  # noqa: E402

NS = "team-nlp"
RUNS = 5
PAGES = {
    "/jobs/ first page": ("alice", "/jobs/?project="),
    "/jobs/ deep page": ("alice", "/jobs/?project=&page={last}"),
    "/jobs/ filtered (status, name)": ("alice", "/jobs/?project=&status=Suspended&q=bulk-00"),
    "/cluster/": ("admin", "/cluster/"),
}


def suspended_job(i: int) -> dict:
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": f"bulk-{i:05d}", "namespace": NS},
            "spec": {"slotsPerWorker": 1, "runPolicy": {"suspend": True},
                     "mpiReplicaSpecs": {
                         role: {"replicas": 1, "template": {"spec": {"containers": [{
                             "name": "main", "image": "quay.io/x/y:1",
                             "command": ["sleep", "1"]}]}}}
                         for role in ("Launcher", "Worker")}}}


def fill(sim, jobs: int) -> None:
    with sim.api_client("admin") as api:
        core = k8s.CoreV1Api(api)
        for quota in core.list_namespaced_resource_quota(NS).items:
            core.delete_namespaced_resource_quota(quota.metadata.name, NS)
        custom = k8s.CustomObjectsApi(api)
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: custom.create_namespaced_custom_object(
                "kubeflow.org", "v2beta1", NS, "mpijobs", suspended_job(i)), range(jobs)))


def measure(sim, jobs: int) -> dict[str, float]:
    """Median server time of each page (seconds), in this process."""
    from django.conf import settings
    from django.test import Client

    from tests.dashboard_support import sign_in
    from training import cluster, oauth, permissions

    settings.CLUSTER_KUBECONFIG = str(sim.kubeconfig("dashboard"))
    settings.OAUTH_CLIENT_SECRET = "mpijob-dashboard-demo-secret"  # noqa: S105 - the demo's
    cluster.cluster_config.cache_clear()
    oauth.reset()
    permissions.ANSWERS.clear()
    clients = {}
    for user in ("alice", "admin"):
        clients[user] = Client()
        sign_in(clients[user], sim, user)
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


def measure_with_hub(sim, jobs: int) -> dict[str, float]:
    """The same pages with the watch hub running in this process (ready: it has listed
    everything), as the dashboard runs by default."""
    import training.hub
    from training.hub.hub import build_hub

    hub = build_hub(record_history=False).start()
    try:
        if not hub.ready.wait(300):
            raise SystemExit("the watch hub did not list the cluster within 5 minutes")
        training.hub._hub = hub  # what ensure_started() does on the first websocket
        return measure(sim, jobs)
    finally:
        training.hub._hub = None
        hub.stop()


def record(rows: list[str], sizes: list[int]) -> None:
    write_section("many_jobs.py", "\n".join([
        f"Measured {date.today().isoformat()} on {os.cpu_count()} CPUs ({platform.machine()}, "
        f"Python {platform.python_version()}): simcluster demo with "
        f"{', '.join(f'{s:,}' for s in sizes)} suspended MPIJobs added to team-nlp; server "
        f"time of each page in process (Django's test client), median of {RUNS}.", "",
        "| page | " + " | ".join(f"{s:,} jobs" for s in sizes) + " | ratio |",
        "|---|" + "---|" * (len(sizes) + 1), *rows]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="many-jobs-") as tmp:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp}/db.sqlite3"
        os.environ["WATCHER_EMBEDDED"] = "false"
        os.environ["ALLOWED_HOSTS"] = "testserver,127.0.0.1"
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        results = {}
        for size in sizes:
            sim = simcluster_process.start(Path(tmp) / f"state-{size}", scenario="demo",
                                           speed=50)
            try:
                fill(sim, size)
                results[size] = measure(sim, size)
                with_hub = measure_with_hub(sim, size)
                results[size].update({f"{k}, hub": v for k, v in with_hub.items()
                                      if k.startswith("/jobs/")})
            finally:
                sim.stop()
            print(f"{size} jobs: " + ", ".join(f"{k} {v * 1000:.0f} ms"
                                               for k, v in results[size].items()), flush=True)
    rows = []
    for name in results[sizes[0]]:
        ratio = results[sizes[-1]][name] / results[sizes[0]][name]
        rows.append(f"| {name} | " + " | ".join(f"{results[s][name] * 1000:.0f} ms"
                                                 for s in sizes) + f" | {ratio:.1f} |")
    if not args.no_record:
        record(rows, sizes)
    print("\n".join(rows))
    worst = max(results[sizes[0]], key=lambda n: results[sizes[-1]][n] / results[sizes[0]][n])
    print(f"pages at {sizes[-1]:,} jobs against {sizes[0]:,}: worst ratio "
          f"{results[sizes[-1]][worst] / results[sizes[0]][worst]:.1f} ({worst})")


if __name__ == "__main__":
    main()
