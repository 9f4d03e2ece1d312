"""TrainJobs created, followed and changed through the SDK (`TrainJob`, `list_runtimes`) and
the CLI (`odh training ... trainjob`, `list runtimes`) against a real simcluster serving
Kubeflow Trainer and JobSet with upstream-shaped runtimes; each refusal of the create path
(a runtime that is not there, MPI asked of a torch runtime, no nodes, no Trainer at all) in
its sentence."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import pytest
import yaml

from odh.training import TrainJob, errors, list_runtimes
from odh.training.cli import odh_main
from odh.training.jobstatus import Phase
from odh.training.sdk import InvalidSpec, TrainingClient
from tests import simcluster_process
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
NS = "team-nlp"
IMAGE = "quay.io/team-nlp/pi:1.0"
RUN = {"simcluster.io/run-seconds": "3"}
RUNTIMES = yaml.safe_load((ROOT / "simcluster" / "scenarios" / "trainer-runtimes.yaml")
                          .read_text())
PROJECT_RUNTIME = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
    "metadata": {"name": "team-torch", "namespace": NS,
                 "annotations": {"description": "The team's PyTorch runtime"}},
    "spec": {"mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
             "template": RUNTIMES[0]["spec"]["template"]}}
# what the Trainer's own edit role gives a project's editors (no ClusterTrainingRuntimes)
TRAINER_EDIT = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
    "metadata": {"name": "trainer-edit",
                 "labels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}},
    "rules": [{"apiGroups": ["trainer.kubeflow.org"],
               "resources": ["trainjobs", "trainingruntimes"],
               "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}]}
SCENARIO = simcluster_process.admin_scenario(
    "trainjob-sdk-cli", "TrainJobs through the SDK and the CLI.", ["trainer", "jobset"], NS,
    objects=[*RUNTIMES, PROJECT_RUNTIME, TRAINER_EDIT],
    nodes=[{"name": "gpu-{i}", "count": 2, "cpu": 64, "memory": "512Gi", "gpus": 8}])
SCENARIO["users"].append({"name": "alice", "password": "alice", "groups": ["team"]})
SCENARIO["access"].append({"user": "alice", "role": "edit", "namespaces": [NS]})
NO_TRAINER = simcluster_process.admin_scenario(
    "no-trainer", "A cluster without Kubeflow Trainer.", [], NS)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = simcluster_process.start_scenario(tmp_path_factory.mktemp("trainjob-sdk"), SCENARIO,
                                            name="trainjob-sdk.yaml")
    yield sim
    sim.stop()


@pytest.fixture(scope="module")
def admin(cluster):
    with TrainingClient(kubeconfig=str(cluster.kubeconfig("admin"))) as client:
        yield client


@pytest.fixture(scope="module")
def alice(cluster):
    with TrainingClient(kubeconfig=str(cluster.kubeconfig("alice"))) as client:
        yield client


def cli(cluster, *argv: str, user: str = "admin") -> tuple[int, str]:
    out = io.StringIO()
    flags = ["--kubeconfig", str(cluster.kubeconfig(user))]
    at = argv.index("--") if "--" in argv else len(argv)  # before the training command
    code = odh_main([*argv[:at], *flags, *argv[at:]], out)
    return code, out.getvalue()


def pi(name: str, client: TrainingClient, **more) -> TrainJob:
    settings = dict(runtime="mpi-distributed", num_nodes=2, namespace=NS, image=IMAGE,
                    command=["mpirun", "/home/mpiuser/pi"],
                    resources_per_node={"cpu": "2", "memory": "4Gi", "gpus": 1},
                    annotations=RUN, client=client)
    settings.update(more)
    return TrainJob(name, **settings)


# -- the SDK ------------------------------------------------------------------------------
def test_an_mpi_trainjob_of_two_one_gpu_nodes_runs_to_succeeded(admin):
    job = pi("pi-sdk", admin)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn of: a TrainJob sizes no Launcher
        job.create()
    stored = admin.get_job("pi-sdk", NS, "trainjob")
    assert stored["spec"]["runtimeRef"]["name"] == "mpi-distributed"
    assert stored["spec"]["trainer"]["numNodes"] == 2
    assert stored["spec"]["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"] == 1
    final = job.wait_for_completion(timeout=120)
    assert final.phase == Phase.SUCCEEDED
    assert job.status().phase == Phase.SUCCEEDED
    assert job.diagnose() is None
    assert [j.name for j in TrainJob.list(NS, client=admin)] == ["pi-sdk"]
    again = TrainJob.get("pi-sdk", NS, client=admin)
    assert (again.spec.runtime, again.spec.workers, again.spec.gpus_per_worker) == (
        "mpi-distributed", 2, 1)
    job.delete(wait=True, timeout=60)
    with pytest.raises(errors.NotFound):
        admin.get_job("pi-sdk", NS, "trainjob")


def test_a_torch_trainjob_is_suspended_resumed_and_watched(admin):
    job = TrainJob("torch-sdk", runtime="torch-distributed", num_nodes=2, namespace=NS,
                   image="pytorch/pytorch:2.7.1", command=["torchrun", "train.py"],
                   num_proc_per_node=2, resources_per_node={"cpu": "1", "memory": "2Gi"},
                   annotations={"simcluster.io/run-seconds": "60"}, client=admin).create()
    job.suspend()
    assert admin.get_job("torch-sdk", NS, "trainjob")["spec"]["suspend"] is True
    job.resume()
    assert admin.get_job("torch-sdk", NS, "trainjob")["spec"]["suspend"] is False
    assert next(job.watch(timeout=30)).phase in (Phase.PENDING, Phase.RUNNING)
    wait_until(lambda: job.status().phase == Phase.RUNNING, timeout=60)
    assert isinstance(list(job.get_logs(component="node", worker_id=1)), list)
    job.delete(wait=True, timeout=60)


def test_a_runtime_that_is_not_there_is_named_with_the_ones_that_are(admin):
    with pytest.raises(InvalidSpec) as caught:
        pi("no-runtime", admin, runtime="mpi-distributd").create()
    assert caught.value.field == "runtime"
    assert caught.value.errors[0].message == (
        'There is no runtime "mpi-distributd" (neither a ClusterTrainingRuntime nor a '
        "TrainingRuntime in team-nlp): choose one of deepspeed-distributed, mpi-distributed, "
        "torch-distributed, team-torch (odh training list runtimes -n team-nlp shows them), "
        "or ask your administrator to add it.")


def test_a_project_runtime_named_as_a_cluster_one_says_which_kind(admin):
    with pytest.raises(InvalidSpec) as caught:
        pi("kindless", admin, runtime="team-torch").create()
    assert caught.value.field == "runtime_kind"
    assert "set the runtime kind to TrainingRuntime" in caught.value.message
    job = pi("kinded", admin, runtime="team-torch", runtime_kind="TrainingRuntime")
    job.create(dry_run=True)
    assert job.object["spec"]["runtimeRef"]["kind"] == "TrainingRuntime"


def test_mpi_asked_of_a_torch_runtime_is_refused(admin):
    with pytest.raises(InvalidSpec) as caught:
        pi("torch-mpi", admin, runtime="torch-distributed", mpi_implementation="OpenMPI").create()
    assert caught.value.field == "mpi_implementation"
    assert caught.value.errors[0].message == (
        'Runtime "torch-distributed" runs torch, not MPI, so it takes no MPI implementation: '
        'leave it out, or choose an MPI runtime such as "mpi-distributed".')
    with pytest.raises(InvalidSpec, match="runs OpenMPI, not Intel"):
        pi("intel", admin, mpi_implementation="Intel").create()


def test_no_nodes_is_refused_in_the_sdks_words(admin):
    with pytest.raises(InvalidSpec) as caught:
        pi("no-nodes", admin, num_nodes=0).create()
    assert caught.value.field == "num_nodes"
    assert "A TrainJob needs at least 1 node" in caught.value.message


def test_a_cluster_without_the_trainer_says_so(tmp_path):
    with simcluster_process.admin_client(tmp_path, NO_TRAINER) as api:
        client = TrainingClient(api)
        client.default_namespace = NS
        with pytest.raises(errors.NotServed) as caught:
            pi("nowhere", client).create()
        assert str(caught.value) == (
            "This cluster does not serve the Kubeflow Trainer API (trainer.kubeflow.org/"
            "v1alpha1), so it cannot run TrainJobs: ask your cluster administrator to install "
            "Kubeflow Trainer, or create an MPIJob instead (odh training create mpijob ...).")
        with pytest.raises(errors.NotServed):
            list_runtimes(NS, client=client)


def test_the_runtimes_with_their_framework_and_description(admin):
    found = {(r.name, r.kind): r for r in list_runtimes(NS, client=admin)}
    assert [name for name, _kind in found] == [
        "deepspeed-distributed", "mpi-distributed", "torch-distributed", "team-torch"]
    mpi = found[("mpi-distributed", "ClusterTrainingRuntime")]
    assert (mpi.framework, mpi.mpi_implementation, mpi.runs_mpi) == ("mpi", "OpenMPI", True)
    torch = found[("team-torch", "TrainingRuntime")]
    assert (torch.framework, torch.description) == ("torch", "The team's PyTorch runtime")


def test_who_may_not_list_the_clusters_runtimes_sees_those_the_project_uses(admin, alice):
    pi("used-here", admin, annotations={"simcluster.io/run-seconds": "600"}).create()
    try:
        found = list_runtimes(NS, client=alice)
        assert [(r.name, r.kind, r.readable) for r in found] == [
            ("mpi-distributed", "ClusterTrainingRuntime", False),
            ("team-torch", "TrainingRuntime", True)]
        # alice creates on a cluster runtime she may not read: the Trainer decides
        job = pi("alices", alice)
        job.create(dry_run=True)
        assert job.object["metadata"]["annotations"]["opendatahub.io/username"] == "alice"
    finally:
        admin.delete_job("used-here", NS, "trainjob")


# -- the CLI ------------------------------------------------------------------------------
def test_the_cli_creates_and_follows_a_trainjob_through_every_verb(cluster, capsys):
    code, out = cli(cluster, "training", "create", "trainjob", "pi-cli", "-n", NS,
                    "--runtime", "mpi-distributed", "--nodes", "2", "--gpus", "1", "--cpu", "2",
                    "--memory", "4Gi", "--image", IMAGE, "--annotation",
                    "simcluster.io/run-seconds=600", "--", "mpirun", "/home/mpiuser/pi")
    assert code == 0, capsys.readouterr().err
    assert out.startswith("Created the TrainJob team-nlp/pi-cli: 2 Nodes x 2 CPU, 4Gi, 1 GPU")
    assert "odh training describe trainjob pi-cli -n team-nlp" in out
    code, out = cli(cluster, "training", "get", "trainjob", "pi-cli", "-n", NS, "-o", "json")
    assert code == 0 and json.loads(out)["spec"]["trainer"]["numNodes"] == 2
    code, out = cli(cluster, "training", "list", "trainjob", "-n", NS)
    assert code == 0 and "pi-cli" in out
    code, out = cli(cluster, "training", "wait", "trainjob", "pi-cli", "-n", NS,
                    "--for", "Running", "--timeout", "60")
    assert code == 0, capsys.readouterr().err
    code, out = cli(cluster, "training", "describe", "trainjob", "pi-cli", "-n", NS)
    assert code == 0 and "pi-cli" in out, capsys.readouterr().err
    code, out = cli(cluster, "training", "logs", "trainjob", "pi-cli", "-n", NS, "--worker", "0")
    assert code == 0, capsys.readouterr().err
    code, out = cli(cluster, "training", "suspend", "trainjob", "pi-cli", "-n", NS)
    assert code == 0, capsys.readouterr().err
    code, out = cli(cluster, "training", "resume", "trainjob", "pi-cli", "-n", NS)
    assert code == 0, capsys.readouterr().err
    code, out = cli(cluster, "training", "delete", "trainjob", "pi-cli", "-n", NS, "--confirm",
                    "--wait")
    assert code == 0 and "Deleted team-nlp/pi-cli" in out, capsys.readouterr().err


def test_the_cli_waits_for_a_trainjob_from_a_manifest(cluster, capsys, tmp_path):
    code, manifest = cli(cluster, "training", "create", "trainjob", "pi-file", "-n", NS,
                         "--runtime", "mpi-distributed", "--nodes", "2", "--gpus", "1",
                         "--image", IMAGE, "--dry-run=client")
    assert code == 0, capsys.readouterr().err
    written = yaml.safe_load(manifest)
    assert written["kind"] == "TrainJob" and "command" not in written["spec"]["trainer"]
    written["metadata"]["annotations"] = RUN
    path = tmp_path / "pi.yaml"
    path.write_text(yaml.safe_dump(written))
    code, out = cli(cluster, "training", "create", "trainjob", "-f", str(path), "--wait",
                    "--timeout", "120")
    assert code == 0, capsys.readouterr().err
    assert out.splitlines()[-1].startswith("pi-file Succeeded after ")


def test_a_node_restarted_in_place_until_its_job_gave_up_is_told_without_the_hub(
        cluster, admin, capsys):
    # the node container is OOMKilled and restarted in place (the JobSet's pods restart
    # OnFailure) until the node Job's backoff limit; its pod is deleted with the Job, so
    # only the Job's event, the TrainJob's status and the pod's BackOff events are left
    TrainJob("oom-node", runtime="torch-distributed", num_nodes=1, namespace=NS, image=IMAGE,
             resources_per_node={"cpu": "1", "memory": "1Gi"},
             annotations={"simcluster.io/run-seconds": "20", "simcluster.io/failure": "oom",
                          "simcluster.io/failure-after-seconds": "1"}, client=admin).create()
    wait_until(lambda: admin.get_job("oom-node", NS, "trainjob").get("status", {}).get(
        "jobsStatus", [{}])[0].get("failed"), timeout=120, message="the node Job to fail")
    code, out = cli(cluster, "training", "describe", "trainjob", "oom-node", "-n", NS)
    assert code == 0, capsys.readouterr().err
    told = out[out.index("Diagnosis:"):]
    assert "could not tell" not in told
    assert ("The Node Job oom-node-node-0 reached its backoff limit: its pods failed too "
            "many times") in told
    # the cluster's own words as evidence, and a retry offered
    assert "BackoffLimitExceeded: Job has reached the specified backoff limit" in told
    assert "jobsStatus name=node, active=0, succeeded=0, failed=1" in told
    assert "BackOff: Back-off restarting failed container node" in told
    assert "Retry the job" in told
    admin.delete_job("oom-node", NS, "trainjob")


def test_the_cli_lists_runtimes(cluster, capsys):
    code, out = cli(cluster, "training", "list", "runtimes", "-n", NS)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "FRAMEWORK", "DESCRIPTION"]
    assert lines[2].split()[:3] == ["mpi-distributed", "ClusterTrainingRuntime", "mpi"]
    assert lines[4].startswith("team-torch") and "The team's PyTorch runtime" in lines[4]
    code, out = cli(cluster, "training", "list", "runtimes", "-n", NS, user="alice")
    assert code == 0
    assert "you may not list the cluster's runtimes" in capsys.readouterr().err


@pytest.mark.parametrize(("flags", "said"), [
    (["--runtime", "nope"], 'error: --runtime: There is no runtime "nope"'),
    (["--runtime", "torch-distributed", "--mpi-implementation", "OpenMPI"],
     'error: --mpi-implementation: Runtime "torch-distributed" runs torch, not MPI'),
    (["--nodes", "0"], "error: --nodes: A TrainJob needs at least 1 node"),
])
def test_the_cli_says_each_refusal_at_its_flag(cluster, capsys, flags, said):
    code, _out = cli(cluster, "training", "create", "trainjob", "refused", "-n", NS,
                     "--image", IMAGE, *flags)
    assert code == 2
    assert said in capsys.readouterr().err


def test_the_cli_on_a_cluster_without_the_trainer(tmp_path, capsys):
    sim = simcluster_process.start_scenario(tmp_path, NO_TRAINER, name="no-trainer.yaml")
    try:
        code, _out = cli(sim, "training", "create", "trainjob", "pi", "-n", NS, "--image",
                         IMAGE)
        assert code == 2
        assert capsys.readouterr().err.startswith(
            "error: This cluster does not serve the Kubeflow Trainer API")
    finally:
        sim.stop()


def test_mpijob_flags_and_trainjob_flags_stay_apart(cluster, capsys):
    code, _out = cli(cluster, "training", "create", "mpijob", "x", "-n", NS, "--image", IMAGE,
                     "--runtime", "mpi-distributed", "--command", "mpirun x")
    assert code == 2
    assert "--runtime: a TrainJob's" in capsys.readouterr().err
