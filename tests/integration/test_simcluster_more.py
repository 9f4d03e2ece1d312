"""More of simcluster through the official `kubernetes` client: warnings for mistyped
behaviour annotations, LimitRange defaults, pods/log options and errors, the mpijobs/status
subresource and PUT, the launcher's training log, the MPI Operator's metrics, and the
demo scenario as `make demo` shows it."""

from __future__ import annotations

import itertools
import re
import uuid

import pytest
import requests
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests import simcluster_process
from tests.prometheus_text import parse, value
from tests.training_jobs import GROUP, MPI_VERSION, NS, Jobs, mpijob
from tests.waiting import wait_until


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


@pytest.fixture
def jobs(alice_api):
    j = Jobs(alice_api, NS)
    yield j
    j.cleanup()


@pytest.fixture
def core(alice_api):
    return client.CoreV1Api(alice_api)


def bare_pod(name: str, containers: list[dict], **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": containers, "restartPolicy": "Never", **spec}}


def container(name: str, *command: str, **extra) -> dict:
    return {"name": name, "image": "registry.access.redhat.com/ubi9/ubi-minimal:9.4",
            "command": list(command), **extra}


def delete_pod(core: client.CoreV1Api, name: str) -> None:
    try:
        core.delete_namespaced_pod(name, NS, grace_period_seconds=0)
    except ApiException as e:
        if e.status != 404:
            raise


# -- behaviour annotations ----------------------------------------------------------------------
def test_a_mistyped_failure_annotation_is_a_warning_and_the_job_succeeds(jobs: Jobs):
    name = unique("typo")
    jobs.create(mpijob(name, annotations={"simcluster.io/failure": "OOM"}))
    event = jobs.wait_event(name, "UnknownSimclusterAnnotation")
    assert event.type == "Warning"
    assert event.message == (
        'simcluster.io/failure: "OOM" is not a failure simcluster simulates, so the job runs '
        "without one; valid values: oom, image-pull, mpi-connection-refused, hang, evict, "
        "exit-code, cuda-oom, command-not-found, not-executable, segfault, node-lost, "
        "restart-once")
    assert event.source.component == "mpi-job-controller"
    jobs.wait_condition(name, "Succeeded", timeout=90)
    warned = [e for e in jobs.events(name) if e.reason == "UnknownSimclusterAnnotation"]
    assert [e.count for e in warned] == [1]  # once, when the job was first seen
    assert jobs.job_pods(name, "worker")[0].status.phase == "Running"  # nothing was killed


def test_unknown_and_unparsable_annotations_are_warnings_too(jobs: Jobs):
    name = unique("typos")
    jobs.create(mpijob(name, run_seconds=None, annotations={
        "simcluster.io/run-seconds": "ninety", "simcluster.io/failures": "oom"}))
    jobs.wait_condition(name, "Created")
    messages = {e.reason + ": " + e.message for e in jobs.events(name) if e.type == "Warning"}
    assert messages == {
        'InvalidSimclusterAnnotation: simcluster.io/run-seconds: "ninety" is not a '
        "non-negative number; using the default (90)",
        "UnknownSimclusterAnnotation: unknown annotation simcluster.io/failures is ignored; "
        "simcluster knows simcluster.io/epochs, simcluster.io/exit-code, "
        "simcluster.io/failure, simcluster.io/failure-after-seconds, "
        "simcluster.io/failure-worker, simcluster.io/gpu-utilization, "
        "simcluster.io/image-pull-error, simcluster.io/run-seconds"}


def test_valid_annotations_give_no_warning(jobs: Jobs):
    name = unique("fine")
    jobs.create(mpijob(name, annotations={"simcluster.io/epochs": "3"}))
    jobs.wait_condition(name, "Succeeded", timeout=90)
    assert [e.reason for e in jobs.events(name) if e.type == "Warning"] == []


# -- LimitRange defaults ------------------------------------------------------------------------
@pytest.fixture
def container_defaults(admin_api):
    api = client.CoreV1Api(admin_api)
    name = unique("defaults")
    api.create_namespaced_limit_range(NS, {
        "apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name},
        "spec": {"limits": [{"type": "Container",
                             "default": {"cpu": "750m", "memory": "768Mi"},
                             "defaultRequest": {"cpu": "250m", "memory": "256Mi"}}]}})
    yield name
    api.delete_namespaced_limit_range(name, NS)


def test_a_pod_without_resources_gets_the_limit_ranges_defaults(container_defaults, core):
    name = unique("defaulted")
    created = core.create_namespaced_pod(NS, bare_pod(name, [
        container("main", "sleep", "infinity"),
        container("partial", "sleep", "infinity",
                  resources={"limits": {"cpu": "2"}, "requests": {"memory": "512Mi"}})]))
    try:
        main, partial = created.spec.containers
        assert main.resources.limits == {"cpu": "750m", "memory": "768Mi"}
        assert main.resources.requests == {"cpu": "250m", "memory": "256Mi"}
        # what a container sets is kept; only what it leaves out is filled in, after the
        # API's own defaulting made the CPU request its limit
        assert partial.resources.limits == {"cpu": "2", "memory": "768Mi"}
        assert partial.resources.requests == {"cpu": "2", "memory": "512Mi"}
        stored = core.read_namespaced_pod(name, NS)
        assert stored.spec.containers[0].resources.limits == main.resources.limits
        assert stored.metadata.annotations["kubernetes.io/limit-ranger"] == (
            "LimitRanger plugin set: cpu, memory request for container main; cpu, memory "
            "limit for container main; memory limit for container partial")
        assert stored.status.qos_class == "Burstable"
    finally:
        delete_pod(core, name)


# -- pods/log -----------------------------------------------------------------------------------
@pytest.fixture
def two_containers(core):
    name = unique("two")
    core.create_namespaced_pod(NS, bare_pod(name, [
        container("talker", "sh", "-c", "echo one; echo two; echo three; sleep infinity"),
        container("sidecar", "sleep", "infinity")]))
    yield name
    delete_pod(core, name)


def log_error(call) -> tuple[int, str]:
    with pytest.raises(ApiException) as e:
        call()
    body = e.value.body
    return e.value.status, (body.decode() if isinstance(body, bytes) else body)


def test_a_pod_with_two_containers_needs_a_container_name_for_its_log(two_containers, core):
    status, body = log_error(lambda: core.read_namespaced_pod_log(two_containers, NS))
    assert status == 400
    assert (f"a container name must be specified for pod {two_containers}, choose one of: "
            "[talker sidecar]") in body
    status, body = log_error(lambda: core.read_namespaced_pod_log(
        two_containers, NS, container="x"))
    assert status == 400
    assert f"container x is not valid for pod {two_containers}" in body


def test_tail_lines_and_timestamps_of_a_containers_log(two_containers, core):
    def talked() -> str:
        return core.read_namespaced_pod_log(two_containers, NS, container="talker")
    assert wait_until(lambda: talked() == "one\ntwo\nthree\n", 60,
                      message=lambda: f"the three lines; log is {talked()!r}")
    assert core.read_namespaced_pod_log(two_containers, NS, container="talker",
                                        tail_lines=2) == "two\nthree\n"
    assert core.read_namespaced_pod_log(two_containers, NS, container="talker",
                                        tail_lines=0) == ""
    stamped = core.read_namespaced_pod_log(two_containers, NS, container="talker",
                                           timestamps=True, tail_lines=1)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z three\n", stamped), stamped
    assert core.read_namespaced_pod_log(two_containers, NS, container="sidecar") == ""


# -- mpijobs/status and PUT ---------------------------------------------------------------------
def test_the_status_subresource_reads_and_writes_only_the_status(jobs: Jobs):
    name = unique("status")
    # managed by another controller, so the operator never writes its status
    jobs.create(mpijob(name, runPolicy={"managedBy": "kueue.x-k8s.io/multikueue"}))
    custom = jobs.custom
    condition = {"type": "Created", "status": "True", "reason": "SetByTest",
                 "message": "written through /status",
                 "lastTransitionTime": "2025-01-02T03:04:05Z",
                 "lastUpdateTime": "2025-01-02T03:04:05Z"}
    patched = custom.patch_namespaced_custom_object_status(
        GROUP, MPI_VERSION, NS, "mpijobs", name,
        {"status": {"conditions": [condition], "startTime": "2025-01-02T03:04:05Z"},
         "spec": {"slotsPerWorker": 7}, "metadata": {"labels": {"via": "status"}}})
    assert patched["status"]["conditions"] == [condition]
    assert patched["spec"]["slotsPerWorker"] == 1  # a write to /status changes only status
    assert "via" not in (patched["metadata"].get("labels") or {})
    read = custom.get_namespaced_custom_object_status(GROUP, MPI_VERSION, NS, "mpijobs", name)
    assert read["status"]["conditions"] == [condition]
    assert read["status"]["startTime"] == "2025-01-02T03:04:05Z"
    assert read["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]

    # a write of the main resource ignores the status it carries
    main = jobs.patch(name, {"metadata": {"labels": {"via": "main"}},
                             "status": {"startTime": "1999-01-01T00:00:00Z"}})
    assert main["metadata"]["labels"]["via"] == "main"
    assert main["status"]["startTime"] == "2025-01-02T03:04:05Z"
    assert jobs.get(name)["status"]["conditions"] == [condition]


def test_replace_puts_a_whole_mpijob_and_keeps_its_status(jobs: Jobs):
    name = unique("put")
    jobs.create(mpijob(name, runPolicy={"managedBy": "kueue.x-k8s.io/multikueue"}))
    custom = jobs.custom
    custom.patch_namespaced_custom_object_status(
        GROUP, MPI_VERSION, NS, "mpijobs", name,
        {"status": {"startTime": "2025-01-02T03:04:05Z"}})
    current = jobs.get(name)
    assert current["metadata"]["generation"] == 1
    body = {**current, "spec": {**current["spec"], "slotsPerWorker": 4},
            "status": {"startTime": "1999-01-01T00:00:00Z"}}
    replaced = custom.replace_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs", name,
                                                       body)
    assert replaced["spec"]["slotsPerWorker"] == 4
    assert replaced["status"] == {"startTime": "2025-01-02T03:04:05Z"}
    assert replaced["metadata"]["generation"] == 2
    assert replaced["metadata"]["uid"] == current["metadata"]["uid"]
    assert jobs.get(name)["spec"]["slotsPerWorker"] == 4

    # the body still carries the old resourceVersion: a conflict, nothing written
    stale = {**body, "spec": {**body["spec"], "slotsPerWorker": 9}}
    with pytest.raises(ApiException) as e:
        custom.replace_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs", name, stale)
    assert e.value.status == 409
    assert jobs.get(name)["spec"]["slotsPerWorker"] == 4


# -- the launcher's training log ----------------------------------------------------------------
EPOCH_LINE = re.compile(r"Epoch (\d+)/(\d+): loss ([\d.]+), accuracy ([\d.]+), ([\d.]+) img/sec "
                        r"\(([\d.]+) img/sec per rank\)")
STEP_LINE = re.compile(r"Epoch (\d+)/(\d+) step \d+/\d+: loss ([\d.]+), lr ([\d.]+), "
                       r"([\d.]+) img/sec")


def test_the_launchers_loss_falls_from_epoch_to_epoch_with_throughput_lines(jobs: Jobs):
    name = unique("train")
    jobs.create(mpijob(name, workers=2))
    jobs.wait_condition(name, "Succeeded", timeout=90)
    launcher = jobs.job_pods(name, "launcher")[0].metadata.name
    lines = jobs.core.read_namespaced_pod_log(launcher, NS).splitlines()
    epochs = [EPOCH_LINE.fullmatch(line) for line in lines]
    epochs = [m for m in epochs if m]
    assert [int(m[1]) for m in epochs] == list(range(1, 11))
    assert {m[2] for m in epochs} == {"10"}
    losses = [float(m[3]) for m in epochs]
    assert all(a > b for a, b in itertools.pairwise(losses)), losses
    accuracies = [float(m[4]) for m in epochs]
    assert accuracies == sorted(accuracies)
    for m in epochs:  # two ranks share the throughput
        assert float(m[5]) > 0
        assert float(m[6]) == pytest.approx(float(m[5]) / 2, abs=0.1)
    steps = [m for m in (STEP_LINE.fullmatch(line) for line in lines) if m]
    assert [int(m[1]) for m in steps] == list(range(1, 11))
    assert all(float(m[5]) > 0 for m in steps)
    rates = [float(m[4]) for m in steps]  # the learning rate decays over the run
    assert all(a > b for a, b in itertools.pairwise(rates)), rates
    # each epoch's mid-epoch step comes before the epoch line
    assert lines.index(steps[0][0]) < lines.index(epochs[0][0]) < lines.index(steps[1][0])
    assert any(re.fullmatch(r"Total img/sec on 2 rank\(s\): [\d.]+ \+-[\d.]+", line)
               for line in lines)
    assert any(re.fullmatch(r"Img/sec per rank: [\d.]+ \+-[\d.]+", line) for line in lines)
    assert lines[-3].startswith("Training complete: 10 epochs in 5.0s, final loss ")


# -- the MPI Operator's metrics -----------------------------------------------------------------
def operator_metrics(sim: simcluster_process.SimCluster) -> dict:
    resp = requests.get(sim.api_url + "/metrics", verify=str(sim.ca_file), timeout=30,
                        headers={"Authorization": f"Bearer {sim.token('admin')}"})
    resp.raise_for_status()
    return parse(resp.text)


def test_the_mpi_operators_metrics_count_created_succeeded_and_failed_jobs(simcluster,
                                                                           jobs: Jobs):
    before = operator_metrics(simcluster)
    ok, failing = unique("counted"), unique("counted-fail")
    jobs.create(mpijob(ok, workers=1))
    jobs.create(mpijob(failing, workers=1, run_seconds=4, runPolicy={"backoffLimit": 0},
                       annotations={"simcluster.io/failure": "exit-code"}))
    jobs.wait_condition(ok, "Succeeded", timeout=90)
    jobs.wait_condition(failing, "Failed", timeout=90)
    after = operator_metrics(simcluster)

    def grew(metric: str) -> float:
        return value(after, metric) - value(before, metric)
    assert grew("mpi_operator_jobs_created_total") == 2
    assert grew("mpi_operator_jobs_successful_total") == 1
    assert grew("mpi_operator_jobs_failed_total") == 1
    for job in (ok, failing):
        assert value(after, "mpi_operator_job_info", launcher=f"{job}-launcher",
                     namespace=NS) == 1


# -- the demo scenario ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    sim = simcluster_process.start(tmp_path_factory.mktemp("demo") / "state", scenario="demo",
                                   speed=50)
    with sim.api_client("admin") as api:
        yield sim, client.CoreV1Api(api), client.CustomObjectsApi(api)
    sim.stop()


def conditions(job: dict) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c.get("reason", ""))
            for c in (job.get("status") or {}).get("conditions") or []}


def test_the_demo_has_a_running_8_worker_mpijob(demo):
    _, core, custom = demo
    job = custom.get_namespaced_custom_object(GROUP, MPI_VERSION, "team-nlp", "mpijobs",
                                              "bert-large-pretrain")
    assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 8
    assert conditions(job)["Running"] == ("True", "MPIJobRunning")
    workers = core.list_namespaced_pod(
        "team-nlp", label_selector="training.kubeflow.org/job-name=bert-large-pretrain,"
                                   "training.kubeflow.org/job-role=worker").items
    assert sorted(p.metadata.name for p in workers) == [
        f"bert-large-pretrain-worker-{i}" for i in range(8)]
    assert {p.status.phase for p in workers} == {"Running"}
    assert job["status"]["replicaStatuses"]["Worker"] == {"active": 8}


def test_the_demo_has_a_succeeded_and_a_failed_mpijob(demo):
    _, core, custom = demo
    done = custom.get_namespaced_custom_object(GROUP, MPI_VERSION, "team-cv", "mpijobs",
                                               "resnet50-imagenet")
    assert conditions(done)["Succeeded"] == ("True", "MPIJobSucceeded")
    failed = custom.get_namespaced_custom_object(GROUP, MPI_VERSION, "team-nlp", "mpijobs",
                                                 "gpt2-finetune")
    assert conditions(failed)["Failed"] == ("True", "BackoffLimitExceeded")
    worker = core.read_namespaced_pod("gpt2-finetune-worker-2", "team-nlp")
    assert worker.status.phase == "Failed"
    terminated = worker.status.container_statuses[0].state.terminated
    assert (terminated.reason, terminated.exit_code) == ("OOMKilled", 137)


def test_the_demo_has_a_pending_mpijob_that_cannot_be_scheduled(demo):
    _, core, custom = demo
    job = custom.get_namespaced_custom_object(GROUP, MPI_VERSION, "team-cv", "mpijobs",
                                              "vit-huge-pretrain")
    assert "Running" not in conditions(job) or conditions(job)["Running"][0] == "False"
    worker = core.read_namespaced_pod("vit-huge-pretrain-worker-0", "team-cv")
    assert worker.status.phase == "Pending"
    events = core.list_namespaced_event(
        "team-cv", field_selector="involvedObject.name=vit-huge-pretrain-worker-0,"
                                  "reason=FailedScheduling").items
    assert events and events[0].type == "Warning"
    assert "Insufficient nvidia.com/gpu" in events[0].message
    assert events[0].count > 1  # tried again and again over its 15 minutes


def test_the_demo_has_a_pytorchjob_and_a_tfjob(demo):
    _, core, custom = demo
    torch = custom.get_namespaced_custom_object(GROUP, "v1", "research", "pytorchjobs",
                                                "bert-classifier-ddp")
    assert conditions(torch)["Running"] == ("True", "PyTorchJobRunning")
    tf = custom.get_namespaced_custom_object(GROUP, "v1", "research", "tfjobs",
                                             "mnist-tf-dist")
    assert conditions(tf)["Succeeded"] == ("True", "TFJobSucceeded")
    master = core.read_namespaced_pod("bert-classifier-ddp-master-0", "research")
    assert master.status.phase == "Running"


# -- the demo's trouble: each kind a newcomer should meet ---------------------------------------
def mpi(custom: client.CustomObjectsApi, ns: str, name: str) -> dict:
    return custom.get_namespaced_custom_object(GROUP, MPI_VERSION, ns, "mpijobs", name)


def job_pods(core: client.CoreV1Api, ns: str, job: str, role: str = "") -> list:
    selector = f"training.kubeflow.org/job-name={job}"
    if role:
        selector += f",training.kubeflow.org/job-role={role}"
    return sorted(core.list_namespaced_pod(ns, label_selector=selector).items,
                  key=lambda p: p.metadata.name)


def launcher_of(core: client.CoreV1Api, ns: str, job: str) -> tuple[client.V1Pod, list[str]]:
    (pod,) = job_pods(core, ns, job, "launcher")
    return pod, core.read_namespaced_pod_log(pod.metadata.name, ns).splitlines()


def event_messages(core: client.CoreV1Api, ns: str, name: str, reason: str) -> list[str]:
    return [e.message for e in core.list_namespaced_event(
        ns, field_selector=f"involvedObject.name={name},reason={reason}").items]


def waiting_of(pod: client.V1Pod) -> tuple[str, str]:
    waiting = pod.status.container_statuses[0].state.waiting
    return (waiting.reason, waiting.message or "") if waiting else ("", "")


@pytest.mark.parametrize("ns,name,exit_code,evidence", [
    ("team-nlp", "llama2-7b-sft", 1, "[1,1]<stderr>:torch.OutOfMemoryError: CUDA out of "
                                     "memory. Tried to allocate "),
    ("team-nlp", "roberta-squad", 127, "/bin/sh: 1: pyhton: not found"),
    ("team-cv", "clip-mesh-finetune", 1, "kex_exchange_identification: read: Connection "
                                         "reset by peer"),
    ("team-cv", "custom-op-bench", 139, "[1,0]<stderr>:[custom-op-bench-worker-0:"),
])
def test_the_demo_keeps_the_failed_launchers_that_say_why(demo, ns, name, exit_code,
                                                          evidence):
    _, core, custom = demo
    assert conditions(mpi(custom, ns, name))["Failed"] == ("True", "BackoffLimitExceeded/")
    pod, log = launcher_of(core, ns, name)
    assert pod.status.phase == "Failed"
    assert pod.status.container_statuses[0].state.terminated.exit_code == exit_code
    assert any(line.startswith(evidence) for line in log), log[-20:]
    assert job_pods(core, ns, name, "worker") == []  # cleanPodPolicy Running


def test_the_demo_cuda_oom_and_segfault_jobs_name_their_rank(demo):
    _, core, custom = demo
    spec = mpi(custom, "team-nlp", "llama2-7b-sft")["spec"]["mpiReplicaSpecs"]
    assert spec["Worker"]["replicas"] == 2
    assert "--batch-size" in spec["Launcher"]["template"]["spec"]["containers"][0]["command"]
    _, log = launcher_of(core, "team-nlp", "llama2-7b-sft")
    assert "GPU 0 has a total capacity of 79.15 GiB" in next(
        line for line in log if "OutOfMemoryError" in line)
    assert "  Exit code:    1" in log
    _, log = launcher_of(core, "team-cv", "custom-op-bench")
    assert log[-2] == ("mpirun noticed that process rank 0 with PID " + log[-2].split()[8]
                       + " on node custom-op-bench-worker-0.custom-op-bench.team-cv.svc "
                       "exited on signal 11 (Segmentation fault).")
    meshed = mpi(custom, "team-cv", "clip-mesh-finetune")["spec"]["mpiReplicaSpecs"]
    assert meshed["Worker"]["template"]["metadata"]["annotations"] == {
        "sidecar.istio.io/inject": "true"}
    assert "simcluster.io/failure" not in mpi(custom, "team-cv", "clip-mesh-finetune")[
        "metadata"]["annotations"]


def test_the_demo_has_a_job_whose_node_was_lost(demo):
    _, core, custom = demo
    assert conditions(mpi(custom, "team-cv", "efficientnet-b7"))["Failed"] == (
        "True", "BackoffLimitExceeded")
    (worker,) = job_pods(core, "team-cv", "efficientnet-b7", "worker")
    assert worker.metadata.name == "efficientnet-b7-worker-1"
    assert (worker.status.phase, worker.status.reason) == ("Failed", "NodeLost")
    assert worker.status.message == (f"Node {worker.spec.node_name} which was running pod "
                                     "efficientnet-b7-worker-1 is unresponsive")
    assert event_messages(core, "team-cv", "efficientnet-b7-worker-1", "NodeNotReady") == [
        "Node is not ready"]


def test_the_demo_has_running_jobs_with_trouble_inside(demo):
    sim, core, custom = demo
    for ns, name in (("team-nlp", "gpt-neox-hang"), ("team-cv", "t5-base-restart"),
                     ("team-cv", "sd-finetune")):
        assert conditions(mpi(custom, ns, name))["Running"] == ("True", "MPIJobRunning")
        assert {p.status.phase for p in job_pods(core, ns, name)} == {"Running"}
    _, log = launcher_of(core, "team-nlp", "gpt-neox-hang")
    assert log[-1].startswith("Model: ")  # and nothing after the start-up
    restarts = {p.metadata.name: p.status.container_statuses[0].restart_count
                for p in job_pods(core, "team-cv", "t5-base-restart", "worker")}
    assert restarts == {"t5-base-restart-worker-0": 0, "t5-base-restart-worker-1": 1}
    previous = core.read_namespaced_pod_log("t5-base-restart-worker-1", "team-cv",
                                            previous=True).splitlines()
    assert previous[-1].startswith("RuntimeError: NCCL communicator was aborted on rank 1.")
    r = requests.get(sim.prometheus_url + "/api/v1/query", params={
        "query": 'DCGM_FI_DEV_GPU_UTIL{namespace="team-cv",pod=~"sd-finetune-worker-.*"}'},
        headers={"Authorization": f"Bearer {sim.token('admin')}"}, verify=str(sim.ca_file),
        timeout=30)
    values = [float(s["value"][1]) for s in r.json()["data"]["result"]]
    assert len(values) == 2 and all(20 <= v <= 30 for v in values)


def test_the_demo_has_jobs_waiting_for_what_they_need(demo):
    _, core, _ = demo
    # a claim that does not exist
    assert job_pods(core, "team-nlp", "bert-qa-squad", "launcher") == []
    (worker,) = job_pods(core, "team-nlp", "bert-qa-squad", "worker")
    assert worker.status.phase == "Pending" and not worker.spec.node_name
    assert event_messages(core, "team-nlp", "bert-qa-squad-worker-0", "FailedScheduling") == [
        '0/7 nodes are available: persistentvolumeclaim "squad-data" not found. preemption: '
        "0/7 nodes are available: 7 Preemption is not helpful for scheduling."]
    # a secret that does not exist
    pods = job_pods(core, "team-nlp", "t5-wandb-logging")
    assert len(pods) == 3 and {p.status.phase for p in pods} == {"Pending"}
    assert {waiting_of(p) for p in pods} == {
        ("CreateContainerConfigError", 'secret "wandb-credentials" not found')}
    # a private image without a pull secret
    pods = job_pods(core, "team-cv", "detr-coco-train")
    assert len(pods) == 3 and {p.status.phase for p in pods} == {"Pending"}
    assert {waiting_of(p)[0] for p in pods} <= {"ErrImagePull", "ImagePullBackOff"}
    (failed,) = [m for m in event_messages(core, "team-cv", "detr-coco-train-worker-0",
                                           "Failed") if m.startswith("Failed to pull")]
    assert failed.endswith("reading manifest 2.0-private in quay.io/cv-research/detr: "
                           "unauthorized: access to the requested resource is not authorized")


def test_the_demo_has_jobs_refused_by_quota_and_limit_range(demo):
    _, core, custom = demo
    for ns, name, refusal in (
            ("team-nlp", "llama-13b-pretrain",
             "exceeded quota: team-quota, requested: requests.memory=700Gi, used: "
             "requests.memory=984Gi, limited: requests.memory=1536Gi"),
            ("team-cv", "vit-l-cpu-heavy",
             "maximum cpu usage per Container is 64, but limit is 96")):
        assert "status" not in mpi(custom, ns, name)
        assert job_pods(core, ns, name) == []
        assert event_messages(core, ns, name, "MPIJobFailed") == [
            f'worker pod created failed: pods "{name}-worker-0" is forbidden: {refusal}']


def test_leases_serve_leader_election_a_stale_update_is_a_conflict(admin_api):
    """coordination.k8s.io/v1 Leases as controllers use them: create, read, and an update
    carrying a resourceVersion that changed meanwhile refused with 409 Conflict."""
    leases = client.CoordinationV1Api(admin_api)
    name = unique("lease")
    body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}}
    created = leases.create_namespaced_lease(NS, body)
    assert created.spec.holder_identity == "a"
    read = leases.read_namespaced_lease(name, NS)
    read.spec.holder_identity = "b"
    leases.replace_namespaced_lease(name, NS, read)  # b wins
    stale = created
    stale.spec.holder_identity = "c"
    with pytest.raises(ApiException) as refused:
        leases.replace_namespaced_lease(name, NS, stale)
    assert refused.value.status == 409
    assert leases.read_namespaced_lease(name, NS).spec.holder_identity == "b"
    leases.delete_namespaced_lease(name, NS)
