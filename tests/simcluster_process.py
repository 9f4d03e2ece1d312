"""Start and stop a real simcluster process for tests (session fixtures build on this)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class SimCluster:
    process: subprocess.Popen
    state_dir: Path
    api_url: str
    oauth_url: str
    prometheus_url: str
    port: int
    oauth_port: int
    prometheus_port: int
    log_path: Path
    args: list[str] = field(default_factory=list)

    def kubeconfig(self, name: str) -> Path:
        return self.state_dir / f"kubeconfig-{name}"

    def token(self, name: str) -> str:
        config = yaml.safe_load(self.kubeconfig(name).read_text())
        return config["users"][0]["user"]["token"]

    @property
    def ca_file(self) -> Path:
        return self.state_dir / "ca.crt"

    def api_client(self, name: str):
        """An official-client ApiClient authenticated as a scenario user."""
        from kubernetes import client, config

        cfg = client.Configuration()
        config.load_kube_config(config_file=str(self.kubeconfig(name)), client_configuration=cfg)
        return client.ApiClient(cfg)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def restart(self, timeout: float = 30) -> None:
        """Stop and start again on the same ports and state directory."""
        self.stop()
        fresh = start(self.state_dir, scenario=None, args=self.args, ports=(
            self.port, self.oauth_port, self.prometheus_port), timeout=timeout,
            log_path=self.log_path)
        self.process = fresh.process


def start(state_dir: Path, scenario: str | None = "empty", speed: float = 50.0,
          extra: list[str] | None = None, args: list[str] | None = None,
          ports: tuple[int, int, int] | None = None, timeout: float = 30,
          log_path: Path | None = None) -> SimCluster:
    """simcluster in a process of its own, ready. Ports chosen here that another process
    took in the meantime (free_port cannot reserve them) are chosen again."""
    for attempt in range(3):
        try:
            return _start(state_dir, scenario, speed, extra, args, ports, timeout, log_path)
        except PortTaken:
            if ports is not None or attempt == 2:
                raise
    raise AssertionError("unreachable")


class PortTaken(RuntimeError):
    pass


def _start(state_dir: Path, scenario: str | None, speed: float, extra: list[str] | None,
           args: list[str] | None, ports: tuple[int, int, int] | None, timeout: float,
           log_path: Path | None) -> SimCluster:
    port, oauth_port, prom_port = ports or (free_port(), free_port(), free_port())
    if args is None:
        args = ["--scenario", scenario or "empty", "--speed", str(speed),
                "--state-dir", str(state_dir)] + list(extra or [])
    cmd = [sys.executable, "-m", "simcluster", "serve", *args, "--port", str(port),
           "--oauth-port", str(oauth_port), "--prometheus-port", str(prom_port)]
    log_path = log_path or state_dir.parent / f"{state_dir.name}.log"
    state_dir.mkdir(parents=True, exist_ok=True)
    log_file = open(log_path, "ab")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log_file, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            text = log_path.read_text(errors="replace")
            kind = PortTaken if "address already in use" in text.split(
                "simcluster: stopping")[-1] else RuntimeError
            raise kind(f"simcluster exited with {proc.returncode}:\n" + text)
        if "READY" in log_path.read_text(errors="replace").split("simcluster: stopping")[-1]:
            break
        time.sleep(0.05)
    else:
        proc.kill()
        raise RuntimeError("simcluster did not start:\n" + log_path.read_text(errors="replace"))
    return SimCluster(proc, state_dir, f"https://127.0.0.1:{port}",
                      f"http://127.0.0.1:{oauth_port}", f"https://127.0.0.1:{prom_port}",
                      port, oauth_port, prom_port, log_path, args)


def start_scenario(base: Path, scenario: dict, speed: float = 50.0,
                   name: str = "scenario.yaml") -> SimCluster:
    """A simcluster on a scenario given as data: written to `base`/`name`, state in
    `base`/state."""
    path = base / name
    path.write_text(yaml.safe_dump(scenario))
    return start(base / "state", scenario=str(path), speed=speed)



def admin_scenario(name: str, description: str, apis: list[str], namespace: str,
                   **more: object) -> dict:
    """A small scenario: one cluster administrator, one namespace, the optional `apis`
    (and `nodes`, `objects`... as given)."""
    return {"name": name, "description": description, "apis": apis,
            "users": [{"name": "admin", "password": "admin", "groups": ["cluster-admins"]}],
            "namespaces": [{"name": namespace}],
            "access": [{"user": "admin", "clusterRole": "cluster-admin"}], **more}


@contextlib.contextmanager
def admin_client(base: Path, scenario: dict):
    """A cluster started on `scenario` and its administrator's API client, stopped after."""
    sim = start_scenario(base, scenario, name=f"{scenario['name']}.yaml")
    try:
        with sim.api_client("admin") as client:
            yield client
    finally:
        sim.stop()
