"""Live updates: how soon a page shows a change, and what its viewers cost the API server.

Runs simcluster (demo scenario, speed 20) and the dashboard under daphne with the
in-memory channel layer (the watch hub embedded, as in tests/e2e), in a temporary
directory; creates one small MPIJob as alice in team-nlp and works on it.

1. Latency, over 50 changes (suspend, then resume, 25 times each). Chromium (Playwright)
   signs in as alice through the OpenShift login page and opens the job's page. A
   MutationObserver records, for every status `#job-header-status [data-status]` takes,
   the status and `Date.now()`. For each change the script notes `time.time()` just
   before it sends the PATCH (`spec.runPolicy.suspend`, through the cluster API as alice,
   with the official client) and just after the answer, then waits for the page to show
   the new status (Suspended; after a resume, whatever replaces Suspended). The page has
   no cluster token, so the change cannot be made from the page itself; instead both
   ends read the same clock: Chromium's `Date.now()` and Python's `time.time()` are the
   machine's wall clock (checked below: 20 readings of `Date.now()` each bracketed by
   two of `time.time()`). The change enters the cluster somewhere between the two
   `time.time()`s, so the figure from "PATCH sent" is an upper bound of the latency and
   the one from "PATCH answered" a lower bound; the headline uses the upper bound. A
   watch on the job (as alice) also notes when the MPI operator of simcluster wrote the
   status condition, which splits the time into the cluster's share and the dashboard's
   (hub watch, 0.2 s debounce, rendering, channel layer, websocket, htmx swap). Before
   each change the page shows the job settled (Running before a suspend, Suspended
   before a resume) and the script waits 0.2-0.8 s more, so that changes do not line up
   with the hub's debounce. Percentiles are nearest-rank.

2. API-server requests with 1, 10 and 100 viewers of the job. A viewer is a websocket
   client (aiohttp) on `/ws/live/?job=team-nlp/mpijob/<name>` with the session cookie of
   the browser's signed-in alice (all viewers are the same person: access answers are
   cached per person and project) and an allowed Origin; it reads every frame. The
   requests are counted by simcluster itself (`apiserver_request_total` and
   `apiserver_longrunning_requests` at `/metrics` on its API port, read as admin; see
   simcluster/README.md). For each number of viewers: the requests from the first
   connect until every viewer has received `ready` (access check and snapshot: a one-off
   cost, reported apart), then a steady window (120 s) in which the job is suspended or
   resumed every 20 s. Not counted as the dashboard's: the script's PATCHes of the job
   (`PATCH mpijobs`, which only the script sends) and its reads of `/metrics`. Watches
   are reported apart: those open at the end of each window, and those (re)opened over
   the whole of this part (the hub re-opens each of its watches every ~290 s, whatever
   the viewers: a 2-minute window would catch all or none of them).

Prints the figures and records them in benchmarks/README.md; the last line is the
headline figure.

    .venv/bin/python benchmarks/live_latency.py [--changes 50] [--window 120] [--load 2]

With `--load N`, N processes keep a core busy each while the latency is measured (part 1).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import multiprocessing
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from datetime import date
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client, watch  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from benchmarks.readme import write_section  # noqa: E402
from odh.training.kinds import MPIJOB  # noqa: E402
from odh.training.status.summarize import decide_status, read_conditions  # noqa: E402
from tests import simcluster_process  # noqa: E402
from tests.dashboard_support import register_redirect_uri  # noqa: E402
from tests.e2e.conftest import CHROMIUM, sign_in  # noqa: E402
from tests.training_jobs import GROUP, MPI_VERSION, mpijob  # noqa: E402
from tests.waiting import wait_until  # noqa: E402

NS = "team-nlp"
SPEED = 20
VIEWERS = (1, 10, 100)
CHANGE_EVERY = 20.0  # seconds between changes of the job during a steady window
SESSION_COOKIE = "mpijob_dashboard_session"  # dashboard/settings.py
# as tests/e2e/conftest.py launches Debian's Chromium
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


# -- processes ------------------------------------------------------------------------------------
def start_dashboard(sim: simcluster_process.SimCluster, workdir: Path, lead_ms: int = 10,
                    ) -> tuple[subprocess.Popen, str]:
    """daphne with the dashboard, as tests/e2e/conftest.py's `live_dashboard` starts it."""
    port = simcluster_process.free_port()
    url = f"http://127.0.0.1:{port}"
    register_redirect_uri(sim, f"{url}/oauth/callback/")
    env = dict(os.environ,
               DJANGO_SETTINGS_MODULE="dashboard.settings",
               DATABASE_URL=f"sqlite:///{workdir / 'db.sqlite3'}",
               CLUSTER_KUBECONFIG=str(sim.kubeconfig("dashboard")),
               OAUTH_CLIENT_ID="mpijob-dashboard",
               OAUTH_CLIENT_SECRET="mpijob-dashboard-demo-secret",  # noqa: S106 - the demo's
               PROMETHEUS_URL=sim.prometheus_url,
               ALLOWED_HOSTS="127.0.0.1,localhost",
               LIVE_PUSH_LEAD_MS=str(lead_ms))
    for name in ("REDIS_URL", "DEBUG"):  # the in-memory channel layer, the embedded hub
        env.pop(name, None)
    subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
                   cwd=ROOT, env=env, check=True)
    log_path = workdir / "daphne.log"
    log = open(log_path, "wb")  # handed to the process
    proc = subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p",
                             str(port), "dashboard.asgi:application"], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT)

    def up() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(log_path.read_text(errors="replace"))
        try:
            return requests.get(url + "/healthz", timeout=1).status_code == 200
        except requests.ConnectionError:
            return False

    wait_until(up, 30, message="daphne to answer /healthz")
    return proc, url


class Job:
    """The benchmark's MPIJob, changed through the cluster API as alice."""

    def __init__(self, sim: simcluster_process.SimCluster) -> None:
        self.api = client.CustomObjectsApi(sim.api_client("alice"))
        self.name = f"bench-live-{uuid.uuid4().hex[:5]}"
        self.ref = f"{NS}/mpijob/{self.name}"

    def create(self) -> None:
        # 2 Workers, no GPU, training far longer than the benchmark
        self.api.create_namespaced_custom_object(
            GROUP, MPI_VERSION, NS, "mpijobs", mpijob(self.name, workers=2,
                                                      run_seconds=10_000_000))

    def status(self) -> str:
        job = self.api.get_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs",
                                                    self.name)
        return str(decide_status(MPIJOB, job, read_conditions(job))[0])

    def suspend(self, suspended: bool) -> None:
        self.api.patch_namespaced_custom_object(
            GROUP, MPI_VERSION, NS, "mpijobs", self.name,
            {"spec": {"runPolicy": {"suspend": suspended}}})

    def wait_for(self, status: str, timeout: float = 120) -> None:
        wait_until(lambda: self.status() == status, timeout,
                   message=lambda: f"job {self.name} to be {status} (is {self.status()})")


class StatusWatch:
    """When the cluster's status of the job changed (a watch as alice, in a thread)."""

    def __init__(self, sim: simcluster_process.SimCluster, job: Job) -> None:
        self.api = client.CustomObjectsApi(sim.api_client("alice"))
        self.job = job
        self.changes: list[tuple[float, str]] = []
        self._watch = watch.Watch()
        self._stop = False  # set before the watch is shut
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        last = ""
        try:
            # one watch for the whole measurement (an hour at most); with bookmarks the
            # server notices within seconds that stop() closed it
            for event in self._watch.stream(
                    self.api.list_namespaced_custom_object, GROUP, MPI_VERSION, NS, "mpijobs",
                    field_selector=f"metadata.name={self.job.name}",
                    allow_watch_bookmarks=True, timeout_seconds=3600):
                at = time.time()
                obj = event["object"]
                if event["type"] not in ("ADDED", "MODIFIED"):
                    continue
                status = str(decide_status(MPIJOB, obj, read_conditions(obj))[0])
                if status != last:
                    self.changes.append((at, status))
                    last = status
        except Exception:
            if not self._stop:  # stop() shuts the socket under the reading thread
                raise

    def first(self, after: float, wanted: str | None, unwanted: str | None) -> float | None:
        for at, status in self.changes:
            if at >= after and (status == wanted or (wanted is None and status != unwanted)):
                return at
        return None

    def stop(self) -> None:
        self._stop = True
        self._watch.stop()
        self._thread.join(30)


# -- 1. latency --------------------------------------------------------------------------------
RECORD = """() => {
  window.__changes = [];
  let last = null;
  const note = () => {
    const label = document.querySelector("#job-header-status [data-status]");
    const value = label ? label.getAttribute("data-status") : null;
    if (value !== last) { last = value; window.__changes.push({s: value, t: Date.now()}); }
  };
  note();
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true,
    attributes: true, attributeFilter: ["data-status"], characterData: true});
}"""

FIRST_CHANGE = """([after, wanted, unwanted]) => {
  const c = window.__changes.find(c => c.t >= after &&
    (wanted !== null ? c.s === wanted : (c.s !== null && c.s !== unwanted)));
  return c ? c.t : null;
}"""

SHOWS = """(status) => {
  const label = document.querySelector("#job-header-status [data-status]");
  return !!label && label.getAttribute("data-status") === status;
}"""


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def clock_check(page) -> float:
    """The largest gap between Chromium's Date.now() and time.time(), beyond the bracket."""
    worst = 0.0
    for _ in range(20):
        before = time.time()
        now_ms = page.evaluate("Date.now()")
        after = time.time()
        seen = now_ms / 1000
        # Date.now() is whole milliseconds: allow one below the bracket
        outside = max(before - 0.001 - seen, seen - after, 0.0)
        worst = max(worst, outside)
    return worst


def hub_renders(url: str) -> int:
    """The pushes the dashboard's watch hub has rendered (its /metrics)."""
    text = requests.get(url + "/metrics", timeout=10).text
    found = re.search(r"^mpijob_dashboard_hub_renders_total (\S+)$", text, re.M)
    return int(float(found.group(1))) if found else 0


def measure_latency(sim, url: str, job: Job, changes: int) -> dict:
    from playwright.sync_api import sync_playwright

    status_watch = StatusWatch(sim, job)
    status_watch.start()
    to_dom, to_dom_answered, cluster_part, dashboard_part, patch_rtt = [], [], [], [], []
    renders: list[int] = []  # pushes rendered per change, its trailing burst included
    rendered_before = 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context()
        page = context.new_page()
        sign_in(page, url, "alice", f"/jobs/{job.ref}/")
        page.locator("#live-socket[data-live-state='live']").wait_for(state="attached",
                                                                       timeout=30_000)
        clock_gap = clock_check(page)
        page.evaluate(RECORD)
        for i in range(changes):
            suspend = i % 2 == 0
            before_status = "Running" if suspend else "Suspended"
            page.wait_for_function(SHOWS, arg=before_status, timeout=180_000)
            time.sleep(random.uniform(0.2, 0.8))
            rendered = hub_renders(url)
            if i:
                renders.append(rendered - rendered_before)
            rendered_before = rendered
            wanted = "Suspended" if suspend else None  # after a resume: what replaces it
            sent = time.time()
            job.suspend(suspend)
            answered = time.time()
            shown_ms = page.wait_for_function(
                FIRST_CHANGE, arg=[sent * 1000 - 1, wanted, "Suspended"],
                timeout=60_000).json_value()
            shown = shown_ms / 1000
            wait_until(lambda s=sent, w=wanted: status_watch.first(s, w, "Suspended"), 10,
                       message="the status watch to see the change")
            in_cluster = status_watch.first(sent, wanted, "Suspended")
            to_dom.append(shown - sent)
            to_dom_answered.append(shown - answered)
            cluster_part.append(in_cluster - sent)
            dashboard_part.append(shown - in_cluster)
            patch_rtt.append(answered - sent)
        time.sleep(1.0)  # the last change's trailing pushes
        renders.append(hub_renders(url) - rendered_before)
        cookie = next(c["value"] for c in context.cookies() if c["name"] == SESSION_COOKIE)
        browser.close()
    status_watch.stop()
    return {"to_dom": to_dom, "to_dom_answered": to_dom_answered, "cluster": cluster_part,
            "dashboard": dashboard_part, "patch": patch_rtt, "clock_gap": clock_gap,
            "renders": renders,
            "cookie": cookie}


# -- 2. requests per viewer ----------------------------------------------------------------------
Counts = Counter  # (verb, resource, subresource, scope) -> requests


def read_metrics(sim) -> tuple[Counts, Counts]:
    """(apiserver_request_total, apiserver_longrunning_requests) by verb/resource/sub/scope."""
    resp = requests.get(sim.api_url + "/metrics", verify=str(sim.ca_file), timeout=10,
                        headers={"Authorization": f"Bearer {sim.token('admin')}"})
    resp.raise_for_status()
    total, open_now = Counter(), Counter()
    for family in text_string_to_metric_families(resp.text):
        for s in family.samples:
            key = (s.labels.get("verb", ""), s.labels.get("resource", ""),
                   s.labels.get("subresource", ""), s.labels.get("scope", ""))
            if s.name == "apiserver_request_total":
                total[key] += s.value
            elif s.name == "apiserver_longrunning_requests":
                open_now[key] += s.value
    return total, open_now


def dashboards(delta: Counts) -> Counts:
    """The requests the dashboard made: not the script's PATCHes nor its /metrics reads."""
    return Counter({k: v for k, v in delta.items() if v and not (
        (k[0] == "PATCH" and k[1] == "mpijobs") or k[2] == "/metrics")})


def split(counts: Counts) -> tuple[float, float]:
    """(plain requests, watches) of a count."""
    watches = sum(v for k, v in counts.items() if k[0] == "WATCH")
    return sum(counts.values()) - watches, watches


def describe(counts: Counts) -> str:
    parts = [f"{int(v)} {verb} {resource or sub}{'/' + sub if resource and sub else ''}"
             for (verb, resource, sub, _), v in sorted(counts.items(), key=lambda kv: -kv[1])]
    return ", ".join(parts) or "none"


class Viewer:
    def __init__(self) -> None:
        self.ready = asyncio.Event()
        self.frames = 0  # after ready
        self.error: str | None = None


async def follow(session, ws_url: str, headers: dict, viewer: Viewer) -> None:
    import aiohttp

    try:
        async with session.ws_connect(ws_url, headers=headers) as ws:
            async for msg in ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    break
                if msg.data.startswith("{"):
                    data = json.loads(msg.data)
                    if data.get("type") == "ready":
                        viewer.ready.set()
                        continue
                    if data.get("type") == "closing":
                        viewer.error = f"closed {data.get('code')}: {data.get('reason')}"
                        break
                if viewer.ready.is_set():
                    viewer.frames += 1
    except Exception as e:
        viewer.error = repr(e)
    finally:
        viewer.ready.set()  # never leave a waiter hanging: `error` says what happened


async def with_viewers(sim, url: str, job: Job, cookie: str, n: int, window: float) -> dict:
    import aiohttp

    ws_url = url.replace("http://", "ws://") + f"/ws/live/?job={job.ref}"
    headers = {"Origin": url, "Cookie": f"{SESSION_COOKIE}={cookie}"}
    before, _ = await asyncio.to_thread(read_metrics, sim)
    viewers = [Viewer() for _ in range(n)]
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        started = time.monotonic()
        tasks = [asyncio.create_task(follow(session, ws_url, headers, v)) for v in viewers]
        await asyncio.wait_for(asyncio.gather(*(v.ready.wait() for v in viewers)), 120)
        connect_seconds = time.monotonic() - started
        errors = [v.error for v in viewers if v.error]
        if errors:
            raise RuntimeError(f"{len(errors)} of {n} viewers failed: {errors[0]}")
        connected, _ = await asyncio.to_thread(read_metrics, sim)
        window_start = time.monotonic()
        suspended, changes = False, 0
        while True:
            next_change = window_start + CHANGE_EVERY / 2 + changes * CHANGE_EVERY
            if next_change >= window_start + window:
                break
            await asyncio.sleep(next_change - time.monotonic())
            suspended = not suspended
            await asyncio.to_thread(job.suspend, suspended)
            changes += 1
        await asyncio.sleep(window_start + window - time.monotonic())
        after, open_now = await asyncio.to_thread(read_metrics, sim)
        minutes = (time.monotonic() - window_start) / 60
        frames = [v.frames for v in viewers]
        errors = [v.error for v in viewers if v.error]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    if errors:
        raise RuntimeError(f"{len(errors)} of {n} viewers failed: {errors[0]}")
    # watches are the hub's, re-opened on their own schedule: counted for the whole run
    connect = Counter({k: v for k, v in dashboards(connected - before).items()
                       if k[0] != "WATCH"})
    steady = dashboards(after - connected)
    steady_plain, _ = split(steady)
    steady = Counter({k: v for k, v in steady.items() if k[0] != "WATCH"})
    return {"viewers": n, "connect_seconds": connect_seconds, "connect": connect,
            "steady": steady, "plain_per_min": steady_plain / minutes,
            "open_watches": int(sum(v for k, v in open_now.items() if k[0] == "WATCH")),
            "changes": changes, "frames_min": min(frames), "frames_max": max(frames),
            "minutes": minutes}


def measure_viewers(sim, url: str, job: Job, cookie: str, levels: tuple[int, ...],
                    window: float) -> tuple[list[dict], dict]:
    """Each number of viewers in turn; and the watches the dashboard opened meanwhile."""
    results = []
    start = None
    for n in levels:
        if job.status() != "Running":  # every level starts from a running job
            job.suspend(False)
            job.wait_for("Running")
        # no watch but the dashboard's (the script's status watch has ended)
        wait_until(lambda: not any(v for k, v in read_metrics(sim)[1].items()
                                   if k[0] == "WATCH" and k[3] == "namespace"), 90,
                   message="the script's own watch to end")
        if start is None:
            start = (time.monotonic(), read_metrics(sim)[0])
        results.append(asyncio.run(with_viewers(sim, url, job, cookie, n, window)))
        time.sleep(2)  # let the closed sockets leave the dashboard
    assert start is not None
    _, opened = split(dashboards(read_metrics(sim)[0] - start[1]))
    return results, {"opened": int(opened), "minutes": (time.monotonic() - start[0]) / 60}


# -- report ----------------------------------------------------------------------------------------
def record(figures: dict[str, str], changes: int, window: float,
           levels: tuple[int, ...]) -> None:
    lines = [f"Measured {date.today().isoformat()} on {os.cpu_count()} CPUs "
             f"({platform.machine()}, Python {platform.python_version()}): simcluster demo "
             f"at speed {SPEED}, daphne with the embedded hub; {changes} status changes "
             f"(suspend/resume as alice) watched in Chromium; then "
             f"{', '.join(map(str, levels))} websocket viewers of the job (one "
             f"signed-in person), each for a {window:.0f} s window with a change every "
             f"{CHANGE_EVERY:.0f} s. Requests as simcluster's `/metrics` counts them, "
             "without the script's own.",
             "",
             "| figure | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in figures.items()]
    write_section("live_latency.py", "\n".join(lines))


def _spin(stop) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


@contextlib.contextmanager
def busy_cores(count: int):
    """`count` processes spinning on a core each for as long as the block runs: the latency
    under load (a busy machine, not a quiet benchmark box)."""
    stop = multiprocessing.Event()
    spinners = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
                for _ in range(count)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        stop.set()
        for spinner in spinners:
            spinner.join(5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--changes", type=int, default=50, help="status changes to time")
    parser.add_argument("--window", type=float, default=120,
                        help="seconds of steady state per number of viewers")
    parser.add_argument("--viewers", default=",".join(map(str, VIEWERS)),
                        help="numbers of viewers, comma-separated")
    parser.add_argument("--lead-ms", type=int, default=10,
                        help="the hub's LIVE_PUSH_LEAD_MS (200: every change waits the whole "
                        "0.2 s window, as before 2026-11-26)")
    parser.add_argument("--load", type=int, default=0,
                        help="processes that keep a core busy each while the latency is "
                        "measured (2 on these 2-core machines: both cores busy)")
    parser.add_argument("--no-record", action="store_true",
                        help="print the figures without writing benchmarks/README.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="live-latency-") as tmp:
        sim = simcluster_process.start(Path(tmp) / "state", scenario="demo", speed=SPEED)
        daphne = None
        try:
            daphne, url = start_dashboard(sim, Path(tmp), args.lead_ms)
            job = Job(sim)
            job.create()
            job.wait_for("Running")
            with busy_cores(args.load):
                lat = measure_latency(sim, url, job, args.changes)
            levels, watches = measure_viewers(sim, url, job, lat["cookie"],
                                     tuple(int(n) for n in args.viewers.split(",")), args.window)
        except Exception:
            for name, path in (("simcluster", sim.log_path),
                               ("daphne", Path(tmp) / "daphne.log")):
                if path.exists():
                    print(f"--- {name} log (end) ---\n"
                          + path.read_text(errors="replace")[-4000:], file=sys.stderr)
            raise
        finally:
            if daphne is not None:
                daphne.terminate()
                try:
                    daphne.wait(10)
                except subprocess.TimeoutExpired:
                    daphne.kill()
            sim.stop()

    ms = 1000
    figures = {
        "cores kept busy while the latency was measured (--load)": str(args.load),
        "clock check: Date.now() outside time.time() brackets, worst": (
            f"{lat['clock_gap'] * ms:.1f} ms"),
        f"status change to DOM, from PATCH sent (n={args.changes}): p50 / p95 / max": (
            f"{statistics.median(lat['to_dom']):.3f} / {percentile(lat['to_dom'], 95):.3f} / "
            f"{max(lat['to_dom']):.3f} s"),
        "status change to DOM, from PATCH answered: p50 / p95": (
            f"{statistics.median(lat['to_dom_answered']):.3f} / "
            f"{percentile(lat['to_dom_answered'], 95):.3f} s"),
        "of which in simcluster (PATCH sent to status condition seen by a watch): p50 / p95": (
            f"{statistics.median(lat['cluster']):.3f} / {percentile(lat['cluster'], 95):.3f} s"),
        f"pushes rendered per change, with what follows it (LIVE_PUSH_LEAD_MS={args.lead_ms}): "
        "p50 / max": f"{statistics.median(lat['renders']):g} / {max(lat['renders'])}",
        "of which in the dashboard (condition seen to DOM): p50 / p95": (
            f"{statistics.median(lat['dashboard']):.3f} / "
            f"{percentile(lat['dashboard'], 95):.3f} s"),
        "PATCH round trip: p50": f"{statistics.median(lat['patch']) * ms:.1f} ms",
    }
    for r in levels:
        n = r["viewers"]
        plain, _ = split(r["connect"])
        figures[f"{n} viewer(s): all ready after"] = f"{r['connect_seconds']:.2f} s"
        figures[f"{n} viewer(s): requests to connect (one-off)"] = (
            f"{int(plain)} ({describe(r['connect'])})")
        figures[f"{n} viewer(s): steady requests/min, watches apart"] = (
            f"{r['plain_per_min']:.1f} ({describe(r['steady'])} in {r['minutes']:.1f} min, "
            f"{r['changes']} changes)")
        figures[f"{n} viewer(s): watches open at the end of the window"] = (
            str(r["open_watches"]))
        figures[f"{n} viewer(s): frames each viewer received in the window"] = (
            f"{r['frames_min']}-{r['frames_max']}")
    figures["watches (re)opened by the dashboard while viewers came and went"] = (
        f"{watches['opened']} in {watches['minutes']:.1f} min "
        f"({watches['opened'] / watches['minutes']:.1f}/min)")
    for k, v in figures.items():
        print(f"{k}: {v}")
    if not args.no_record:
        record(figures, args.changes, args.window, tuple(r["viewers"] for r in levels))
    per_min = "/".join(f"{r['plain_per_min']:.1f}" for r in levels)
    open_watches = "/".join(str(r["open_watches"]) for r in levels)
    print(f"status change to DOM p50 {statistics.median(lat['to_dom']):.2f} s p95 "
          f"{percentile(lat['to_dom'], 95):.2f} s; API requests/min at "
          f"{'/'.join(str(r['viewers']) for r in levels)} viewers: {per_min} "
          f"(+ watches open {open_watches})")


if __name__ == "__main__":
    main()
