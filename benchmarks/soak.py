"""Soak: an hour of job churn with 200 live viewers; the processes' memory and descriptors.

Runs the deployment for many users on this machine: simcluster (demo scenario, speed 20),
one web process (daphne) and `runwatcher` (the watch hub) over a Redis of its own
(redis-server on a free port) and a PostgreSQL database of its own (created on the local
server, `POSTGRES_URL`, dropped after). Chromium signs alice in once; the viewers are
websocket clients (aiohttp) with her session cookie, as a browser tab's socket is:

- 100 on the job list's socket for team-nlp (`ns=team-nlp`): every row push;
- 100 on job pages: each follows one of the churned jobs and, when its job is deleted,
  opens the page of a newer one (a new socket), so sockets come and go all hour.

Churn, through the cluster API as alice (team-nlp's quota lifted by the admin first): a
new small MPIJob every 5 s (1 Worker, a minute
of training: 3 s at speed 20), and every job finished more than 20 s ago deleted. So jobs
are created, run, finish (history written by runwatcher) and are deleted all the time.

simcluster deletes Events 10 minutes after their last update (`--event-ttl 600`; a real
API server does after an hour), or the hub's index and every job page's read of the
project's Events grow with every job ever made. Every minute the script records, for the
web process and for runwatcher: resident memory
(VmRSS), open descriptors (/proc/<pid>/fd), threads; and the viewers connected, frames
received, sockets opened, jobs created and deleted. Memory and descriptors should stay
flat after warm-up: the figure is their growth from minute 10 to the end.

    .venv/bin/python benchmarks/soak.py [--minutes 60] [--viewers 200] [--no-record]

Prints one line per minute, then the figures, and records them in benchmarks/README.md;
the last line is the headline figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client as k8s  # noqa: E402

from benchmarks.live_latency import CHROMIUM_ARGS, SESSION_COOKIE  # noqa: E402
from benchmarks.readme import write_section  # noqa: E402
from tests import simcluster_process  # noqa: E402
from tests.dashboard_support import register_redirect_uri  # noqa: E402
from tests.e2e.conftest import CHROMIUM, sign_in  # noqa: E402
from tests.integration.hub.conftest import RedisServer  # noqa: E402
from tests.training_jobs import GROUP, MPI_VERSION, mpijob  # noqa: E402
from tests.waiting import wait_until  # noqa: E402

NS = "team-nlp"
SPEED = 20
CREATE_EVERY = 5.0
DELETE_AFTER = 20.0  # seconds after a job finished
SAMPLE_EVERY = 60.0
WARM_UP_MINUTES = 10
EVENT_TTL = 600  # seconds
POSTGRES = os.environ.get("POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test")


# -- processes ---------------------------------------------------------------------------
def proc_figures(pid: int) -> dict[str, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kib = int(re.search(r"^VmRSS:\s+(\d+)", status, re.M).group(1))
    threads = int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))
    return {"rss": rss_kib / 1024, "fds": len(os.listdir(f"/proc/{pid}/fd")),
            "threads": threads}


class Deployment:
    def __init__(self, sim: simcluster_process.SimCluster, work: Path) -> None:
        import psycopg

        self.work = work
        self.redis = RedisServer(work / "redis.log")
        self.db_name = f"soak_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        self.admin = psycopg.connect(POSTGRES, autocommit=True, connect_timeout=3)
        self.admin.execute(f'CREATE DATABASE "{self.db_name}"')
        self.port = simcluster_process.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        register_redirect_uri(sim, f"{self.url}/oauth/callback/")
        env = dict(os.environ, PYTHONUNBUFFERED="1",
                   DJANGO_SETTINGS_MODULE="dashboard.settings",
                   DATABASE_URL=re.sub(r"/[^/]*$", f"/{self.db_name}", POSTGRES),
                   REDIS_URL=self.redis.url, WATCHER_EMBEDDED="false",
                   SECRET_KEY="soak-" + uuid.uuid4().hex,
                   CLUSTER_KUBECONFIG=str(sim.kubeconfig("dashboard")),
                   OAUTH_CLIENT_ID="mpijob-dashboard",
                   OAUTH_CLIENT_SECRET="mpijob-dashboard-demo-secret",  # noqa: S106 - demo's
                   PROMETHEUS_URL=sim.prometheus_url, ALLOWED_HOSTS="127.0.0.1,localhost")
        env.pop("DEBUG", None)
        subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
                       cwd=ROOT, env=env, check=True)
        self.processes: dict[str, subprocess.Popen] = {}
        for name, args in (("hub", ["manage.py", "runwatcher"]),
                           ("web", ["-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port),
                                    "dashboard.asgi:application"])):
            with open(work / f"{name}.log", "ab") as log:
                self.processes[name] = subprocess.Popen([sys.executable, *args], cwd=ROOT,
                                                        env=env, stdout=log,
                                                        stderr=subprocess.STDOUT)
        wait_until(lambda: "runwatcher: READY" in self.log("hub"), 60,
                   message=lambda: self.log("hub"))
        wait_until(self._answers, 60, message=lambda: self.log("web"))

    def log(self, name: str) -> str:
        path = self.work / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _answers(self) -> bool:
        import requests

        assert self.processes["web"].poll() is None, self.log("web")
        try:
            return requests.get(self.url + "/healthz", timeout=1).status_code == 200
        except requests.ConnectionError:
            return False

    def figures(self) -> dict[str, dict[str, float]]:
        for name, proc in self.processes.items():
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited:\n{self.log(name)[-4000:]}")
        return {name: proc_figures(proc.pid) for name, proc in self.processes.items()}

    def stop(self) -> None:
        for proc in self.processes.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
        self.redis.stop()
        self.admin.execute(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
        self.admin.close()


def session_cookie(url: str) -> str:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context()
        page = context.new_page()
        sign_in(page, url, "alice")
        cookie = next(c["value"] for c in context.cookies() if c["name"] == SESSION_COOKIE)
        browser.close()
    return cookie


# -- churn -------------------------------------------------------------------------------
class Churn:
    """Creates a job every CREATE_EVERY seconds, deletes the finished ones (a thread)."""

    def __init__(self, sim: simcluster_process.SimCluster) -> None:
        with sim.api_client("admin") as api:  # the demo's quota counts at most 20 MPIJobs
            core = k8s.CoreV1Api(api)
            for quota in core.list_namespaced_resource_quota(NS).items:
                core.delete_namespaced_resource_quota(quota.metadata.name, NS)
        self.api = k8s.CustomObjectsApi(sim.api_client("alice"))
        self.created = self.deleted = self.errors = 0
        self.live: list[str] = []  # names, oldest first
        self._finished_at: dict[str, float] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def newest(self) -> str | None:
        with self._lock:
            return self.live[-1] if self.live else None

    def _run(self) -> None:
        while not self._stop.wait(CREATE_EVERY):
            try:
                self._step()
            except Exception as e:  # a refused request: counted, the soak goes on
                self.errors += 1
                print(f"churn: {e!r}", file=sys.stderr)

    def _step(self) -> None:
        name = f"soak-{uuid.uuid4().hex[:6]}"
        self.api.create_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs",
                                                 mpijob(name, workers=1, run_seconds=60))
        with self._lock:
            self.live.append(name)
        self.created += 1
        listed = self.api.list_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs")
        now = time.monotonic()
        for job in listed["items"]:
            job_name = job["metadata"]["name"]
            if not job_name.startswith("soak-"):
                continue
            done = any(c.get("type") in ("Succeeded", "Failed") and c.get("status") == "True"
                       for c in (job.get("status") or {}).get("conditions") or [])
            if done:
                self._finished_at.setdefault(job_name, now)
            if done and now - self._finished_at[job_name] >= DELETE_AFTER:
                self.api.delete_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs",
                                                         job_name)
                self._finished_at.pop(job_name, None)
                with self._lock:
                    if job_name in self.live:
                        self.live.remove(job_name)
                self.deleted += 1

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)


# -- viewers -----------------------------------------------------------------------------
class Viewers:
    def __init__(self, url: str, cookie: str, churn: Churn) -> None:
        self.url, self.cookie, self.churn = url, cookie, churn
        self.connected = 0
        self.opened = 0
        self.frames = 0
        self.failures = 0

    async def follow(self, session, query_of) -> None:
        """One viewer: connects, reads every frame; connects again (to `query_of()`) when
        the socket ends, as a page does (a job page whose job was deleted: a newer job)."""
        import aiohttp

        headers = {"Origin": self.url, "Cookie": f"{SESSION_COOKIE}={self.cookie}"}
        while True:
            query = query_of()
            if query is None:
                await asyncio.sleep(1)
                continue
            ws_url = self.url.replace("http://", "ws://") + f"/ws/live/?{query}"
            self.opened += 1
            try:
                async with session.ws_connect(ws_url, headers=headers) as ws:
                    self.connected += 1
                    try:
                        async for msg in ws:
                            if msg.type != aiohttp.WSMsgType.TEXT:
                                break
                            self.frames += 1
                            if msg.data.startswith("{") and '"deleted"' in msg.data:
                                break
                            if 'data-status="Deleted"' in msg.data:
                                break  # its job is gone: the viewer moves on
                    finally:
                        self.connected -= 1
            except aiohttp.ClientError:
                self.failures += 1
            await asyncio.sleep(1)

    async def run(self, n: int, stop: asyncio.Event) -> None:
        import aiohttp

        def newest_job() -> str | None:
            name = self.churn.newest()
            return f"job={NS}/mpijob/{name}" if name else None

        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            tasks = [asyncio.create_task(self.follow(session, lambda: f"ns={NS}"))
                     for _ in range(n // 2)]
            tasks += [asyncio.create_task(self.follow(session, newest_job))
                      for _ in range(n - n // 2)]
            await stop.wait()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


# -- the run -----------------------------------------------------------------------------
def soak(minutes: float, n_viewers: int) -> tuple[list[dict], dict]:
    samples: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        work = Path(tmp)
        # Events expire, as a real API server deletes them after an hour (--event-ttl):
        # sooner here, so that the hour shows the steady state, not the Events piling up
        sim = simcluster_process.start(work / "state", scenario="demo", speed=SPEED,
                                       extra=["--event-ttl", str(EVENT_TTL)])
        deployment = churn = None
        try:
            deployment = Deployment(sim, work)
            cookie = session_cookie(deployment.url)
            churn = Churn(sim)
            churn.start()
            viewers = Viewers(deployment.url, cookie, churn)
            loop = asyncio.new_event_loop()
            stop = asyncio.Event()
            runner = threading.Thread(target=loop.run_until_complete,
                                      args=(viewers.run(n_viewers, stop),), daemon=True)
            runner.start()
            started = time.monotonic()
            for minute in range(int(minutes) + 1):
                time.sleep(max(0.0, started + minute * SAMPLE_EVERY - time.monotonic()))
                figures = deployment.figures()
                sample = {"minute": minute, **{f"{p}_{k}": v for p, f in figures.items()
                                               for k, v in f.items()},
                          "viewers": viewers.connected, "opened": viewers.opened,
                          "frames": viewers.frames, "failures": viewers.failures,
                          "created": churn.created, "deleted": churn.deleted,
                          "churn_errors": churn.errors}
                samples.append(sample)
                print(json.dumps(sample), flush=True)
            loop.call_soon_threadsafe(stop.set)
            runner.join(30)
            hub_stats = {"history lines": deployment.log("hub").count("history")}
        except Exception:
            if deployment is not None:
                for name in ("web", "hub"):
                    print(f"--- {name} log (end) ---\n{deployment.log(name)[-4000:]}",
                          file=sys.stderr)
            raise
        finally:
            if churn is not None:
                churn.stop()
            if deployment is not None:
                deployment.stop()
            sim.stop()
    return samples, hub_stats


def growth(samples: list[dict], key: str) -> tuple[float, float, float]:
    """(value after warm-up, value at the end, most in between)."""
    settled = [s for s in samples if s["minute"] >= WARM_UP_MINUTES] or samples
    return settled[0][key], settled[-1][key], max(s[key] for s in settled)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--viewers", type=int, default=200)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    samples, _ = soak(args.minutes, args.viewers)
    last = samples[-1]
    figures: dict[str, str] = {}
    for proc, label in (("web", "web process (daphne)"), ("hub", "runwatcher (watch hub)")):
        for key, unit, fmt in (("rss", " MiB", "{:.0f}"), ("fds", "", "{:.0f}"),
                               ("threads", "", "{:.0f}")):
            a, b, most = growth(samples, f"{proc}_{key}")
            figures[f"{label}: {key} at minute {WARM_UP_MINUTES} / at the end / most"] = (
                f"{fmt.format(a)} / {fmt.format(b)} / {fmt.format(most)}{unit}")
    figures["viewers connected at the end"] = str(last["viewers"])
    figures["sockets opened (viewers moving to newer jobs)"] = str(last["opened"])
    figures["frames received by the viewers"] = f"{last['frames']:,}"
    figures["jobs created / deleted"] = f"{last['created']} / {last['deleted']}"
    figures["failed connects / churn errors"] = f"{last['failures']} / {last['churn_errors']}"
    for name, value in figures.items():
        print(f"{name}: {value}")
    web = growth(samples, "web_rss")
    hub = growth(samples, "hub_rss")
    headline = (f"soak {args.minutes:g} min, {args.viewers} viewers: web RSS "
                f"{web[0]:.0f} -> {web[1]:.0f} MiB, hub RSS {hub[0]:.0f} -> {hub[1]:.0f} MiB, "
                f"web fds {growth(samples, 'web_fds')[0]:.0f} -> "
                f"{growth(samples, 'web_fds')[1]:.0f}")
    if not args.no_record:
        rows = "\n".join(f"| {name} | {value} |" for name, value in figures.items())
        minutes = "\n".join(
            f"| {s['minute']} | {s['web_rss']:.0f} | {s['web_fds']:.0f} | {s['hub_rss']:.0f} "
            f"| {s['hub_fds']:.0f} | {s['viewers']} | {s['created']} |"
            for s in samples if s["minute"] % 5 == 0 or s is last)
        write_section("soak.py", (
            f"Measured {date.today().isoformat()} on {os.cpu_count()} CPUs "
            f"({platform.machine()}, Python {platform.python_version()}): {args.minutes:g} "
            f"minutes, {args.viewers} viewers (half on the job list's socket, half on job "
            f"pages moving to newer jobs), a job created every {CREATE_EVERY:g} s and "
            f"deleted {DELETE_AFTER:g} s after it finished; simcluster demo at speed "
            f"{SPEED}, one daphne, runwatcher, Redis, PostgreSQL.\n\n"
            f"| figure | value |\n|---|---|\n{rows}\n\n"
            "Every five minutes (MiB, descriptors):\n\n"
            "| minute | web RSS | web fds | hub RSS | hub fds | viewers | jobs created |\n"
            f"|---|---|---|---|---|---|---|\n{minutes}\n"))
    print(headline)


if __name__ == "__main__":
    main()
