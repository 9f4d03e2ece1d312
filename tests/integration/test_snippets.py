"""The UX analysis' SDK and CLI examples, each run as it is written (names of images and
namespaces excepted) against a real simcluster: the ones issue 26 found failing as written.
The plan's own examples run in test_training_sdk_plan.py and test_training_cli_plan.py
(examples/), `odh login` in test_odh_login.py.

Where two seeds disagree, both forms work: `job.status()` (the plan) and `job.status`
(UC2)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from tests import plan_cluster
from tests.plan_cluster import IMAGE, NS
from tests.waiting import wait_until

cluster, alice = plan_cluster.cluster, plan_cluster.alice
BIN = Path(sys.executable).parent


@pytest.fixture
def kubeconfig(cluster, tmp_path) -> Path:
    """alice's kubeconfig, its context's project team-nlp (as `oc project team-nlp` sets)."""
    config = yaml.safe_load(cluster.kubeconfig("alice").read_text())
    for context in config["contexts"]:
        context["context"]["namespace"] = NS
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def python(kubeconfig, tmp_path):
    """Run a snippet as a person runs it in a notebook or a script: its own process, alice's
    kubeconfig."""
    def run(code: str, timeout: float = 180) -> subprocess.CompletedProcess:
        env = dict(os.environ, KUBECONFIG=str(kubeconfig))
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                              capture_output=True, text=True, timeout=timeout,
                              cwd=tmp_path)
    return run


@pytest.fixture
def sh(kubeconfig, tmp_path):
    def run(script: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        env = dict(os.environ, KUBECONFIG=str(kubeconfig),
                   HOME=str(tmp_path), PATH=f"{BIN}:{os.environ.get('PATH', '')}")
        return subprocess.run(["bash", "-c", script], env=env, input=stdin, cwd=tmp_path,
                              capture_output=True, text=True, timeout=180)
    return run


# -- SDK ----------------------------------------------------------------------------------------
def test_ac_003_a_job_with_no_command_runs_its_images_entrypoint(python):
    done = python(f"""
        from odh.training import MPIJob
        job = MPIJob(name="ac003", workers=4, image="{IMAGE}").create()
        job.wait_for_completion(timeout=120)
        print(job.status().phase)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("Succeeded")


def test_uc2_the_status_loop_as_written_ends(python):
    done = python(f"""
        import time
        from odh.training import MPIJob
        job = MPIJob(name="uc2-loop", workers=2, image="{IMAGE}",
                     command=["horovodrun", "-np", "2", "python", "train.py"]).create()
        while job.status != "Succeeded":
            time.sleep(1)
        print("done", job.status.phase, job.status().duration_text)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("done Succeeded")


def test_uc2_validate_clone_stream_logs_and_the_client(python):
    done = python(f"""
        from odh.training import MPIJob, TrainingClient
        job = MPIJob(name="uc2-base", workers=2, image="{IMAGE}",
                     command=["horovodrun", "-np", "2", "python", "train.py"])
        job.validate()
        job.create()
        bigger = job.clone(name="uc2-bigger", workers=8)
        bigger.validate()
        bigger.create()
        lines = list(bigger.stream_logs(follow=True, all_workers=True))
        print("workers", sorted({{line.split("]")[0] + "]" for line in lines}}))

        client = TrainingClient()
        print("got", client.get_mpijob("uc2-bigger").spec.workers)
        print("listed", sorted(j.name for j in client.list_mpijobs()))
        client.delete_mpijob("uc2-base")
        print("left", sorted(j.name for j in client.list_mpijobs()))
    """)
    assert done.returncode == 0, done.stderr
    said = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert said["workers"] == str([f"[worker-{i}]" for i in range(8)])
    assert said["got"] == "8"
    assert "'uc2-base'" in said["listed"] and "'uc2-bigger'" in said["listed"]
    assert "uc2-base" not in said["left"]


def test_validate_raises_what_create_would_refuse(python):
    done = python(f"""
        from odh.training import MPIJob, ValidationError
        try:
            MPIJob(name="Bad_Name", workers=2, image="{IMAGE}").validate()
        except ValidationError as e:
            print("refused", e.field)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "refused name"


# -- CLI ----------------------------------------------------------------------------------------
def test_ac_002_create_from_a_config_file(sh, tmp_path):
    (tmp_path / "job-spec.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": "ac002"},
        "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{
                "name": "launcher", "image": IMAGE,
                "command": ["horovodrun", "-np", "2", "python", "train.py"]}]}}},
            "Worker": {"replicas": 2, "template": {"spec": {"containers": [{
                "name": "worker", "image": IMAGE}]}}}}}}))
    made = sh("odh training create mpijob --config job-spec.yaml")
    assert made.returncode == 0, made.stderr
    assert sh("odh training get mpijob ac002").returncode == 0


def test_uc2_set_and_output_artifacts(sh):
    made = sh(f"odh training create mpijob uc2-set --template horovod-pytorch --image {IMAGE} "
              "--set spec.mpiReplicaSpecs.Worker.replicas=3 --set metadata.labels.team=nlp "
              "--output-artifacts /mnt/output")
    assert made.returncode == 0, made.stderr
    job = yaml.safe_load(sh("odh training get mpijob uc2-set -o yaml").stdout)
    assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 3
    assert job["metadata"]["labels"]["team"] == "nlp"
    assert job["metadata"]["annotations"]["opendatahub.io/output-path"] == "/mnt/output"


def test_list_by_user_and_delete_by_label_and_status(sh):
    for name in ("uc-del-a", "uc-del-b"):
        assert sh(f"odh training create mpijob {name} --image {IMAGE} --workers 1 "
                  "--label team=nlp --annotation simcluster.io/failure=exit-code "
                  "--annotation simcluster.io/failure-after-seconds=1").returncode == 0
    mine = sh("odh training list mpijob --user alice")
    assert "uc-del-a" in mine.stdout and "uc-del-b" in mine.stdout
    wait_until(lambda: all(name in sh("odh training list mpijob --status Failed -l team=nlp"
                                      ).stdout for name in ("uc-del-a", "uc-del-b")),
               120, message="both jobs Failed")
    gone = sh("odh training delete mpijob -l team=nlp --status Failed --confirm")
    assert gone.returncode == 0, gone.stderr
    assert f"{NS}/uc-del-a: deleted" in gone.stdout and f"{NS}/uc-del-b: deleted" in gone.stdout
