"""The plan's SDK (`from odh.training import MPIJob, ...`) against a real simcluster: the
plan's examples (examples/, run as a person runs them), its exceptions, the wizard's checks
before anything is created, and a watch that survives dropped connections."""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from odh.training import (
    AsyncMPIJob,
    AuthenticationError,
    ClusterError,
    JobFailedError,
    JobStatus,
    MPIJob,
    ODHError,
    QuotaWarning,
    ResourceQuotaExceeded,
    ResourceSpec,
    SettingWarning,
    ValidationError,
    errors,
)
from odh.training.sdk import TrainingClient
from tests import plan_cluster
from tests.cutting_proxy import CuttingProxy
from tests.plan_cluster import IMAGE, NS
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
COMMAND = ["horovodrun", "-np", "2", "python", "train.py"]
cluster, alice = plan_cluster.cluster, plan_cluster.alice


def job(name: str, client: TrainingClient, run_seconds: float = 3, **options) -> MPIJob:
    annotations = {"simcluster.io/run-seconds": str(run_seconds),
                   **options.pop("annotations", {})}
    options.setdefault("worker_resources", ResourceSpec(cpu="1", memory="1Gi"))
    workers = options.pop("workers", 2)
    ranks = workers * max(1, options["worker_resources"].gpus)  # -np as the wizard wants it
    command = ["horovodrun", "-np", str(ranks), "python", "train.py"]
    return MPIJob(name=name, namespace=NS, workers=workers, image=IMAGE, command=command,
                  annotations=annotations, client=client, **options)


def run_example(cluster, script: str, name: str, timeout: float = 240
                ) -> subprocess.CompletedProcess:
    env = dict(os.environ, KUBECONFIG=str(cluster.kubeconfig("alice")), PYTHONPATH=str(ROOT),
               ODH_NAMESPACE=NS, ODH_JOB_NAME=name, ODH_IMAGE=IMAGE)
    return subprocess.run([sys.executable, str(ROOT / "examples" / script)], env=env,
                          capture_output=True, text=True, timeout=timeout)


# -- the names and the hierarchy ----------------------------------------------------------------
def test_the_plans_names_import_from_the_package():
    assert issubclass(ValidationError, ODHError) and issubclass(ValidationError, ValueError)
    assert issubclass(ResourceQuotaExceeded, ODHError)
    assert issubclass(AuthenticationError, ODHError) and issubclass(JobFailedError, ODHError)
    assert issubclass(ClusterError, ODHError)
    assert issubclass(errors.QuotaExceeded, ResourceQuotaExceeded)  # the cluster's refusal
    assert issubclass(errors.Unauthorized, AuthenticationError)
    assert issubclass(errors.JobTimeoutError, TimeoutError)
    error = ValidationError("workers", "use 1 to 100")
    assert (error.field, error.details, error.code) == ("workers", "use 1 to 100",
                                                         "ValidationError")
    spec = ResourceSpec(cpu="4", memory="16Gi", gpus=2).to_dict()
    assert spec["requests"] == spec["limits"] == {"cpu": "4", "memory": "16Gi",
                                                  "nvidia.com/gpu": "2"}
    assert "nvidia.com/gpu" not in ResourceSpec().to_dict()["limits"]


# -- the plan's examples, run as scripts -------------------------------------------------------
def test_example_1_creates_waits_and_prints_the_duration(cluster, alice):
    done = run_example(cluster, "basic_create.py", "plan-basic")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Job completed in ") and done.stdout.endswith("s\n")
    status = MPIJob.get("plan-basic", NS, client=alice).status()
    assert status.phase == "Succeeded" and status.duration > 0
    assert status.completion_time >= status.start_time


def test_example_2_the_pipeline_step_succeeds_and_fails_with_the_diagnosis(cluster, alice,
                                                                           caplog):
    done = run_example(cluster, "pipeline_step.py", "plan-step")
    assert done.returncode == 0, done.stderr
    assert "INFO Training took " in done.stderr

    loaded = importlib.util.spec_from_file_location("pipeline_step",
                                                    ROOT / "examples" / "pipeline_step.py")
    step = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(step)
    caplog.set_level(logging.ERROR, logger="pipeline.train")
    with pytest.raises(JobFailedError) as failed:
        step.train_step("plan-step-oom", client=alice, annotations={
            "simcluster.io/run-seconds": "20", "simcluster.io/failure": "oom",
            "simcluster.io/failure-worker": "1"})
    error = failed.value
    assert error.message == "Worker 1 ran out of memory and was killed (exit code 137)"
    assert error.status.phase == "Failed" and error.status.completion_time is not None
    assert error.suggestions and error.suggestions[0].startswith("Clone with ")
    assert error.culprit == "configuration"
    logged = [r.getMessage() for r in caplog.records]
    assert logged[0] == f"Training failed: {error.message}"
    assert any(m.startswith("What to do: Clone with ") for m in logged)


def test_example_3_the_status_loop_sees_each_phase_once(cluster):
    done = run_example(cluster, "status_loop.py", "plan-status")
    assert done.returncode == 0, done.stderr
    phases = [line.split(",")[0].removeprefix("Phase: ")
              for line in done.stdout.splitlines() if line.startswith("Phase: ")]
    # changes only (a watch, not a poll): a few lines, not one per second of its run (two
    # lines may read alike: the watch also yields changes the example does not print, such
    # as a Worker going from Pending to ContainerCreating)
    lines = [line for line in done.stdout.splitlines() if line.startswith("Phase: ")]
    assert len(lines) <= 12, lines
    # the job runs about 2 s here: each state it passes is seen unless it is over between
    # two reads (a busy machine), but it is always seen to start and to end
    assert len(phases) >= 2 and phases[0] in ("Pending", "Running")
    assert phases[-1] == "Succeeded"
    assert all(re.fullmatch(r"Phase: \w+, Workers running: [0-2]/2", line) for line in lines)
    assert done.stdout.splitlines()[-1].startswith("Final: Succeeded after ")


def test_example_4_streams_the_logs(cluster):
    done = run_example(cluster, "follow_logs.py", "plan-logs")
    assert done.returncode == 0, done.stderr
    worker, launcher = done.stdout.split("--- launcher ---\n")
    assert "Training complete" in launcher
    assert "Server listening on" in worker


def test_ten_jobs_launched_and_awaited_together(cluster):
    done = run_example(cluster, "parallel_sweep.py", "plan-sweep", timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    finished = sorted(line.split(":")[0] for line in done.stdout.splitlines())
    assert finished == sorted(f"plan-sweep-{i}" for i in range(10))
    assert all(": Succeeded in " in line for line in done.stdout.splitlines())


# -- the wizard's checks, before anything is created -------------------------------------------
def test_a_setting_the_wizard_refuses_is_a_validation_error_named_as_the_sdk_names_it(alice):
    with pytest.raises(ValidationError) as refused:
        job("plan-bad", alice, worker_resources=ResourceSpec(cpu="lots")).create()
    assert refused.value.field == "worker_resources.cpu"
    with pytest.raises(ValidationError) as named:
        job("Bad_Name", alice).create()
    assert named.value.field == "name" and "lower-case letters" in named.value.message
    with pytest.raises(ValidationError):
        MPIJob(name="x", launcher_resources=ResourceSpec(gpus=1))
    assert not MPIJob.list(NS, client=alice) or all(
        j.name not in ("plan-bad", "Bad_Name") for j in MPIJob.list(NS, client=alice))


def test_a_job_that_can_never_fit_its_quota_is_refused_with_the_fixes(alice):
    too_big = job("plan-too-big", alice, workers=3,
                  worker_resources=ResourceSpec(cpu="2", memory="8Gi", gpus=8))
    with pytest.raises(ResourceQuotaExceeded) as refused:
        too_big.create()
    error = refused.value
    assert "24 GPUs" in error.details and "16" in error.details
    assert any("workers=2" in s for s in error.suggestions), error.suggestions
    assert error.suggestions[-1] == "Pass force=True to create it anyway."
    with pytest.raises(errors.NotFound):
        MPIJob.get("plan-too-big", NS, client=alice)
    too_big.create(force=True)  # the person knows better: it waits, Pending
    assert too_big.status().phase == "Pending"
    too_big.delete(wait=True)


def test_a_job_that_must_wait_for_the_quota_warns(alice):
    holder = job("plan-holder", alice, run_seconds=3000, workers=1,
                 worker_resources=ResourceSpec(cpu="1", memory="1Gi", gpus=8)).create()
    try:
        wait_until(lambda: holder.status().phase == "Running", 60, message="the holder runs")
        with pytest.warns(QuotaWarning, match="wait"):
            waiting = job("plan-waits", alice, workers=2,
                          worker_resources=ResourceSpec(cpu="1", memory="1Gi", gpus=8))
            waiting.create(dry_run=True)
    finally:
        holder.delete(wait=True)


def test_a_setting_the_wizard_warns_about_warns(alice):
    odd = MPIJob(name="plan-odd", namespace=NS, workers=2, image=IMAGE, command=COMMAND,
                 worker_resources=ResourceSpec(cpu="1", memory="1Gi", gpus=2), client=alice)
    with pytest.warns(SettingWarning, match=r"-np 2.*change -np to 4"):
        odd.create(dry_run=True)


def test_every_job_records_its_creator(alice):
    created = job("plan-creator", alice).create()
    assert created.object["metadata"]["annotations"]["opendatahub.io/username"] == "alice"
    assert created.summary().created_by == "alice"
    created.delete()


# -- reading, files, templates -------------------------------------------------------------------
def test_get_list_yaml_and_templates_round_trip(alice, tmp_path):
    original = job("plan-files", alice, env={"NCCL_DEBUG": "INFO"})
    path = tmp_path / "job.yaml"
    text = original.to_yaml(path)
    assert path.read_text() == text and "kind: MPIJob" in text
    again = MPIJob.from_yaml(path, client=alice)
    assert again.spec == original.spec
    again.create().wait_for_completion(timeout=120)
    fetched = MPIJob.get("plan-files", NS, client=alice)
    assert fetched.spec.env == original.spec.env and fetched.spec.workers == 2
    succeeded = {j.name for j in MPIJob.list(NS, status="succeeded", client=alice)}
    assert "plan-files" in succeeded
    assert "plan-files" not in {j.name for j in MPIJob.list(NS, status="Running",
                                                           client=alice)}
    with pytest.raises(ValidationError):
        MPIJob.list(NS, status="Done", client=alice)

    templated = MPIJob.from_template("horovod-pytorch", name="plan-template", namespace=NS,
                                     workers=3, client=alice)
    assert templated.spec.workers == 3 and templated.spec.image.startswith("docker.io/horovod")
    with pytest.raises(ValidationError, match="horovod-pytorch"):
        MPIJob.from_template("no-such-template")


def test_logs_need_a_worker_id_for_a_worker(alice):
    listed = job("plan-logs-args", alice)
    with pytest.raises(ValueError, match="worker_id"):
        listed.get_logs(component="worker")
    with pytest.raises(ValueError, match="launcher"):
        listed.get_logs(component="master")


def test_delete_with_wait_returns_once_the_job_is_gone(alice):
    doomed = job("plan-doomed", alice, run_seconds=3000).create()
    doomed.delete(wait=True, timeout=60)
    with pytest.raises(errors.NotFound):
        doomed.status()


def test_without_credentials_it_says_how_to_log_in(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(AuthenticationError) as refused:
        TrainingClient()
    assert "oc login" in refused.value.message
    assert refused.value.suggestions


def test_a_refused_token_is_an_authentication_error(cluster, tmp_path):
    config = cluster.kubeconfig("alice").read_text().replace(cluster.token("alice"), "sha256~x")
    (tmp_path / "kubeconfig").write_text(config)
    with TrainingClient(kubeconfig=str(tmp_path / "kubeconfig")) as client, \
            pytest.raises(AuthenticationError) as refused:
        MPIJob.list(NS, client=client)
    assert any("oc login" in s for s in refused.value.suggestions)


# -- watches and followed logs survive dropped connections ---------------------------------
@pytest.fixture
def proxied(cluster, tmp_path):
    host, port = cluster.api_url.removeprefix("https://").split(":")
    proxy = CuttingProxy(host, int(port))
    path = proxy.kubeconfig(cluster.kubeconfig("alice"), tmp_path / "kubeconfig")
    with TrainingClient(kubeconfig=str(path)) as client:
        yield proxy, client
    proxy.close()


def _cutting(proxy: CuttingProxy, stop: threading.Event, every: float = 0.7) -> None:
    while not stop.wait(every):
        proxy.cut()


def test_waiting_and_following_survive_cut_connections(proxied, alice):
    proxy, client = proxied
    followed = job("plan-cuts", client, run_seconds=400,
                   annotations={"simcluster.io/epochs": "200"}).create()
    wait_until(lambda: followed.status().phase == "Running", 60, message="it runs")
    stop = threading.Event()
    cutter = threading.Thread(target=_cutting, args=(proxy, stop), daemon=True)
    cutter.start()
    try:
        lines = list(followed.get_logs(follow=True))
        final = followed.wait_for_completion(timeout=120)
    finally:
        stop.set()
        cutter.join()
    assert proxy.cuts >= 3
    assert final.phase == "Succeeded"
    # every line once, in order: what the whole log says once the job is done
    whole = alice.logs("plan-cuts", NS, tail_lines=None).splitlines()
    assert lines == whole
    assert len(lines) > 200
    assert isinstance(final, JobStatus)


def test_async_jobs_watch_and_read_logs(alice):
    import asyncio

    async def scenario() -> tuple[list[str], list[str]]:
        run = AsyncMPIJob(name="plan-async", namespace=NS, workers=1, image=IMAGE,
                          command=["horovodrun", "-np", "1", "python", "t.py"], client=alice,
                          annotations={"simcluster.io/run-seconds": "5"},
                          worker_resources=ResourceSpec(cpu="1", memory="1Gi"))
        await run.create()
        phases = [str(s.phase) async for s in run.watch(timeout=120)]
        lines = [line async for line in run.get_logs()]
        await run.delete(wait=True)
        return phases, lines

    # its own thread: a Playwright test of this worker may have left a loop running in ours
    result: list = []
    ran = threading.Thread(target=lambda: result.append(asyncio.run(scenario())))
    ran.start()
    ran.join(300)
    phases, lines = result[0]
    assert phases[-1] == "Succeeded"
    assert any("Training complete" in line for line in lines)


def test_a_misspelt_field_of_a_manifest_is_named(alice, tmp_path):
    original = job("plan-typo", alice)
    text = original.to_yaml().replace("cleanPodPolicy", "cleanPodPolice")
    path = tmp_path / "typo.yaml"
    path.write_text(text)
    with pytest.raises(ValidationError) as refused:
        MPIJob.from_yaml(path, client=alice).create()
    assert refused.value.field == "spec.runPolicy.cleanPodPolice"
    assert "has no field “spec.runPolicy.cleanPodPolice”" in refused.value.message
