"""The kubelet's stage table and the scheduler's decisions, in process: the cluster runs in
warped simulated time, so minutes of a pod's life pass instantly."""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable

import pytest

from simcluster import scenario
from simcluster.cluster import SYSTEM_USER, Cluster
from simcluster.node.kubelet import Kubelet
from simcluster.node.stages import STAGES, Event, Stage, validate
from simcluster.placement import scheduling


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(speed=1.0)
    scenario.load(c, scenario.load_file(scenario.resolve("empty")), tmp_path)
    return c


def run_for(cluster: Cluster, seconds: float, *objects: dict) -> None:
    """Create `objects` `seconds` ago and let the cluster live up to now."""
    cluster.clock.begin_warp(time.time() - seconds)
    for obj in objects:
        cluster.create_as(SYSTEM_USER, obj)
    cluster.clock.finish_warp()


def in_steps(cluster: Cluster, *steps: tuple[float, list[dict | Callable[[], object]]]) -> None:
    """Live a story in warped time: at each step create its objects (or call its functions),
    then live that many seconds; the last step ends now."""
    clock = cluster.clock
    clock.begin_warp(time.time() - sum(seconds for seconds, _ in steps))
    for seconds, actions in steps:
        for action in actions:
            if callable(action):
                action()
            else:
                cluster.create_as(SYSTEM_USER, action)
        until = clock.now() + seconds
        clock.after_each()
        while clock._timers and clock._timers[0][0] <= until:
            when, _, fn = heapq.heappop(clock._timers)
            clock._virtual_now = max(clock.now(), when)
            clock._run_timer(fn)
        clock._virtual_now = until
    clock.finish_warp()


def bare_pod(name: str, command: list[str]) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "team-nlp"},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "app", "image": "busybox:1.36",
                                     "command": command}]}}


def pod_status(cluster: Cluster, name: str) -> dict:
    return cluster.store.get_raw(cluster.rt("pods"), "team-nlp", name)["status"]


def reasons(cluster: Cluster, name: str) -> list[str]:
    return [e["reason"] for e in cluster.store.iter_raw(cluster.rt("events"), "team-nlp")
            if e["involvedObject"]["name"] == name]


def test_a_pod_lives_its_whole_life_in_warped_time(cluster):
    run_for(cluster, 300, bare_pod("short", ["sleep", "30"]))
    status = pod_status(cluster, "short")
    assert status["phase"] == "Succeeded"
    assert sorted(reasons(cluster, "short")) == ["Created", "Pulled", "Pulling", "Scheduled",
                                                 "Started"]


def test_a_test_can_add_a_stage(cluster):
    kubelet = Kubelet.of(cluster)
    assert kubelet is not None
    failing_sandbox = (
        Stage("sandbox-fails", "pod", ("Accepted",), "SandboxFailed", 4,
              events=(Event("Warning", "FailedCreatePodSandBox",
                            "Failed to create pod sandbox: context deadline exceeded",
                            container=False),)),
        Stage("sandbox-retry", "pod", ("SandboxFailed",), "Accepted", 30))
    kubelet.stages = (*failing_sandbox, *STAGES)
    run_for(cluster, 120, bare_pod("stuck", ["sleep", "1"]))
    status = pod_status(cluster, "stuck")
    assert status["phase"] == "Pending"
    assert status["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    (event,) = [e for e in cluster.store.iter_raw(cluster.rt("events"), "team-nlp")
                if e["reason"] == "FailedCreatePodSandBox"]
    assert event["count"] == 4  # at 4, 38, 72 and 106 seconds


def test_a_stage_naming_an_unknown_condition_is_refused():
    with pytest.raises(ValueError, match="unknown condition 'sunny'"):
        validate((Stage("x", "pod", ("Bound",), "Accepted", when=("sunny",)),))


def node(name: str, cpu: str = "4", gpus: int = 0, taints: list | None = None) -> dict:
    alloc = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    return {"metadata": {"name": name, "labels": {}}, "spec": {"taints": taints or []},
            "status": {"allocatable": alloc}}


def test_failure_messages_sort_reasons_as_kube_scheduler_does():
    pod = {"spec": {"containers": [{"resources": {"requests": {"cpu": "8",
                                                               "nvidia.com/gpu": "1"}}}]}}
    infos = [scheduling.NodeInfo.of(n) for n in (
        node("a"), node("b", gpus=8, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
        node("c", cpu="16", gpus=1))]
    infos[2].add({"nvidia.com/gpu": scheduling.milli("1")})
    chosen, rejected = scheduling.choose(pod, scheduling.pod_requests(pod), infos)
    assert chosen is None
    message = scheduling.failure_message(pod, 3, rejected)
    assert message.startswith("0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had "
                              "untolerated taint {k: v}, 2 Insufficient nvidia.com/gpu.")
    # preemption helps only on c: a has no GPU at all (kube-scheduler 1.31+: unresolvable)
    assert message.endswith(" preemption: 0/3 nodes are available: 1 No preemption victims "
                            "found for incoming pod, 2 Preemption is not helpful for "
                            "scheduling.")


def test_gpu_pods_binpack_and_cpu_pods_spread():
    gpu_pod = {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
    cpu_pod = {"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}}
    infos = [scheduling.NodeInfo.of(n) for n in (
        node("cpu-a"), node("cpu-b"), node("gpu-a", gpus=8), node("gpu-b", gpus=8))]
    infos[3].add({"nvidia.com/gpu": scheduling.milli("4")})
    infos[0].add({"cpu": scheduling.milli("2")})
    chosen, _ = scheduling.choose(gpu_pod, scheduling.pod_requests(gpu_pod), infos)
    assert chosen is not None and chosen.name == "gpu-b"  # the fuller GPU node
    chosen, _ = scheduling.choose(cpu_pod, scheduling.pod_requests(cpu_pod), infos)
    assert chosen is not None and chosen.name == "cpu-b"  # the emptier CPU-only node


# -- objects a pod needs: claims, secrets and configmaps ----------------------------------------
def needing(name: str, **spec) -> dict:
    pod = bare_pod(name, ["sleep", "600"])
    container = spec.pop("container", {})
    pod["spec"]["containers"][0].update(container)
    pod["spec"].update(spec)
    return pod


def secret(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": "team-nlp"}, "stringData": data}


def events_of(cluster: Cluster, name: str, reason: str) -> list[dict]:
    return [e for e in cluster.store.iter_raw(cluster.rt("events"), "team-nlp")
            if e["involvedObject"]["name"] == name and e["reason"] == reason]


def test_a_missing_secret_in_env_is_a_config_error_until_it_exists(cluster):
    env = [{"name": "WANDB_API_KEY",
            "valueFrom": {"secretKeyRef": {"name": "wandb", "key": "api-key"}}}]
    seen: list[dict] = []

    def look() -> None:
        seen.append(pod_status(cluster, "wandb")["containerStatuses"][0]["state"])

    in_steps(cluster, (120, [needing("wandb", container={"env": env})]),
             (60, [look, secret("wandb", other="x")]),  # there, but without the key
             (60, [look, lambda: cluster.store.delete(cluster.rt("secrets"), "team-nlp",
                                                      "wandb"),
                   secret("wandb", **{"api-key": "x"})]))
    assert seen[0] == {"waiting": {"reason": "CreateContainerConfigError",
                                   "message": 'secret "wandb" not found'}}
    assert seen[1] == {"waiting": {"reason": "CreateContainerConfigError",
                                   "message": "couldn't find key api-key in Secret "
                                              "team-nlp/wandb"}}
    assert pod_status(cluster, "wandb")["phase"] == "Running"
    failed = {e["message"]: e["count"] for e in events_of(cluster, "wandb", "Failed")}
    assert failed['Error: secret "wandb" not found'] > 5  # every 10 s
    assert "Error: couldn't find key api-key in Secret team-nlp/wandb" in failed


def test_optional_references_never_stop_a_container(cluster):
    run_for(cluster, 60, needing("optional", container={
        "envFrom": [{"configMapRef": {"name": "nothing", "optional": True}}],
        "env": [{"name": "X", "valueFrom": {"secretKeyRef": {
            "name": "nothing", "key": "k", "optional": True}}}]}))
    assert pod_status(cluster, "optional")["phase"] == "Running"


def test_a_missing_configmap_volume_keeps_the_pod_creating(cluster):
    volumes = [{"name": "settings", "configMap": {"name": "train-settings"}}]
    seen: list[dict] = []
    in_steps(cluster, (120, [needing("mounting", volumes=volumes)]),
             (150, [lambda: seen.append(pod_status(cluster, "mounting")),
                    {"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "train-settings", "namespace": "team-nlp"},
                     "data": {"a": "b"}}]))
    status = seen[0]
    assert status["phase"] == "Pending"
    assert status["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert "podIP" not in status
    (failed,) = events_of(cluster, "mounting", "FailedMount")
    assert failed["type"] == "Warning"
    assert failed["message"] == ('MountVolume.SetUp failed for volume "settings" : configmap '
                                 '"train-settings" not found')
    assert failed["count"] > 3  # retried with the volume manager's back-off
    assert pod_status(cluster, "mounting")["phase"] == "Running"


def test_a_missing_claim_keeps_the_pod_unscheduled_until_it_is_created(cluster):
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "squad-data"}}]
    seen: list[dict] = []
    in_steps(cluster, (120, [needing("claiming", volumes=volumes)]),
             (30, [lambda: seen.append(pod_status(cluster, "claiming")),
                   {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "squad-data", "namespace": "team-nlp"},
                    "spec": {"accessModes": ["ReadWriteOnce"],
                             "resources": {"requests": {"storage": "1Gi"}}}}]))
    message = ('0/1 nodes are available: persistentvolumeclaim "squad-data" not found. '
               "preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
               "scheduling.")
    (scheduled,) = seen[0]["conditions"]
    assert (scheduled["reason"], scheduled["message"]) == ("Unschedulable", message)
    (failed,) = events_of(cluster, "claiming", "FailedScheduling")
    assert failed["message"] == message and failed["count"] > 1
    assert pod_status(cluster, "claiming")["phase"] == "Running"
