"""What a first visit downloads: bytes on the wire for the job list and a job's pages.

Runs simcluster (demo scenario, speed 20) and the dashboard as the container image does:
static files collected (`collectstatic` into a temporary STATIC_ROOT, so WhiteNoise sends
them fingerprinted and pre-compressed), under daphne. Chromium (Playwright) signs alice in
once; each page is then opened in a fresh browser context with her session cookie and
an empty cache (a first visit), and every response's size on the wire is added up
(headers and body as received, compressed where the server compressed it: Playwright's
`request.sizes()`), until the network is idle. A second visit of the same page in the same
context shows what the cache saves (static files are cached for a year).

Pages: `/jobs/` (alice's projects), a running job's Overview and its Metrics tab (the
only page that loads Plotly).

    .venv/bin/python benchmarks/page_weight.py [--no-record]

Prints the figures and records them in benchmarks/README.md; the last line is the
headline figure (the first visit of /jobs/).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.live_latency import CHROMIUM_ARGS, SESSION_COOKIE, start_dashboard  # noqa: E402
from benchmarks.readme import write_section  # noqa: E402
from tests import simcluster_process  # noqa: E402
from tests.e2e.conftest import CHROMIUM, sign_in  # noqa: E402

NS = "team-nlp"
JOB = f"/jobs/{NS}/mpijob/bert-large-pretrain/"
PAGES = {
    "/jobs/": "/jobs/",
    "a running job's Overview": JOB,
    "its Metrics tab (Plotly)": JOB + "?tab=metrics",
}
TARGET_KIB = 400  # the first visit of /jobs/ (issue 14)


def collect_static(work: Path) -> Path:
    root = work / "static"
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="dashboard.settings",
               STATIC_ROOT=str(root), SECRET_KEY="collectstatic-only")  # noqa: S106
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
                   cwd=ROOT, env=env, check=True)
    return root


def weigh(context, url: str) -> dict[str, float]:
    """Open `url` in `context`; bytes received (headers and body) and requests made."""
    page = context.new_page()
    responses = []
    page.on("requestfinished", lambda request: responses.append(request))
    page.goto(url, wait_until="networkidle")
    total = html = 0
    for request in responses:
        sizes = request.sizes()
        size = sizes["responseBodySize"] + sizes["responseHeadersSize"]
        total += size
        if request.resource_type == "document":
            html += size
    page.close()
    return {"bytes": total, "html": html, "requests": len(responses)}


def measure(url: str) -> dict[str, dict[str, float]]:
    from playwright.sync_api import sync_playwright

    results = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context()
        sign_in(context.new_page(), url, "alice")
        cookies = [c for c in context.cookies() if c["name"] == SESSION_COOKIE]
        context.close()
        for name, path in PAGES.items():
            fresh = browser.new_context()  # an empty cache
            fresh.add_cookies(cookies)
            first = weigh(fresh, url + path)
            again = weigh(fresh, url + path)
            fresh.close()
            results[name] = {"first": first, "again": again}
        browser.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="page-weight-") as tmp:
        work = Path(tmp)
        os.environ["STATIC_ROOT"] = str(collect_static(work))  # handed to daphne
        sim = simcluster_process.start(work / "state", scenario="demo", speed=20)
        daphne = None
        try:
            daphne, url = start_dashboard(sim, work)
            results = measure(url)
        finally:
            if daphne is not None:
                daphne.terminate()
                daphne.wait(10)
            sim.stop()
    kib = 1024
    rows = []
    for name, r in results.items():
        first, again = r["first"], r["again"]
        rows.append(f"| {name} | {first['bytes'] / kib:.0f} KiB ({first['requests']} "
                    f"requests; HTML {first['html'] / kib:.0f} KiB) | "
                    f"{again['bytes'] / kib:.0f} KiB ({again['requests']} requests) |")
    print("\n".join(rows))
    if not args.no_record:
        write_section("page_weight.py", "\n".join([
            f"Measured {date.today().isoformat()} on {os.cpu_count()} CPUs "
            f"({platform.machine()}, Python {platform.python_version()}): the demo, static "
            "files collected as in the container image, daphne; bytes received (headers "
            "and body, compressed as sent) until the network is idle, in Chromium.", "",
            "| page | first visit (empty cache) | again (cached) |", "|---|---|---|",
            *rows]))
    jobs = results["/jobs/"]["first"]["bytes"] / kib
    print(f"first visit of /jobs/: {jobs:.0f} KiB on the wire (target under {TARGET_KIB} KB)")


if __name__ == "__main__":
    main()
