"""The watcher started exactly as deploy/ starts it, against a simcluster, and asked what
the kubelet and Prometheus will ask it.

The container's command, its environment (the ConfigMap, then `env`, with the Secrets'
values filled in: a SQLite file for DATABASE_URL, the in-memory channel layer for lack of
REDIS_URL, a known metrics token) and the port it names; then every probe's path on the
container port the probe names, and the ServiceMonitor's path through the watcher
Service's target port, with and without the token. The manifests' port (9102) is mapped
to a free local one: the test checks that every reference resolves to that one port.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import requests

from tests import simcluster_process
from tests.deploy import manifests as m
from tests.prometheus_text import cluster_summaries, matching, parse, value
from tests.simcluster_process import free_port
from tests.waiting import wait_until

# one watcher and one simcluster for the module, on one worker
pytestmark = pytest.mark.xdist_group("deploy-watcher")

TOKEN = "deploy-wiring-" + secrets.token_hex(8)
# what the Secrets hold in production and what stands for it here (None: left unset)
KNOWN_SECRETS = {("mpijob-dashboard", "SECRET_KEY"), ("mpijob-dashboard", "DATABASE_URL"),
                 ("mpijob-dashboard", "REDIS_URL"), ("mpijob-dashboard-metrics", "token")}
# the variables of this test run that the child may see (nothing of the dashboard's own)
PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV", "PYTHONPATH")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    sim = simcluster_process.start(tmp_path_factory.mktemp("deploy-watcher") / "state",
                                   scenario="demo", speed=50)
    yield sim
    sim.stop()


def _manifests() -> tuple[dict, dict, dict, dict]:
    (deployment,) = m.load("base/watcher-deployment.yaml")
    (config,) = m.load("base/configmap.yaml")
    (service,) = m.load("base/watcher-service.yaml")
    (monitor,) = [o for o in m.load("monitoring/servicemonitor.yaml")
                  if o["spec"]["selector"]["matchLabels"].items()
                  <= service["metadata"]["labels"].items()]
    return deployment, config, service, monitor


class DeployedWatcher:
    """runwatcher as the Deployment's one container runs it, on `local_port`."""

    def __init__(self, sim, tmp: Path) -> None:
        self.deployment, config, self.service, self.monitor = _manifests()
        pod = self.deployment["spec"]["template"]["spec"]
        (self.container,) = pod["containers"]
        self.grace = pod.get("terminationGracePeriodSeconds", 30)
        env = m.container_env(self.container, {config["metadata"]["name"]: config}, {})
        self.port = m.runwatcher_metrics_port(self.container, env)
        assert self.port, "the watcher Deployment serves no metrics port"
        self.local_port = free_port()

        filled = {k: v for k, v in os.environ.items() if k in PASSED_THROUGH}
        filled["PYTHONUNBUFFERED"] = "1"
        database = f"sqlite:///{tmp / 'dashboard.sqlite3'}"
        stand_ins = {("mpijob-dashboard", "SECRET_KEY"): secrets.token_urlsafe(50),
                     ("mpijob-dashboard", "DATABASE_URL"): database,
                     ("mpijob-dashboard", "REDIS_URL"): None,
                     ("mpijob-dashboard-metrics", "token"): TOKEN}
        self.secrets_read = set()
        for name, val in env.items():
            if val.startswith("<secret ") and val.endswith(">"):
                secret, key = val[len("<secret "):-1].split("/", 1)
                assert (secret, key) in KNOWN_SECRETS, f"{name} reads {secret}/{key}"
                self.secrets_read.add((secret, key))
                val = stand_ins[(secret, key)]
                if val is None:
                    continue
            filled[name] = val
        # outside a pod: the API server from a kubeconfig with the watcher's rights
        filled["CLUSTER_KUBECONFIG"] = str(sim.kubeconfig("dashboard"))
        self.env = filled

        argv = [*self.container["command"], *(self.container.get("args") or [])]
        assert argv[:3] == ["python", "manage.py", "runwatcher"], argv
        at = argv.index("--metrics-port")
        assert argv[at + 1] == str(self.port)
        argv[at + 1] = str(self.local_port)
        argv[0] = sys.executable
        # no Redis here (REDIS_URL is left unset), and only this machine's loopback
        argv += ["--allow-in-memory", "--metrics-address", "127.0.0.1"]
        self.argv = argv

        migrated = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"],
                                  cwd=m.ROOT, env=filled, capture_output=True, text=True,
                                  timeout=180)
        assert migrated.returncode == 0, migrated.stdout + migrated.stderr
        self.log_path = tmp / "runwatcher.log"
        with open(self.log_path, "ab") as log:  # the child keeps its own descriptor
            self.process = subprocess.Popen(argv, cwd=m.ROOT, env=filled, stdout=log,
                                            stderr=subprocess.STDOUT)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def local(self, container_port: str | int) -> int:
        """The local port standing for a container port reference of the manifests."""
        number = m.container_port(self.container, container_port)
        assert number == self.port, f"{container_port} is {number}, not the metrics port"
        return self.local_port

    def get(self, port: str | int, path: str, token: str | None = None) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.get(f"http://127.0.0.1:{self.local(port)}{path}", headers=headers,
                            timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def watcher(demo, tmp_path_factory):
    started = DeployedWatcher(demo, tmp_path_factory.mktemp("deploy-watcher-run"))
    yield started
    started.stop()


def test_the_watcher_reads_the_secrets_its_deployment_names(watcher):
    assert watcher.secrets_read == KNOWN_SECRETS
    assert watcher.env["WATCHER_EMBEDDED"] == "false"
    assert watcher.env["METRICS_BEARER_TOKEN"] == TOKEN


def test_the_probes_answer_on_the_port_they_name(watcher):
    probes = {kind: watcher.container[kind]["httpGet"]
              for kind in ("startupProbe", "livenessProbe", "readinessProbe")}
    for kind in ("startupProbe", "livenessProbe"):  # the kubelet sends no token
        probe = probes[kind]
        wait_until(lambda p=probe: watcher.get(p["port"], p["path"]).status_code == 200, 60,
                   message=lambda k=kind: f"{k} to pass:\n{watcher.log()}")
    ready = probes["readinessProbe"]
    wait_until(lambda: watcher.get(ready["port"], ready["path"]).status_code == 200, 60,
               message=lambda: f"readiness to pass:\n{watcher.log()}")
    # the process says so too (it looks every half second)
    wait_until(lambda: "runwatcher: READY" in watcher.log(), 10, message=watcher.log)
    assert watcher.process.poll() is None, watcher.log()


def test_the_service_monitor_gets_the_cluster_state_with_the_token(watcher, demo):
    """What Prometheus does: the endpoint's Service port -> its targetPort -> the pod."""
    (endpoint,) = watcher.monitor["spec"]["endpoints"]
    (port,) = [p for p in watcher.service["spec"]["ports"] if p["name"] == endpoint["port"]]
    target = port["targetPort"]
    path = endpoint["path"]
    ready = watcher.container["readinessProbe"]["httpGet"]
    wait_until(lambda: watcher.get(ready["port"], ready["path"]).status_code == 200, 60,
               message=watcher.log)

    refused = watcher.get(target, path)
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    assert watcher.get(target, path, token="not-" + TOKEN).status_code == 401

    def jobs_match_the_cluster() -> tuple[dict, dict]:
        response = watcher.get(target, path, token=TOKEN)
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        samples = parse(response.text)
        exported = {tuple(dict(labels)[k] for k in ("project", "type", "status")): v
                    for labels, v in matching(samples, "mpijob_dashboard_jobs").items()
                    if v}  # every status of a project and type is exported, 0 included
        truth = Counter((s.namespace, s.kind.kind, str(s.status))
                        for _job, s in cluster_summaries(demo))
        return exported, {k: float(n) for k, n in truth.items()}

    wait_until(lambda: (lambda e, t: t and e == t)(*jobs_match_the_cluster()), 30,
               message=lambda: f"(exported, cluster) = {jobs_match_the_cluster()!r}")
    # the job history's failures come from the transitions the watcher records on its own
    # thread, just after it has listed the jobs: there within a deadline
    names = ("mpijob_dashboard_workers", "mpijob_dashboard_quota_hard",
             "mpijob_dashboard_job_failures_total", "mpijob_dashboard_watch_reconnects_total",
             "mpijob_dashboard_job_duration_seconds_count")
    samples = wait_until(lambda: (lambda got: got if all(matching(got, n) for n in names)
                                  else None)(parse(watcher.get(target, path, token=TOKEN).text)),
                         30, message=watcher.log)
    assert value(samples, "mpijob_dashboard_hub_ready") == 1.0
    # what the alerts query is there: GPU quota ratios (GPUQuotaNearlyFull), the failures
    # of the job history (TrainingJobFailed), the watches' counters
    gpu = matching(samples, "mpijob_dashboard_quota_used_ratio",
                   resource="requests.nvidia.com/gpu")
    assert {dict(labels)["project"] for labels in gpu} >= {"team-nlp", "team-cv"}
    for name in names:
        assert matching(samples, name), name


def test_sigterm_stops_the_watcher_within_its_grace_period(watcher):
    """What `oc rollout` (Recreate) does: SIGTERM, then SIGKILL after the grace period."""
    # the kubelet sends it to a started container (this test may be the module's first)
    wait_until(lambda: "runwatcher: READY" in watcher.log(), 90, message=watcher.log)
    assert watcher.process.poll() is None, watcher.log()
    watcher.process.send_signal(signal.SIGTERM)
    try:
        code = watcher.process.wait(watcher.grace)
    except subprocess.TimeoutExpired:
        pytest.fail(f"runwatcher outlived its {watcher.grace}s grace period:\n{watcher.log()}")
    assert code == 0, watcher.log()
    assert "runwatcher: stopped" in watcher.log()
    assert "Traceback" not in watcher.log(), watcher.log()
