"""One job cannot freeze simcluster: absurd epochs, ranks or replica counts are bounded
(simcluster/README.md, "Limits of the simulation"), and the API keeps answering while
such a job runs.

Each test creates its job on a simcluster process of its own module (a frozen server must
not take the session's cluster down with it), then asks the API for something with a
short client timeout, several times while the job's pods come and go."""

from __future__ import annotations

import pytest
import requests
from kubernetes import client

from tests import simcluster_process
from tests.training_jobs import NS, Jobs, mpijob
from tests.waiting import wait_until

CLIENT_TIMEOUT = 5  # seconds a client waits for an answer before it gives up


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = simcluster_process.start(tmp_path_factory.mktemp("limits") / "state",
                                   scenario="empty", speed=50)
    yield sim
    sim.stop()


@pytest.fixture
def jobs(cluster):
    with cluster.api_client("admin") as api:
        yield Jobs(api, NS)


class Probe:
    """Asks the API for a health check and a list with a short client timeout; every
    failure is kept (wait_until would retry through an exception), and `ok` says whether
    every answer came in time."""

    def __init__(self, cluster: simcluster_process.SimCluster, jobs: Jobs) -> None:
        self.cluster = cluster
        self.jobs = jobs
        self.asked = 0
        self.failures: list[str] = []

    def __call__(self) -> bool:
        self.asked += 1
        try:
            ready = requests.get(self.cluster.api_url + "/readyz",
                                 verify=str(self.cluster.ca_file), timeout=CLIENT_TIMEOUT)
            listed = self.jobs.custom.list_namespaced_custom_object(
                "kubeflow.org", "v2beta1", NS, "mpijobs", _request_timeout=CLIENT_TIMEOUT)
        except Exception as e:  # a timeout is what this looks for
            self.failures.append(repr(e))
            return False
        if (ready.status_code, ready.text, listed["kind"]) != (200, "ok", "MPIJobList"):
            self.failures.append(f"{ready.status_code} {ready.text!r} {listed['kind']}")
            return False
        return True

    @property
    def ok(self) -> bool:
        return self.asked > 0 and not self.failures


@pytest.fixture
def answers(cluster, jobs):
    return Probe(cluster, jobs)


def launcher_log(jobs: Jobs, name: str) -> str:
    pods = jobs.job_pods(name, "launcher")
    if not pods:
        return ""
    return jobs.core.read_namespaced_pod_log(pods[0].metadata.name, NS,
                                             _request_timeout=CLIENT_TIMEOUT)


def warning(jobs: Jobs, name: str, reason: str, kind: str = "MPIJob") -> client.CoreV1Event:
    event = jobs.wait_event(name, reason, kind=kind, timeout=30)
    assert event.type == "Warning"
    return event


def test_a_hundred_million_epochs_are_clamped_to_a_thousand(answers: Probe, jobs: Jobs):
    name = "many-epochs"
    jobs.create(mpijob(name, annotations={"simcluster.io/epochs": "100000000"}))
    assert answers()
    event = warning(jobs, name, "InvalidSimclusterAnnotation")
    assert event.message == ("simcluster.io/epochs: 100000000 is more than simcluster "
                             "simulates; using 1000 epochs")
    wait_until(lambda: answers() and "Epoch 1/1000" in launcher_log(jobs, name),
               60, message="the launcher's first epoch of 1000")
    jobs.wait_condition(name, "Succeeded", timeout=90)
    log = launcher_log(jobs, name)
    assert "Model: " in log and ", 1000 epochs" in log
    assert "Epoch 1000/1000: loss " in log
    assert "Training complete: 1000 epochs in 5.0s" in log
    assert answers() and answers.ok, answers.failures


def test_a_hundred_million_ranks_log_32_rank_lines_and_a_summary(answers: Probe, jobs: Jobs):
    name = "many-ranks"
    jobs.create(mpijob(name, launcher_command=["mpirun", "-np", "100000000",
                                               "/home/mpiuser/pi"]))
    assert answers()
    jobs.wait_condition(name, "Succeeded", timeout=90)
    assert answers()
    lines = launcher_log(jobs, name).splitlines()
    ranks = [line for line in lines if line.startswith("Horovod rank ")]
    assert len(ranks) == 32
    assert ranks[0] == (f"Horovod rank 0/100000000 (local rank 0) started on "
                        f"{name}-worker-0.{name}.{NS}.svc")
    assert ranks[-1].startswith("Horovod rank 31/100000000 ")
    assert ("Horovod ranks 32..99999999 started (99999968 more ranks on 2 host(s); "
            "simcluster logs the first 32)") in lines
    assert any(line.startswith("Total img/sec on 100000000 rank(s): ") for line in lines)
    assert answers() and answers.ok, answers.failures


def test_a_hundred_thousand_workers_are_capped_at_a_thousand_pods(answers: Probe, jobs: Jobs):
    name = "many-workers"
    jobs.create(mpijob(name, workers=100000, run_seconds=3600))
    assert answers()
    event = warning(jobs, name, "SimclusterReplicaLimit")
    assert event.message == ("simcluster creates at most 1000 Worker pods per MPIJob: "
                             "workers 1000..99999 of 100000 are not created")

    def workers() -> int:
        answers()  # asked again and again while the pods are being made
        return len(jobs.core.list_namespaced_pod(
            NS, label_selector=f"training.kubeflow.org/job-name={name},"
                               "training.kubeflow.org/job-role=worker",
            _request_timeout=CLIENT_TIMEOUT).items)

    wait_until(lambda: workers() == 1000, 120, message=lambda: f"1000 workers; {workers()}")
    stored = jobs.get(name)
    assert stored["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 100000  # as sent
    assert [c["type"] for c in stored["status"]["conditions"]] == ["Created"]
    assert not jobs.core.list_namespaced_pod(
        NS, field_selector=f"metadata.name={name}-worker-1000").items
    hostfile = jobs.core.read_namespaced_config_map(f"{name}-config", NS).data["hostfile"]
    assert len(hostfile.splitlines()) == 1000

    # the single node takes 250 pods; the others wait, as on a real cluster
    def pending_with_reason() -> bool:
        answers()
        pod = jobs.core.read_namespaced_pod(f"{name}-worker-999", NS)
        return pod.status.phase == "Pending" and any(
            e.reason == "FailedScheduling" for e in jobs.events(f"{name}-worker-999", "Pod"))
    wait_until(pending_with_reason, 60, message="worker 999 Pending with FailedScheduling")
    assert answers()
    jobs.delete(name)
    wait_until(lambda: answers() and not jobs.job_pods(name), 120,
               message="the workers to be deleted")
    assert answers.ok, answers.failures


def test_a_pytorchjob_with_a_hundred_thousand_workers_is_capped_too(answers: Probe, jobs: Jobs):
    name = "many-torch"
    container = {"name": "pytorch", "image": "docker.io/kubeflow/pytorch-dist-mnist:latest",
                 "command": ["python", "/opt/mnist/src/mnist.py"]}
    jobs.create({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                 "metadata": {"name": name},
                 "spec": {"pytorchReplicaSpecs": {
                     "Master": {"replicas": 1, "template": {"spec": {"containers": [container]}}},
                     "Worker": {"replicas": 100000,
                                "template": {"spec": {"containers": [container]}}}}}},
                "pytorchjobs", "v1")
    assert answers()
    event = warning(jobs, name, "SimclusterReplicaLimit", kind="PyTorchJob")
    assert event.message == ("simcluster creates at most 1000 Worker pods per PyTorchJob: "
                             "workers 1000..99999 of 100000 are not created")

    def workers() -> int:
        answers()
        return len(jobs.core.list_namespaced_pod(
            NS, label_selector=f"training.kubeflow.org/job-name={name},"
                               "training.kubeflow.org/replica-type=worker",
            _request_timeout=CLIENT_TIMEOUT).items)

    wait_until(lambda: workers() == 1000, 120, message=lambda: f"1000 workers; {workers()}")
    assert answers()
    jobs.delete(name, "pytorchjobs", "v1")
    wait_until(lambda: answers() and not jobs.job_pods(name), 120,
               message="the pods to be deleted")
    assert answers.ok, answers.failures
