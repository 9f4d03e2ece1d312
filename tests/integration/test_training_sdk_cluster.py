"""The SDK against a real simcluster, as alice (edit rights in team-nlp only)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from odh.training import MPIJobSpec, errors
from odh.training.sdk import InvalidSpec, TrainingClient, sdk_code
from odh.training.spec import build_manifest, read_manifest
from odh.training.status.summarize import JobStatus
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "team-nlp"
RUN = "simcluster.io/run-seconds"


def job_spec(name: str, run_seconds: int = 30, **changes) -> MPIJobSpec:
    settings = dict(name=name, namespace=NAMESPACE, image="quay.io/team-nlp/bert:1.0",
                    command=["horovodrun", "-np", "2", "python", "train.py"], workers=2,
                    cpu_per_worker="1", memory_per_worker="1Gi", launcher_cpu="500m",
                    launcher_memory="512Mi", clean_pod_policy="None",
                    annotations={RUN: str(run_seconds)})
    settings.update(changes)
    return MPIJobSpec(**settings)


@pytest.fixture(scope="module")
def training(simcluster):
    client = TrainingClient(kubeconfig=str(simcluster.kubeconfig("alice")))
    yield client
    client.close()


def contains(expected: object, actual: object) -> bool:
    """Whether `actual` has everything `expected` has (the API server may add defaults)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and contains(value, actual[key]) for key, value in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            contains(e, a) for e, a in zip(expected, actual, strict=True))
    return expected == actual


def test_the_default_namespace_comes_from_alices_kubeconfig(training):
    assert training.default_namespace == NAMESPACE


def test_the_generated_sdk_code_creates_the_job_the_wizard_would(simcluster, training, tmp_path):
    spec = job_spec("sdk-generated")
    program = tmp_path / "create_job.py"
    program.write_text(sdk_code(spec))
    env = dict(os.environ, KUBECONFIG=str(simcluster.kubeconfig("alice")),
               PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Created MPIJob team-nlp/sdk-generated\n"
    created = training.get_job("sdk-generated", NAMESPACE)
    assert contains(build_manifest(spec), created)
    # the creator is recorded, as the dashboard records it (a job made by the SDK is alice's)
    assert read_manifest(created) == dataclasses.replace(spec, created_by="alice")


def test_the_generated_sdk_code_makes_the_new_claim_before_the_job(simcluster, training,
                                                                  tmp_path):
    """The review's program for a job with a new volume claim makes the claim first (as
    the wizard does), then the job that mounts it."""
    from kubernetes import client as k8s

    from odh.training.manifests.claims import NewClaim
    from odh.training.spec import PVCVolume
    spec = job_spec("sdk-claimed", volumes=[PVCVolume("data-sdk-claimed", "/data")])
    program = tmp_path / "create_job.py"
    program.write_text(sdk_code(spec, [NewClaim("data-sdk-claimed", "10Gi")]))
    assert 'TrainingClient().create_volume_claim("data-sdk-claimed", "10Gi", namespace=' \
        '"team-nlp", access_mode="ReadWriteMany")' in program.read_text()
    env = dict(os.environ, KUBECONFIG=str(simcluster.kubeconfig("alice")),
               PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=120)
    try:
        assert result.returncode == 0, result.stderr
        with simcluster.api_client("admin") as api:
            claim = k8s.CoreV1Api(api).read_namespaced_persistent_volume_claim(
                "data-sdk-claimed", NAMESPACE)
        assert claim.spec.resources.requests["storage"] == "10Gi"
        assert claim.spec.access_modes == ["ReadWriteMany"]
        volumes = training.get_job("sdk-claimed", NAMESPACE)["spec"]["mpiReplicaSpecs"][
            "Worker"]["template"]["spec"]["volumes"]
    finally:  # the session's cluster is shared: its project's claims as they were
        training.delete_job("sdk-claimed", NAMESPACE)
        with simcluster.api_client("admin") as api:
            k8s.CoreV1Api(api).delete_namespaced_persistent_volume_claim("data-sdk-claimed",
                                                                         NAMESPACE)
    assert {"name": "pvc-data-sdk-claimed",
            "persistentVolumeClaim": {"claimName": "data-sdk-claimed"}} in volumes
    # a size that is no quantity: said before anything is sent
    from odh.training import TrainingClient as JobsClient
    with JobsClient(kubeconfig=str(simcluster.kubeconfig("alice"))) as jobs_client, \
            pytest.raises(errors.ValidationError) as wrong:
        jobs_client.create_volume_claim("data-bad", "ten gigs", namespace=NAMESPACE)
    assert wrong.value.field == "size" and "Gi" in str(wrong.value)


def test_a_job_runs_and_the_sdk_follows_it(training):
    spec = job_spec("sdk-lifecycle")
    created = training.create_mpijob(spec)
    assert created["metadata"]["uid"]
    done = training.wait("sdk-lifecycle", NAMESPACE, timeout=120)
    assert done.status == JobStatus.SUCCEEDED, done.lifecycle_step
    assert done.lifecycle_step.startswith("Completed")
    summary = training.summary("sdk-lifecycle", NAMESPACE)
    assert (summary.workers_total, summary.name) == (2, "sdk-lifecycle")
    launcher_log = training.logs("sdk-lifecycle", NAMESPACE)
    assert launcher_log.strip()
    assert training.logs("sdk-lifecycle", NAMESPACE, tail_lines=2).count("\n") <= 2
    assert isinstance(training.logs("sdk-lifecycle", NAMESPACE, worker=1), str)
    with pytest.raises(errors.NotFound, match="Worker 7 of job team-nlp/sdk-lifecycle has no pod"):
        training.logs("sdk-lifecycle", NAMESPACE, worker=7)


def test_listing_in_a_project_and_everywhere_alice_may_look(training):
    training.create_mpijob(job_spec("sdk-listed"))
    names = {(s.namespace, s.name) for s in training.list_jobs(NAMESPACE)}
    assert (NAMESPACE, "sdk-listed") in names
    # Alice may not list cluster-wide: the SDK falls back to her projects.
    assert (NAMESPACE, "sdk-listed") in {(s.namespace, s.name) for s in training.list_jobs()}
    with pytest.raises(errors.Forbidden):
        training.list_jobs("kube-system")


def test_suspend_resume_and_delete(training):
    training.create_mpijob(job_spec("sdk-suspend", run_seconds=3000))
    training.suspend("sdk-suspend", NAMESPACE)
    suspended = training.wait("sdk-suspend", NAMESPACE, until=(JobStatus.SUSPENDED,),
                              timeout=60)
    assert suspended.status == JobStatus.SUSPENDED
    assert training.get_job("sdk-suspend", NAMESPACE)["spec"]["runPolicy"]["suspend"] is True
    training.resume("sdk-suspend", NAMESPACE)
    resumed = training.wait("sdk-suspend", NAMESPACE, until=(JobStatus.PENDING,
                                                              JobStatus.RUNNING), timeout=60)
    assert resumed.status in (JobStatus.PENDING, JobStatus.RUNNING)
    training.delete_job("sdk-suspend", NAMESPACE)
    wait_until(lambda: not _exists(training, "sdk-suspend"), timeout=30,
               message="sdk-suspend to be deleted")


def _exists(training: TrainingClient, name: str) -> bool:
    try:
        training.get_job(name, NAMESPACE)
    except errors.NotFound:
        return False
    return True


def test_dry_run_creates_nothing(training):
    answer = training.create_mpijob(job_spec("sdk-dry-run"), dry_run=True)
    assert answer["metadata"]["name"] == "sdk-dry-run"
    assert not _exists(training, "sdk-dry-run")
    assert "sdk-dry-run" not in {s.name for s in training.list_jobs(NAMESPACE)}


def test_the_namespace_defaults_to_the_kubeconfigs(training):
    training.create_mpijob(job_spec("sdk-default-ns", namespace=""))
    assert _exists(training, "sdk-default-ns")


def test_refusals_come_back_as_sdk_errors(training):
    training.create_mpijob(job_spec("sdk-clash"))
    with pytest.raises(errors.Conflict):
        training.create_mpijob(job_spec("sdk-clash"))
    with pytest.raises(InvalidSpec):
        training.create_mpijob(job_spec("sdk-invalid", workers=0))
    with pytest.raises(errors.Forbidden):
        training.create_mpijob(job_spec("sdk-elsewhere", namespace="kube-system"))
    with pytest.raises(errors.NotFound):
        training.get_job("no-such-job", NAMESPACE)
