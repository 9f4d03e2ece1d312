"""Browser tests: Debian's Chromium driven by Playwright against daphne + simcluster."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
from playwright.sync_api import expect

from tests import simcluster_process
from tests.waiting import wait_until

# A deadline for what a page shows, not an expected duration: beside the rest of the suite
# (six workers on two cores) a wizard step's checks may take more than Playwright's 5 s.
expect.set_options(timeout=15_000)

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = ROOT / "screenshots"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": [
        "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", "--disable-quic"]}


@pytest.fixture(scope="session")
def e2e_cluster(tmp_path_factory):
    cluster = simcluster_process.start(tmp_path_factory.mktemp("e2e-demo") / "state",
                                       scenario="demo", speed=20)
    yield cluster
    cluster.stop()


def _register_redirect(cluster, port: int) -> None:
    """Added to the OAuthClient's redirect URIs, never in place of them: a second dashboard
    on the session's cluster (test_wizard_advice.py) must leave the session's own sign-in
    working."""
    from tests.dashboard_support import register_redirect_uri

    register_redirect_uri(cluster, f"http://127.0.0.1:{port}/oauth/callback/")


@contextmanager
def dashboard_on(cluster, workdir: Path):
    """The dashboard under daphne (real ASGI server) for `cluster`, signed in through its
    OAuth; yields its address."""
    port = simcluster_process.free_port()
    _register_redirect(cluster, port)
    env = dict(os.environ,
               DJANGO_SETTINGS_MODULE="dashboard.settings",
               DATABASE_URL=f"sqlite:///{workdir / 'db.sqlite3'}",
               CLUSTER_KUBECONFIG=str(cluster.kubeconfig("dashboard")),
               OAUTH_CLIENT_ID="mpijob-dashboard",
               OAUTH_CLIENT_SECRET="mpijob-dashboard-demo-secret",
               PROMETHEUS_URL=cluster.prometheus_url,
               METRICS_REFRESH_SECONDS="3",  # the tests wait for new points: ask sooner
               NOTIFY_WEBHOOK_ALLOW="127.0.0.1",  # as the demo: a local webhook receiver
               TENSORBOARD_RUNNER="local",  # as the demo: a job's TensorBoard beside it
               ALLOWED_HOSTS="127.0.0.1,localhost")
    subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
                   cwd=ROOT, env=env, check=True)
    log = open(workdir / "daphne.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                             "dashboard.asgi:application"], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        if proc.poll() is not None:
            raise RuntimeError((workdir / "daphne.log").read_text())
        try:
            return requests.get(url + "/healthz", timeout=1).status_code == 200
        except requests.ConnectionError:
            return False

    try:
        wait_until(up, 30, message="daphne to answer /healthz")
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


@pytest.fixture(scope="session")
def live_dashboard(e2e_cluster, tmp_path_factory):
    """The dashboard under daphne, signed in through simcluster's OAuth."""
    with dashboard_on(e2e_cluster, tmp_path_factory.mktemp("dashboard")) as url:
        yield url


@pytest.fixture
def screenshot(page):
    """Save a full-page screenshot under screenshots/ (looked at when reviewing a change)."""
    SCREENSHOTS.mkdir(exist_ok=True)

    def take(name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


def sign_in(page, base_url: str, username: str, next_path: str = "/jobs/") -> None:
    """Through the real OpenShift login page, by its labels."""
    page.goto(base_url + next_path)
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(username)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base_url}{next_path}*")
