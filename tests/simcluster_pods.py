"""Helpers for tests of simcluster's scheduler and kubelet: bare pods through the official
client, a small scenario with CPU and tainted GPU nodes, and event/phase watching."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests import simcluster_process
from tests.waiting import wait_until

Obj = dict[str, Any]
NS = "team-nlp"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

# One 4-CPU node and two tainted 2-GPU nodes: small enough to fill from a test.
SCENARIO = {
    "name": "pods-test",
    "users": [{"name": "alice", "password": "alice"}, {"name": "admin", "password": "admin"}],
    "namespaces": [{"name": NS}],
    "nodes": [
        {"name": "cpu-0", "cpu": 4, "memory": "16Gi"},
        {"name": "gpu-{i}", "count": 2, "cpu": 32, "memory": "256Gi", "gpus": 2,
         "taints": [GPU_TAINT]},
    ],
    "access": [{"user": "alice", "role": "edit", "namespaces": [NS]},
               {"user": "admin", "clusterRole": "cluster-admin"}],
}


def start_cluster(tmp: Path, speed: float = 50) -> simcluster_process.SimCluster:
    return simcluster_process.start_scenario(tmp, SCENARIO, speed, name="pods-test.yaml")


def pod(name: str, command: list[str], *, restart: str = "Never",
        annotations: dict[str, str] | None = None, resources: Obj | None = None,
        image: str = "registry.access.redhat.com/ubi9/ubi-minimal:9.4", **spec: Any) -> Obj:
    container: Obj = {"name": "app", "image": image, "command": command}
    if resources:
        container["resources"] = resources
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": dict(annotations or {})},
            "spec": {"containers": [container], "restartPolicy": restart, **spec}}


class Pods:
    def __init__(self, api: client.ApiClient, namespace: str = NS) -> None:
        self.core = client.CoreV1Api(api)
        self.ns = namespace

    def create(self, body: Obj) -> client.V1Pod:
        return self.core.create_namespaced_pod(self.ns, body)

    def read(self, name: str) -> client.V1Pod:
        return self.core.read_namespaced_pod(name, self.ns)

    def delete(self, name: str, grace: int | None = None) -> None:
        try:
            self.core.delete_namespaced_pod(name, self.ns, grace_period_seconds=grace)
        except ApiException as e:
            if e.status != 404:
                raise

    def gone(self, name: str) -> bool:
        try:
            self.read(name)
        except ApiException as e:
            return e.status == 404
        return False

    def phase(self, name: str) -> str:
        return self.read(name).status.phase

    def wait_phase(self, name: str, phase: str, timeout: float = 30) -> client.V1Pod:
        return wait_until(lambda: (p := self.read(name)).status.phase == phase and p, timeout,
                          message=lambda: f"{name} to be {phase}; it is {self.phase(name)}")

    def container(self, name: str) -> client.V1ContainerStatus | None:
        statuses = self.read(name).status.container_statuses or []
        return statuses[0] if statuses else None

    def events(self, name: str) -> list[client.CoreV1Event]:
        items = self.core.list_namespaced_event(
            self.ns, field_selector=f"involvedObject.name={name},involvedObject.kind=Pod").items
        return sorted(items, key=lambda e: int(e.metadata.resource_version))

    def event(self, name: str, reason: str, timeout: float = 30) -> client.CoreV1Event:
        return wait_until(
            lambda: next((e for e in self.events(name) if e.reason == reason), None), timeout,
            message=lambda: f"event {reason} on {name}; have "
                            f"{[e.reason for e in self.events(name)]}")

    def resource_version(self) -> str:
        return self.core.list_namespaced_pod(self.ns).metadata.resource_version


class Recorder:
    """Watches one pod (from a resourceVersion) and keeps every state it passes through."""

    def __init__(self, pods: Pods, name: str) -> None:
        self.pods = pods
        self.name = name
        self.seen: list[client.V1Pod] = []
        self.since = pods.resource_version()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        w = watch.Watch()
        try:
            for item in w.stream(self.pods.core.list_namespaced_pod, self.pods.ns,
                                 resource_version=self.since, timeout_seconds=60,
                                 field_selector=f"metadata.name={self.name}"):
                self.seen.append(item["object"])
                if self._stop.is_set():
                    w.stop()
        except (ApiException, urllib3.exceptions.HTTPError):
            pass  # the cluster went away at the end of the module

    def stop(self) -> None:
        """Stop once it has seen the pod as it is now: its last changes may still be on
        their way down the watch when the test has seen them by reading the pod."""
        try:
            now = self.pods.core.read_namespaced_pod(self.name, self.pods.ns)
        except ApiException:
            now = None  # gone: nothing more to wait for
        if now is not None:
            rv = now.metadata.resource_version
            wait_until(lambda: any(p.metadata.resource_version == rv for p in self.seen), 30,
                       message=lambda: f"the watch to reach resourceVersion {rv}")
        self._stop.set()

    def phases(self) -> list[str]:
        out: list[str] = []
        for p in self.seen:
            if not out or out[-1] != p.status.phase:
                out.append(p.status.phase)
        return out

    def waiting_reasons(self) -> list[str]:
        out: list[str] = []
        for p in self.seen:
            for cs in p.status.container_statuses or []:
                reason = cs.state.waiting.reason if cs.state.waiting else None
                if reason and (not out or out[-1] != reason):
                    out.append(reason)
        return out


def events_in_order(pods: Pods, name: str, since: str) -> list[tuple[str, str, str]]:
    """(type, reason, message) of a pod's events in the order they were first recorded."""
    seen: list[tuple[str, str, str]] = []
    for item in watch.Watch().stream(pods.core.list_namespaced_event, pods.ns,
                                     resource_version=since, timeout_seconds=1,
                                     field_selector=f"involvedObject.name={name}"):
        ev = item["object"]
        if item["type"] == "ADDED":
            seen.append((ev.type, ev.reason, ev.message))
    return seen
