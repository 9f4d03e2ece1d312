"""`odh-training` (the alias of `odh training`) in its first form, without a job type, run
as a person runs it (a process with a kubeconfig) against a real simcluster: alice may edit
team-nlp, bob may not. The plan's own grammar is tested in test_training_cli_plan.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from odh.training.sdk import TrainingClient
from tests import simcluster_process
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "team-nlp"
COMMAND = ["--", "horovodrun", "-np", "2", "python", "train.py"]


@pytest.fixture(scope="module")
def simcluster(tmp_path_factory):
    """A cluster of this module's own: its jobs wait for room on the one node, so the jobs
    other modules leave running on the session's cluster would make them fail."""
    cluster = simcluster_process.start(tmp_path_factory.mktemp("cli-cluster") / "state",
                                       scenario="empty", speed=50)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def cli(simcluster, tmp_path_factory):
    home = tmp_path_factory.mktemp("cli-home")

    def run(*args: str, user: str = "alice", stdin: str | None = None,
            ) -> subprocess.CompletedProcess:
        env = dict(os.environ, KUBECONFIG=str(simcluster.kubeconfig(user)), HOME=str(home),
                   PYTHONPATH=str(ROOT))
        return subprocess.run([sys.executable, "-m", "odh.training.cli", *args], env=env,
                              input=stdin, capture_output=True, text=True, timeout=120)
    return run


@pytest.fixture(scope="module")
def training(simcluster):
    with TrainingClient(kubeconfig=str(simcluster.kubeconfig("alice"))) as client:
        yield client


def small_job(name: str, *extra: str) -> list[str]:
    return ["create", "--name", name, "--image", "quay.io/team-nlp/bert:1.0", "--workers",
            "2", "--cpu", "1", "--memory", "1Gi", "--launcher-cpu", "500m",
            "--launcher-memory", "512Mi", "--annotation", "simcluster.io/run-seconds=3000",
            *extra, *COMMAND]


def manifest(name: str, run_seconds: int) -> str:
    return f"""
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: {name}
  annotations: {{simcluster.io/run-seconds: "{run_seconds}"}}
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: quay.io/team-nlp/bert:1.0
            command: [horovodrun, -np, "2", python, train.py]
            resources: {{requests: {{cpu: 500m, memory: 512Mi}}}}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: quay.io/team-nlp/bert:1.0
            resources: {{requests: {{cpu: "1", memory: 1Gi}}}}
"""


def test_it_creates_a_job_from_flags_and_lists_and_describes_it(cli, training):
    created = cli(*small_job("cli-flags", "--env", "NCCL_DEBUG=INFO"))
    assert created.returncode == 0, created.stderr
    assert created.stdout.startswith("Created the MPIJob team-nlp/cli-flags: 2 Workers x "
                                     "1 CPU, 1Gi, 1 slot per worker.")
    job = training.get_job("cli-flags", NAMESPACE)
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    assert launcher["command"] == ["horovodrun", "-np", "2", "python", "train.py"]
    assert {"name": "NCCL_DEBUG", "value": "INFO"} in launcher["env"]

    listed = cli("list")  # the alias's old form: no type, the context's project
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["NAME", "TYPE", "STATUS", "WORKERS", "CREATED"]
    row = next(r for r in rows if r.startswith("cli-flags "))
    assert row.split()[1] == "MPIJob" and row.endswith(" ago")

    wait_until(lambda: "Worker 1" in cli("describe", "mpijob", "cli-flags").stdout, 60,
               message="the Workers in describe")
    described = cli("describe", "mpijob", "cli-flags").stdout
    labelled = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip()
                for line in described.split("\n\n")[0].splitlines()}
    assert labelled["Name"] == "cli-flags" and labelled["Namespace"] == "team-nlp"
    assert labelled["Type"] == "MPIJob" and labelled["Created by"] == "alice"
    assert labelled["Workers"].endswith("/2 running")
    pods = [line.split()[-1] for line in described.splitlines()
            if line.split() and line.split()[-1].startswith("cli-flags-")]
    assert "cli-flags-worker-0" in pods and "cli-flags-worker-1" in pods
    assert any(p.startswith("cli-flags-launcher") for p in pods)


def test_it_creates_from_a_manifest_waits_and_reads_the_logs(cli):
    created = cli("create", "-f", "-", stdin=manifest("cli-manifest", 20))
    assert created.returncode == 0, created.stderr
    waited = cli("wait", "cli-manifest", "--timeout", "120")
    assert waited.returncode == 0, waited.stdout + waited.stderr
    assert waited.stdout.startswith("cli-manifest Succeeded after ")
    launcher = cli("logs", "cli-manifest")
    assert launcher.returncode == 0, launcher.stderr
    assert "Horovod rank 0/2" in launcher.stdout
    worker = cli("logs", "cli-manifest", "--worker", "1", "--tail", "5")
    assert worker.returncode == 0, worker.stderr
    assert 0 < worker.stdout.count("\n") <= 5
    missing = cli("logs", "cli-manifest", "--worker", "7")
    assert missing.returncode == 1
    assert missing.stderr == ("error: Worker 7 of job team-nlp/cli-manifest has no pod (yet): "
                              "check the job's status.\n")


def test_it_suspends_resumes_and_deletes(cli, training):
    assert cli(*small_job("cli-suspend")).returncode == 0
    suspended = cli("suspend", "cli-suspend")
    assert suspended.returncode == 0, suspended.stderr
    assert training.get_job("cli-suspend", NAMESPACE)["spec"]["runPolicy"]["suspend"] is True
    wait_until(lambda: "Suspended" in cli("describe", "cli-suspend").stdout, 60,
               message="the job to be Suspended")
    again = cli("suspend", "cli-suspend")  # nothing to do: said, not claimed as done
    assert (again.returncode, again.stdout) == (
        0, "team-nlp/cli-suspend is already suspended: nothing changed.\n")
    assert cli("resume", "cli-suspend").returncode == 0
    assert training.get_job("cli-suspend", NAMESPACE)["spec"]["runPolicy"]["suspend"] is False
    assert cli("resume", "cli-suspend").stdout == (
        "team-nlp/cli-suspend is not suspended: nothing changed.\n")
    unconfirmed = cli("delete", "cli-suspend")  # no terminal to ask at
    assert unconfirmed.returncode == 2
    assert "pass --confirm" in unconfirmed.stderr
    deleted = cli("delete", "cli-suspend", "--confirm")
    assert deleted.stdout == "Deleted team-nlp/cli-suspend with its Launcher and Workers.\n"
    wait_until(lambda: cli("describe", "cli-suspend").returncode == 1, 30,
               message="the job to be gone")
    # a job that is not there says so, before any question or --confirm
    gone = cli("delete", "cli-suspend")
    assert (gone.returncode, gone.stderr) == (
        1, "error: There is no MPIJob named “cli-suspend” in team-nlp.\n")


def test_it_refuses_bad_input_field_by_field_and_creates_nothing(cli, training):
    refused = cli(*small_job("Bad_Name", "--workers", "0"))
    assert refused.returncode == 2
    lines = refused.stderr.splitlines()
    assert any(line.startswith("error: NAME: ") for line in lines), lines
    assert any(line.startswith("error: --workers: ") for line in lines), lines
    assert "Traceback" not in refused.stderr
    assert "Bad_Name" not in {s.name for s in training.list_jobs(NAMESPACE)}

    bad_quantity = cli(*small_job("cli-bad-cpu", "--cpu", "lots"))
    assert bad_quantity.returncode == 2
    assert bad_quantity.stderr == ("error: --cpu-per-worker: “lots” is not a quantity: write "
                                   "e.g. 8, 500m, 32Gi.\n")


def test_a_dry_run_creates_nothing(cli, training):
    answer = cli(*small_job("cli-dry-run", "--dry-run"))
    assert answer.returncode == 0, answer.stderr
    assert "dry run, nothing created" in answer.stdout
    assert "cli-dry-run" not in {s.name for s in training.list_jobs(NAMESPACE)}


def test_the_clusters_refusals_are_one_plain_line(cli):
    assert cli(*small_job("cli-clash")).returncode == 0
    clash = cli(*small_job("cli-clash"))  # the wizard's check: choose another name
    assert clash.returncode == 2
    assert "already exists" in clash.stderr and "Traceback" not in clash.stderr

    forbidden = cli(*small_job("cli-bob", "-n", NAMESPACE), user="bob")
    assert forbidden.returncode == 1
    assert forbidden.stderr.startswith("error: ") and "Traceback" not in forbidden.stderr
    assert "team-nlp" in forbidden.stderr


def test_a_finished_job_is_not_suspended_and_not_said_to_be(cli, training):
    assert cli("create", "-f", "-", stdin=manifest("cli-done", 2)).returncode == 0
    assert cli("wait", "cli-done", "--timeout", "120").returncode == 0
    refused = cli("suspend", "cli-done")
    assert refused.returncode == 1 and refused.stdout == ""
    assert "cli-done has finished (Succeeded): there is nothing to suspend." in refused.stderr
    assert training.get_job("cli-done", NAMESPACE)["spec"].get("runPolicy", {}).get(
        "suspend") is not True


def test_volume_mounts_an_existing_claim_and_a_missing_one_is_refused(cli, simcluster):
    from kubernetes import client as k8s

    with simcluster.api_client("admin") as api:
        core = k8s.CoreV1Api(api)
        core.create_namespaced_persistent_volume_claim(NAMESPACE, {
            "metadata": {"name": "cli-data"}, "spec": {
                "accessModes": ["ReadWriteMany"],
                "resources": {"requests": {"storage": "10Gi"}}}})
        try:
            made = cli(*small_job("cli-volume", "--volume", "cli-data:/data:ro"))
            assert made.returncode == 0, made.stderr
            job = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
                "kubeflow.org", "v2beta1", NAMESPACE, "mpijobs", "cli-volume")
            for role in ("Launcher", "Worker"):
                pod = job["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]
                claims = [v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]
                          if "persistentVolumeClaim" in v]
                assert claims == ["cli-data"], pod["volumes"]
                mounts = [(m["mountPath"], m.get("readOnly", False))
                          for m in pod["containers"][0]["volumeMounts"]]
                assert ("/data", True) in mounts, mounts
        finally:
            core.delete_namespaced_persistent_volume_claim("cli-data", NAMESPACE)

    missing = cli(*small_job("cli-no-claim", "--volume", "nowhere:/data"))
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: --volume") and "nowhere" in missing.stderr
    unclear = cli(*small_job("cli-bad-volume", "--volume", "cli-data"))
    assert unclear.returncode == 2
    assert unclear.stderr == ("error: --volume “cli-data”: write CLAIM:PATH, e.g. --volume "
                              "data:/data (add :ro to mount it read-only).\n")
