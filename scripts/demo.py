"""`make demo`: simcluster with the demo scenario, and the dashboard on http://127.0.0.1:8000.

Starts both, registers the dashboard's OAuth redirect URI for the chosen PORT, migrates the
database, prints where to go and who to sign in as, and stops both on Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STATE = ROOT / ".simcluster"
SCENARIO = ROOT / "simcluster" / "scenarios" / "demo.yaml"
OAUTH_CLIENT = "mpijob-dashboard"
OAUTH_SECRET = "mpijob-dashboard-demo-secret"  # noqa: S105 - the demo scenario's client


def _port(name: str, default: int) -> int:
    raw = os.environ.get(name, str(default))
    try:
        value = int(raw)
    except ValueError:
        sys.exit(f"{name}={raw!r} is not a port number; use e.g. {name}={default}")
    if not 1 <= value <= 65535:
        sys.exit(f"{name}={value} is not a port number (1..65535)")
    return value


# Events not updated for an hour are deleted, as the API server's --event-ttl does on
# OpenShift: a demo left running for days keeps its Events (and every job page) small
EVENT_TTL_SECONDS = 3600


def simcluster_command(ports: dict[str, int]) -> list[str]:
    return [sys.executable, "-m", "simcluster", "serve", "--scenario", "demo",
            "--state-dir", str(STATE), "--port", str(ports["api"]),
            "--oauth-port", str(ports["oauth"]), "--prometheus-port", str(ports["prometheus"]),
            "--event-ttl", str(EVENT_TTL_SECONDS)]


def _start_simcluster(ports: dict[str, int]) -> subprocess.Popen:
    STATE.mkdir(exist_ok=True)
    log = open(STATE / "simcluster.log", "w")
    proc = subprocess.Popen(simcluster_command(ports), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    ready = threading.Event()

    def pump() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            log.write(line)
            log.flush()
            if line.strip() == "READY":
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    ready.wait(60)
    if proc.poll() is not None or not ready.is_set():
        print((STATE / "simcluster.log").read_text()[-3000:], file=sys.stderr)
        sys.exit(f"simcluster did not start (is port {ports['api']} already in use?)")
    return proc


def _register_redirect(port: int) -> None:
    """Like an administrator registering the dashboard's callback for this address."""
    from kubernetes import client, config

    cfg = client.Configuration()
    config.load_kube_config(config_file=str(STATE / "kubeconfig-admin"), client_configuration=cfg)
    with client.ApiClient(cfg) as api:
        uris = [f"http://127.0.0.1:{port}/oauth/callback/",
                f"http://localhost:{port}/oauth/callback/"]
        client.CustomObjectsApi(api).patch_cluster_custom_object(
            "oauth.openshift.io", "v1", "oauthclients", OAUTH_CLIENT,
            {"redirectURIs": uris}, _content_type="application/merge-patch+json")


def account_lines(scenario: Path = SCENARIO) -> list[str]:
    """"alice / alice   (edits team-nlp and team-cv)": every account of the demo scenario
    and what it may do, read from the scenario itself so that no account is left out."""
    import yaml

    data = yaml.safe_load(scenario.read_text())
    grants: dict[str, list[str]] = {}
    for access in data.get("access") or []:
        user = access.get("user") or ""
        if access.get("clusterRole") == "cluster-admin":
            grants.setdefault(user, []).append("cluster admin")
        elif access.get("role"):
            verb = {"edit": "edits", "view": "views", "admin": "administers"}.get(
                access["role"], access["role"])
            grants.setdefault(user, []).append(f"{verb} {' and '.join(access['namespaces'])}")
    lines = []
    for user in data.get("users") or []:
        name, password = user["name"], user.get("password", "")
        what = "; ".join(grants.get(name, [])) or "signed in, member of no project yet"
        lines.append(f"{name} / {password}".ljust(18) + f"({what})")
    return lines


def main() -> int:
    port = _port("PORT", 8000)
    ports = {"api": _port("SIMCLUSTER_PORT", 6443), "oauth": _port("SIMCLUSTER_OAUTH_PORT", 6080),
             "prometheus": _port("SIMCLUSTER_PROMETHEUS_PORT", 9091)}
    print("Starting simcluster (demo scenario)...", flush=True)
    sim = _start_simcluster(ports)
    procs = [sim]
    try:
        _register_redirect(port)
        env = dict(os.environ,
                   DJANGO_SETTINGS_MODULE="dashboard.settings",
                   CLUSTER_KUBECONFIG=str(STATE / "kubeconfig-dashboard"),
                   OAUTH_CLIENT_ID=OAUTH_CLIENT, OAUTH_CLIENT_SECRET=OAUTH_SECRET,
                   PROMETHEUS_URL=f"https://127.0.0.1:{ports['prometheus']}",
                   ALLOWED_HOSTS="127.0.0.1,localhost",
                   # notifications: emails written as files, webhooks to a local receiver
                   DASHBOARD_URL=f"http://127.0.0.1:{port}",
                   EMAIL_BACKEND="django.core.mail.backends.filebased.EmailBackend",
                   EMAIL_FILE_PATH=str(STATE / "mail"),
                   NOTIFY_WEBHOOK_ALLOW="127.0.0.1",
                   # a job's TensorBoard: a local process fed with its event files
                   TENSORBOARD_RUNNER="local")
        subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
                       cwd=ROOT, env=env, check=True)
        web = subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p",
                                str(port), "dashboard.asgi:application"], cwd=ROOT, env=env)
        procs.append(web)
        time.sleep(1.0)
        if web.poll() is not None:
            print(f"The dashboard did not start: is port {port} in use? Set PORT=8080 "
                  "to use another one.", file=sys.stderr)
            return 1
        accounts = "\n".join(f"  {'Sign in as' if i == 0 else '':<19}{line}"
                             for i, line in enumerate(account_lines()))
        print(f"""
  MPIJob dashboard:  http://127.0.0.1:{port}/
{accounts}
  The simulated cluster: https://127.0.0.1:{ports['api']}  (kubectl: export
  KUBECONFIG={STATE / 'kubeconfig-alice'})
  Press Ctrl-C to stop both.
""", flush=True)
        while all(p.poll() is None for p in procs):
            time.sleep(0.5)
        return 1
    except KeyboardInterrupt:
        print("\nStopping...", flush=True)
        return 0
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    sys.exit(main())
