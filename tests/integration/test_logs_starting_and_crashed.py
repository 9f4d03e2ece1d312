"""Logs of a job that is starting, and of a crashed run, read as people read them (the SDK's
`get_logs` and `odh training logs`) against a real simcluster: what exists is given, what
has not started is said and waited for with follow, and the run before a restart can be
read (`--previous`, `previous=True`)."""

from __future__ import annotations

import io
import threading
import uuid

import pytest

from odh.training import MPIJob, errors
from odh.training.cli import main as odh_training
from odh.training.sdk import TrainingClient
from tests.training_jobs import NS, Jobs, mpijob
from tests.waiting import wait_until


@pytest.fixture(scope="module")
def jobs(admin_api):
    made = Jobs(admin_api)
    yield made
    made.cleanup()


@pytest.fixture(scope="module")
def alice_sdk(simcluster):
    with TrainingClient(kubeconfig=str(simcluster.kubeconfig("alice"))) as client:
        yield client


@pytest.fixture
def logs(simcluster, capsys):
    """`odh training logs ...` as alice: (exit status, stdout, stderr)."""
    def run(*args: str) -> tuple[int, str, str]:
        out = io.StringIO()
        code = odh_training(["logs", "mpijob", *args, "-n", NS, "--kubeconfig",
                             str(simcluster.kubeconfig("alice"))], out=out)
        return code, out.getvalue(), capsys.readouterr().err
    return run


def test_a_job_without_pods_yet_has_no_lines_and_no_error(jobs, alice_sdk, logs):
    jobs.create(mpijob("logs-held", run_seconds=1, runPolicy={"suspend": True}))
    assert list(MPIJob.get("logs-held", NS, client=alice_sdk).get_logs()) == []
    code, out, err = logs("logs-held")
    assert (code, out) == (0, "")
    assert "The Launcher has not started yet: no log to show" in err
    code, out, err = logs("logs-held", "--all-workers")
    assert (code, out) == (0, "")
    assert "no Worker of logs-held has started yet: no log to show" in err


def test_pods_whose_containers_wait_to_start_are_named_not_failed(jobs, alice_sdk, logs):
    # an image no node has yet (one a node has is not pulled, so its pull cannot fail)
    body = mpijob("logs-pull", annotations={"simcluster.io/failure": "image-pull"})
    for replica in body["spec"]["mpiReplicaSpecs"].values():
        replica["template"]["spec"]["containers"][0]["image"] = \
            f"quay.io/team-nlp/private:{uuid.uuid4().hex[:8]}"
    jobs.create(body)
    wait_until(lambda: len(jobs.job_pods("logs-pull", "worker")) == 2, 30,
               message="the Workers' pods")
    job = MPIJob.get("logs-pull", NS, client=alice_sdk)
    assert list(job.get_logs(component="worker", worker_id=1)) == []
    code, out, err = logs("logs-pull", "--all-workers")
    assert (code, out) == (0, "")
    assert "Worker 0 has not started yet" in err and "Worker 1 has not started yet" in err


def test_follow_waits_for_a_job_that_has_not_started(jobs, alice_sdk):
    jobs.create(mpijob("logs-later", run_seconds=2, runPolicy={"suspend": True}))
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(
        MPIJob.get("logs-later", NS, client=alice_sdk).get_logs(follow=True)), daemon=True)
    reader.start()
    reader.join(1.0)
    assert reader.is_alive() and lines == []  # waiting, not failed
    jobs.patch("logs-later", {"spec": {"runPolicy": {"suspend": False}}})
    reader.join(60)
    assert not reader.is_alive()
    assert lines, "the Launcher's lines, once it ran"


def test_the_crashed_run_of_a_restarted_worker_can_be_read(jobs, alice_sdk, logs):
    body = mpijob("logs-crash", run_seconds=30,
                  annotations={"simcluster.io/failure": "restart-once",
                               "simcluster.io/failure-worker": "1",
                               "simcluster.io/failure-after-seconds": "1"})
    body["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = "OnFailure"
    jobs.create(body)

    def restarted() -> bool:
        pods = [p for p in jobs.job_pods("logs-crash", "worker")
                if p.metadata.name.endswith("-worker-1")]
        return bool(pods and pods[0].status.container_statuses
                    and pods[0].status.container_statuses[0].restart_count >= 1)

    wait_until(restarted, 60, message="Worker 1's restart")
    job = MPIJob.get("logs-crash", NS, client=alice_sdk)
    crashed = list(job.get_logs(component="worker", worker_id=1, previous=True))
    assert any("NCCL communicator was aborted" in line for line in crashed)
    current = list(job.get_logs(component="worker", worker_id=1))
    assert not any("NCCL communicator was aborted" in line for line in current)
    code, out, _err = logs("logs-crash", "--worker", "1", "--previous")
    assert code == 0 and "NCCL communicator was aborted" in out
    # the Launcher never restarted: said in plain words, exit 1
    code, out, err = logs("logs-crash", "--previous")
    assert code == 1 and out == ""
    assert "Launcher has no crashed run to show: its container has not restarted." in err
    with pytest.raises(errors.NotFound):
        list(job.get_logs(previous=True))
    with pytest.raises(ValueError):
        job.get_logs(previous=True, follow=True)
