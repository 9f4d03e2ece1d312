"""What a job page's socket costs to connect, for a fresh job and for the same job aged.

Runs simcluster (demo scenario) and the dashboard under daphne with the embedded watch
hub, as benchmarks/live_latency.py does, and creates one small MPIJob as alice. Then
100 websocket viewers (aiohttp, alice's session cookie from a real sign-in) connect at
once to the job's socket as its Overview tab opens it (`tab=overview`) and, apart, as
its Events tab does (`tab=events`); each waits for its snapshot (`ready`). Measured per
100 connects, the median of 5 rounds: the daphne process's CPU time (user + system, from
/proc), the time until all are ready, and the API requests the dashboard made meanwhile
(simcluster's `/metrics`; the most of any round; watches and the hub's /version probe
apart). Then the job is aged: suspended and resumed 40 times (each
time the MPI operator deletes and creates its pods, and the cluster records Events),
and the same connects are measured again.

The figure is the aged job's Overview connect CPU against the fresh job's: near 1 means
connecting does not grow with the job's age. The Events tab shows the job's Events, so
its snapshot grows with them, as the page does.

    .venv/bin/python benchmarks/connect_cost.py [--viewers 100] [--cycles 40] [--no-record]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client  # noqa: E402

from benchmarks.live_latency import (  # noqa: E402
    NS,
    SESSION_COOKIE,
    Job,
    Viewer,
    dashboards,
    describe,
    follow,
    read_metrics,
    start_dashboard,
)
from benchmarks.readme import write_section  # noqa: E402
from benchmarks.soak import session_cookie  # noqa: E402
from tests import simcluster_process  # noqa: E402

SPEED = 50
ROUNDS = 5
TABS = ("overview", "events")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def connect_all(url: str, ref: str, cookie: str, tab: str, n: int) -> float:
    """n viewers of the job's socket connected at once; seconds until all are ready."""
    import aiohttp

    ws_url = url.replace("http://", "ws://") + f"/ws/live/?job={ref}&tab={tab}"
    headers = {"Origin": url, "Cookie": f"{SESSION_COOKIE}={cookie}"}
    viewers = [Viewer() for _ in range(n)]
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        started = time.monotonic()
        tasks = [asyncio.create_task(follow(session, ws_url, headers, v)) for v in viewers]
        await asyncio.wait_for(asyncio.gather(*(v.ready.wait() for v in viewers)), 300)
        seconds = time.monotonic() - started
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    errors = [v.error for v in viewers if v.error]
    if errors:
        raise RuntimeError(f"{len(errors)} of {n} viewers failed: {errors[0]}")
    return seconds


def measure(sim, daphne_pid: int, url: str, job: Job, cookie: str, tab: str,
            n: int) -> dict:
    """Median of ROUNDS rounds of n connects (CPU time is counted in 10 ms ticks, and the
    hub's own work shares the process)."""
    rounds = []
    for _ in range(ROUNDS):
        before, cpu = read_metrics(sim)[0], cpu_seconds(daphne_pid)
        seconds = asyncio.run(connect_all(url, job.ref, cookie, tab, n))
        cpu = cpu_seconds(daphne_pid) - cpu
        requests = Counter({k: v for k, v in dashboards(read_metrics(sim)[0] - before).items()
                            if k[0] != "WATCH" and k[2] != "/version"})  # the hub's probe
        rounds.append({"cpu": cpu, "seconds": seconds, "requests": requests})
        time.sleep(2)  # let the closed sockets leave the dashboard
    rounds.sort(key=lambda r: r["cpu"])
    median = dict(rounds[len(rounds) // 2])
    median["seconds"] = statistics.median(r["seconds"] for r in rounds)
    median["requests"] = max((r["requests"] for r in rounds), key=lambda c: sum(c.values()))
    return median


def job_events(sim, job: Job) -> int:
    """Events of the job and of its pods, as the Events tab lists them."""
    core = client.CoreV1Api(sim.api_client("alice"))
    return sum(1 for e in core.list_namespaced_event(NS).items
               if (e.involved_object.name or "").startswith(job.name))


def age(job: Job, cycles: int) -> None:
    for _ in range(cycles):
        job.suspend(True)
        job.wait_for("Suspended")
        job.suspend(False)
        job.wait_for("Running")


def record(figures: dict[str, str], n: int, cycles: int) -> None:
    write_section("connect_cost.py", "\n".join([
        f"Measured {date.today().isoformat()} on {os.cpu_count()} CPUs "
        f"({platform.machine()}, Python {platform.python_version()}): simcluster demo at "
        f"speed {SPEED}, daphne with the embedded hub; {n} websocket viewers of one MPIJob "
        f"(2 Workers) connecting at once, per tab, before and after {cycles} "
        "suspend/resume cycles; the daphne process's CPU time, the time until all had "
        f"their snapshot (medians of {ROUNDS} rounds), and the API requests made to "
        "connect (watches and the hub's probe apart).", "",
        "| figure | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in figures.items())]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--cycles", type=int, default=40)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="connect-cost-") as tmp:
        sim = simcluster_process.start(Path(tmp) / "state", scenario="demo", speed=SPEED)
        daphne = None
        try:
            daphne, url = start_dashboard(sim, Path(tmp))
            cookie = session_cookie(url)
            job = Job(sim)
            job.create()
            job.wait_for("Running")
            # the hub starts with the first socket: one connect first, not counted
            asyncio.run(connect_all(url, job.ref, cookie, "overview", 1))
            for stage in ("fresh", "aged"):
                if stage == "aged":
                    age(job, args.cycles)
                    time.sleep(3)  # the hub's index has the last changes
                results[f"{stage} event count"] = {"count": job_events(sim, job)}
                for tab in TABS:
                    results[f"{stage} {tab}"] = measure(sim, daphne.pid, url, job, cookie,
                                                        tab, args.viewers)
                    print(stage, tab, results[f"{stage} {tab}"], flush=True)
        finally:
            if daphne is not None:
                daphne.terminate()
                daphne.wait(10)
            sim.stop()

    n = args.viewers
    figures = {}
    for stage in ("fresh", "aged"):
        label = "fresh job" if stage == "fresh" else f"after {args.cycles} suspend/resume cycles"
        figures[f"{label}: the job's Events"] = str(results[f"{stage} event count"]["count"])
        for tab in TABS:
            r = results[f"{stage} {tab}"]
            figures[f"{label}, {tab.title()} tab: CPU for {n} connects"] = f"{r['cpu']:.2f} s"
            figures[f"{label}, {tab.title()} tab: all {n} ready after"] = f"{r['seconds']:.2f} s"
            figures[f"{label}, {tab.title()} tab: API requests to connect"] = (
                f"{int(sum(r['requests'].values()))} ({describe(r['requests'])})")
    ratio = results["aged overview"]["cpu"] / results["fresh overview"]["cpu"]
    figures["Overview connect CPU, aged / fresh"] = f"{ratio:.2f}"
    for k, v in figures.items():
        print(f"{k}: {v}")
    if not args.no_record:
        record(figures, n, args.cycles)
    print(f"{n} connects to a job's Overview: {results['fresh overview']['cpu']:.2f} s CPU "
          f"fresh, {results['aged overview']['cpu']:.2f} s after {args.cycles} cycles "
          f"(ratio {ratio:.2f})")


if __name__ == "__main__":
    main()
