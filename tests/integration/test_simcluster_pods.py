"""simcluster's scheduler and kubelet as a user sees them through the official client:
bare pods go Pending -> Running -> Succeeded with real-looking status and events, pods that
do not fit wait with the scheduler's exact message, deletion is graceful, logs stream."""

from __future__ import annotations

import re

import pytest
from kubernetes import client

from tests.simcluster_pods import (
    GPU_TOLERATION,
    Pods,
    Recorder,
    events_in_order,
    pod,
    start_cluster,
)
from tests.waiting import wait_until

CONDITION_ORDER = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                   "PodScheduled"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = start_cluster(tmp_path_factory.mktemp("simcluster-pods"))
    yield sim
    sim.stop()


@pytest.fixture(scope="module")
def pods(cluster):
    return Pods(cluster.api_client("alice"))


def test_a_bare_pod_goes_pending_running_succeeded_with_kubelet_events(pods):
    since = pods.resource_version()
    recorder = Recorder(pods, "hello")
    pods.create(pod("hello", ["sh", "-c", "echo hello from the pod; sleep 2; echo done"]))

    done = pods.wait_phase("hello", "Succeeded")
    recorder.stop()

    assert recorder.phases() == ["Pending", "Running", "Succeeded"]
    events = events_in_order(pods, "hello", since)
    pulled = events[2][2]
    assert events == [
        ("Normal", "Scheduled", "Successfully assigned team-nlp/hello to cpu-0"),
        ("Normal", "Pulling",
         'Pulling image "registry.access.redhat.com/ubi9/ubi-minimal:9.4"'),
        ("Normal", "Pulled", pulled),
        ("Normal", "Created", "Created container app"),
        ("Normal", "Started", "Started container app"),
    ]
    assert re.fullmatch(r'Successfully pulled image "registry.access.redhat.com/ubi9/'
                        r'ubi-minimal:9.4" in ([0-9.]+m?s) \(\1 including waiting\)\. '
                        r"Image size: \d+ bytes\.", pulled)
    started = pods.events("hello")[-1]
    assert started.source.component == "kubelet" and started.source.host == "cpu-0"
    assert started.involved_object.field_path == "spec.containers{app}"

    status = done.status
    assert [c.type for c in status.conditions] == CONDITION_ORDER
    assert all(c.last_probe_time is None and c.last_transition_time for c in status.conditions)
    by_type = {c.type: c for c in status.conditions}
    assert (by_type["Ready"].status, by_type["Ready"].reason) == ("False", "PodCompleted")
    # the sandbox goes a moment after the container ended (the kubelet tears it down)
    wait_until(lambda: {c.type: c.status for c in pods.read("hello").status.conditions}[
        "PodReadyToStartContainers"] == "False", 15, message="the pod's sandbox torn down")
    assert by_type["PodScheduled"].status == "True"
    assert status.host_ip and status.host_ips[0].ip == status.host_ip
    assert status.pod_ip.startswith("10.128.") and status.pod_ips[0].ip == status.pod_ip
    assert status.start_time is not None
    assert status.qos_class == "BestEffort"
    assert done.spec.node_name == "cpu-0"
    (cs,) = status.container_statuses
    assert re.fullmatch(r"cri-o://[0-9a-f]{64}", cs.container_id)
    assert cs.image == "registry.access.redhat.com/ubi9/ubi-minimal:9.4"
    assert re.fullmatch(r"registry.access.redhat.com/ubi9/ubi-minimal@sha256:[0-9a-f]{64}",
                        cs.image_id)
    assert (cs.name, cs.ready, cs.restart_count, cs.started) == ("app", False, 0, False)
    term = cs.state.terminated
    assert (term.exit_code, term.reason, term.container_id) == (0, "Completed", cs.container_id)
    assert term.started_at <= term.finished_at
    assert cs.last_state.terminated is None and cs.last_state.waiting is None

    log = pods.core.read_namespaced_pod_log("hello", pods.ns)
    assert log == "hello from the pod\ndone\n"


def test_a_running_pod_is_ready_with_running_container(pods):
    pods.create(pod("server", ["sleep", "infinity"]))
    running = pods.wait_phase("server", "Running")
    by_type = {c.type: c for c in running.status.conditions}
    assert [c.type for c in running.status.conditions] == CONDITION_ORDER
    assert all(by_type[t].status == "True" for t in CONDITION_ORDER)
    (cs,) = running.status.container_statuses
    assert cs.ready and cs.started and cs.state.running.started_at is not None
    pods.delete("server", grace=0)
    wait_until(lambda: pods.gone("server"), 10, message="server to be deleted")


def test_a_pod_that_does_not_fit_waits_with_the_schedulers_message_then_runs(pods):
    pods.create(pod("big-1", ["sleep", "infinity"], resources={"requests": {"cpu": "3"}}))
    pods.wait_phase("big-1", "Running")
    pods.create(pod("big-2", ["sleep", "infinity"], resources={"requests": {"cpu": "3"}}))

    message = ("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint "
               "{nvidia.com/gpu: true}. preemption: 0/3 nodes are available: 1 No preemption "
               "victims found for incoming pod, 2 Preemption is not helpful for scheduling.")
    failed = pods.event("big-2", "FailedScheduling")
    assert (failed.type, failed.message) == ("Warning", message)
    assert failed.reporting_component == "default-scheduler"
    pending = pods.read("big-2")
    assert pending.status.phase == "Pending" and pending.spec.node_name is None
    (cond,) = pending.status.conditions
    assert (cond.type, cond.status, cond.reason, cond.message) == (
        "PodScheduled", "False", "Unschedulable", message)
    assert cond.last_probe_time is None

    pods.delete("big-1")
    scheduled = pods.event("big-2", "Scheduled")
    assert scheduled.message == "Successfully assigned team-nlp/big-2 to cpu-0"
    pods.wait_phase("big-2", "Running")
    assert pods.gone("big-1")
    pods.delete("big-2", grace=0)


def test_node_selector_and_taints_are_reported_like_kube_scheduler(pods):
    pods.create(pod("picky", ["sleep", "1"], nodeSelector={"disktype": "ssd"}))
    assert pods.event("picky", "FailedScheduling").message == (
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "2 node(s) had untolerated taint {nvidia.com/gpu: true}. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling.")
    pods.create(pod("greedy", ["sleep", "1"], tolerations=[GPU_TOLERATION],
                    resources={"limits": {"nvidia.com/gpu": "3"}}))
    # more GPUs than any node has: preemption cannot help (kube-scheduler 1.31+)
    assert pods.event("greedy", "FailedScheduling").message == (
        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling.")
    for name in ("picky", "greedy"):
        pods.delete(name)


def test_gpu_pods_are_packed_onto_one_node(pods):
    for name in ("gpu-a", "gpu-b"):
        pods.create(pod(name, ["sleep", "infinity"], tolerations=[GPU_TOLERATION],
                        resources={"limits": {"nvidia.com/gpu": "1"}}))
    nodes = {pods.wait_phase(name, "Running").spec.node_name for name in ("gpu-a", "gpu-b")}
    assert nodes == {"gpu-0"}
    for name in ("gpu-a", "gpu-b"):
        pods.delete(name, grace=0)


def test_deleting_a_running_pod_stops_its_container_then_removes_it(pods):
    pods.create(pod("doomed", ["sleep", "infinity"]))
    pods.wait_phase("doomed", "Running")
    pods.delete("doomed")
    marked = pods.read("doomed")
    assert marked.metadata.deletion_timestamp is not None
    assert marked.metadata.deletion_grace_period_seconds == 30
    killing = pods.event("doomed", "Killing")
    assert (killing.type, killing.message) == ("Normal", "Stopping container app")
    assert killing.involved_object.field_path == "spec.containers{app}"
    wait_until(lambda: pods.gone("doomed"), 10, message="doomed to disappear")


def test_follow_streams_a_running_pods_log_as_it_is_written(pods):
    pods.create(pod("trainer", ["python", "train.py"],
                    annotations={"simcluster.io/run-seconds": "150",
                                 "simcluster.io/epochs": "5"}))
    pods.wait_phase("trainer", "Running")
    resp = pods.core.read_namespaced_pod_log("trainer", pods.ns, follow=True,
                                             _preload_content=False)
    lines: list[str] = []
    snapshot = ""
    buffer = b""
    for chunk in resp.stream(amt=1024):
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        lines += [line.decode() for line in complete]
        if lines and not snapshot:
            snapshot = pods.core.read_namespaced_pod_log("trainer", pods.ns)
    resp.release_conn()

    assert "Training complete" not in snapshot  # the first lines came before the last existed
    assert lines[0] == "Using distributed PyTorch with gloo backend"
    assert [line.split(":")[0] for line in lines if line.startswith("Epoch ")] == [
        f"Epoch {k}/5" for k in range(1, 6)]
    assert lines[-1].startswith("Training complete: 5 epochs")
    pods.wait_phase("trainer", "Succeeded")


def test_pods_are_typed_in_lists(pods):
    # a pod of its own (the module's tests may run on other workers, or after this one)
    pods.create(pod("typed", ["sleep", "infinity"]))
    wait_until(lambda: pods.read("typed").spec.node_name, 30, message="typed scheduled")
    node = pods.read("typed").spec.node_name
    listed = pods.core.list_namespaced_pod(pods.ns)
    assert listed.items and all(isinstance(p, client.V1Pod) for p in listed.items)
    on_node = pods.core.list_namespaced_pod(pods.ns, field_selector=f"spec.nodeName={node}")
    assert "typed" in {p.metadata.name for p in on_node.items}
    assert all(p.spec.node_name == node for p in on_node.items)
    pods.delete("typed", grace=0)


def test_nodes_report_a_healthy_kubelet(cluster):
    core = client.CoreV1Api(cluster.api_client("admin"))
    for node in core.list_node().items:
        conditions = {c.type: (c.status, c.reason) for c in node.status.conditions}
        assert conditions == {"MemoryPressure": ("False", "KubeletHasSufficientMemory"),
                              "DiskPressure": ("False", "KubeletHasNoDiskPressure"),
                              "PIDPressure": ("False", "KubeletHasSufficientPID"),
                              "Ready": ("True", "KubeletReady")}
        assert all(c.last_heartbeat_time and c.last_transition_time
                   for c in node.status.conditions)
        internal = [a.address for a in node.status.addresses if a.type == "InternalIP"]
        assert len(internal) == 1 and internal[0].startswith("10.0.")
