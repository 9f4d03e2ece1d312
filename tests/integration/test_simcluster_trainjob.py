"""Kubeflow Trainer v2's TrainJob controller in simcluster: a TrainJob on a runtime becomes
a JobSet (plus MPI's SSH Secret and hostfile ConfigMap), and its status follows the
JobSet's, which simcluster's JobSet controller runs (test_simcluster_jobset.py)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml
from kubernetes import client as k8s

from tests import simcluster_process
from tests.waiting import wait_until

NS = "team-nlp"
TRAINER = ("trainer.kubeflow.org", "v1alpha1")
JOBSET = ("jobset.x-k8s.io", "v1alpha2")
RUNTIMES = yaml.safe_load((Path(__file__).resolve().parents[2] / "simcluster" / "scenarios"
                           / "trainer-runtimes.yaml").read_text())
SCENARIO = simcluster_process.admin_scenario(
    "trainjob", "The Trainer's TrainJob controller on upstream-shaped runtimes.",
    ["trainer", "jobset"], NS, objects=RUNTIMES,
    nodes=[{"name": "gpu-{i}", "count": 2, "cpu": 64, "memory": "512Gi", "gpus": 8}])
TIMEOUT = 60


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    base = tmp_path_factory.mktemp("trainjob")
    with simcluster_process.admin_client(base, SCENARIO) as client:
        yield client


def create_trainjob(api, name, runtime, trainer=None, **spec):
    body = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name,
                         "annotations": {"simcluster.io/run-seconds": "30"}},
            "spec": {"runtimeRef": {"name": runtime}, **spec}}
    if trainer is not None:
        body["spec"]["trainer"] = trainer
    return k8s.CustomObjectsApi(api).create_namespaced_custom_object(*TRAINER, NS, "trainjobs",
                                                                     body)


def get(api, group_version, plural, name):
    try:
        return k8s.CustomObjectsApi(api).get_namespaced_custom_object(
            *group_version, NS, plural, name)
    except k8s.ApiException as e:
        if e.status == 404:
            return None
        raise


def condition(obj, ctype):
    return next((c for c in (obj.get("status") or {}).get("conditions") or []
                 if c["type"] == ctype), None)


def rjob(jobset, name):
    return next(r for r in jobset["spec"]["replicatedJobs"] if r["name"] == name)


def container(r):
    return r["template"]["spec"]["template"]["spec"]["containers"][0]


def env(c):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c.get("env") or []}


def test_an_mpi_trainjob_gets_a_jobset_the_ssh_secret_and_the_hostfile(api):
    job = create_trainjob(api, "pi", "mpi-distributed", {
        "image": "example.com/pi:v2", "command": ["mpirun", "-n", "8", "/home/mpiuser/pi"],
        "numNodes": 3, "numProcPerNode": 4,
        "resourcesPerNode": {"limits": {"cpu": "2", "memory": "1Gi"}}})
    jobset = wait_until(lambda: get(api, JOBSET, "jobsets", "pi"), timeout=TIMEOUT)
    ref = jobset["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "TrainJob", "pi", job["metadata"]["uid"], True)
    assert jobset["metadata"]["annotations"]["simcluster.io/run-seconds"] == "30"
    launcher, node = rjob(jobset, "launcher"), rjob(jobset, "node")
    assert launcher["template"]["metadata"]["labels"][
        "trainer.kubeflow.org/trainjob-ancestor-step"] == "trainer"
    lc, nc = container(launcher), container(node)
    assert lc["image"] == nc["image"] == "example.com/pi:v2"
    assert lc["command"] == ["mpirun", "-n", "8", "/home/mpiuser/pi"]
    assert nc["command"] == ["/usr/sbin/sshd"]  # the nodes keep the runtime's sshd
    assert nc["resources"] == {"limits": {"cpu": "2", "memory": "1Gi"}}
    assert node["template"]["spec"]["parallelism"] == 3
    assert node["template"]["spec"]["completions"] == 3
    assert env(lc)["OMPI_MCA_orte_set_default_slots"] == "4"
    assert env(lc)["OMPI_MCA_orte_default_hostfile"] == "/etc/mpi/hostfile"
    mounts = {m["name"]: m["mountPath"] for m in lc["volumeMounts"]}
    assert mounts == {"mpi-ssh-auth": "/home/mpiuser/.ssh", "mpi-hostfile": "/etc/mpi"}
    assert {m["name"] for m in nc["volumeMounts"]} == {"mpi-ssh-auth"}
    volumes = {v["name"]: v for v in launcher["template"]["spec"]["template"]["spec"]["volumes"]}
    assert volumes["mpi-ssh-auth"]["secret"]["secretName"] == "pi-mpi-ssh-auth"
    assert volumes["mpi-hostfile"]["configMap"]["name"] == "pi-mpi-hostfile"

    core = k8s.CoreV1Api(api)
    hostfile = core.read_namespaced_config_map("pi-mpi-hostfile", NS)
    assert hostfile.data["hostfile"] == "".join(
        f"pi-node-0-{i}.pi slots=4\n" for i in range(3))
    assert hostfile.metadata.owner_references[0].name == "pi"
    secret = core.read_namespaced_secret("pi-mpi-ssh-auth", NS)
    assert secret.type == "kubernetes.io/ssh-auth"
    assert base64.b64decode(secret.data["ssh-privatekey"]).startswith(
        b"-----BEGIN EC PRIVATE KEY-----")
    assert secret.metadata.owner_references[0].kind == "TrainJob"

    created = wait_until(lambda: condition(get(api, TRAINER, "trainjobs", "pi"), "Created"),
                         timeout=TIMEOUT)
    assert (created["status"], created["reason"]) == ("True", "JobsCreationSucceeded")


def test_a_launcher_run_as_node_counts_in_the_hostfile(api):
    create_trainjob(api, "ds", "deepspeed-distributed", {"numNodes": 2})
    jobset = wait_until(lambda: get(api, JOBSET, "jobsets", "ds"), timeout=TIMEOUT)
    assert rjob(jobset, "node")["template"]["spec"]["parallelism"] == 1
    hostfile = wait_until(lambda: k8s.CoreV1Api(api).read_namespaced_config_map(
        "ds-mpi-hostfile", NS), timeout=TIMEOUT)
    assert hostfile.data["hostfile"] == "ds-node-0-0.ds slots=1\nds-launcher-0-0.ds slots=1\n"


def test_a_torch_trainjob_gets_the_torchrun_env(api):
    create_trainjob(api, "llama", "torch-distributed", {
        "numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}},
        "env": [{"name": "NCCL_DEBUG", "value": "INFO"}]})
    jobset = wait_until(lambda: get(api, JOBSET, "jobsets", "llama"), timeout=TIMEOUT)
    node = rjob(jobset, "node")
    assert node["template"]["spec"]["parallelism"] == 2
    e = env(container(node))
    assert e["PET_NNODES"] == "2"
    assert e["PET_NPROC_PER_NODE"] == "4"  # auto: the GPUs per node
    assert e["PET_MASTER_ADDR"] == "llama-node-0-0.llama"
    assert e["PET_MASTER_PORT"] == "29500"
    assert e["PET_NODE_RANK"] == {"fieldRef": {
        "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
    assert e["NCCL_DEBUG"] == "INFO"
    assert node["template"]["spec"]["template"]["metadata"]["labels"][
        "trainer.kubeflow.org/trainjob-ancestor-step"] == "trainer"


def test_a_missing_runtime_is_a_created_false_condition_and_a_warning(api):
    create_trainjob(api, "lost", "no-such-runtime")
    created = wait_until(lambda: condition(get(api, TRAINER, "trainjobs", "lost"), "Created"),
                         timeout=TIMEOUT)
    assert (created["status"], created["reason"]) == ("False", "JobsBuildFailed")
    events = wait_until(lambda: [e for e in k8s.CoreV1Api(api).list_namespaced_event(NS).items
                                 if e.involved_object.name == "lost"], timeout=TIMEOUT)
    assert events[0].reason == "TrainJobResourcesCreationFailed"
    assert events[0].type == "Warning"
    assert get(api, JOBSET, "jobsets", "lost") is None


def test_suspend_propagates_to_the_jobset_and_back(api):
    create_trainjob(api, "held", "torch-distributed", suspend=True)
    jobset = wait_until(lambda: get(api, JOBSET, "jobsets", "held"), timeout=TIMEOUT)
    assert jobset["spec"]["suspend"] is True
    suspended = wait_until(lambda: condition(get(api, TRAINER, "trainjobs", "held"),
                                             "Suspended"), timeout=TIMEOUT)
    assert (suspended["status"], suspended["reason"]) == ("True", "Suspended")
    k8s.CustomObjectsApi(api).patch_namespaced_custom_object(
        *TRAINER, NS, "trainjobs", "held", {"spec": {"suspend": False}})
    wait_until(lambda: get(api, JOBSET, "jobsets", "held")["spec"]["suspend"] is False,
               timeout=TIMEOUT)
    resumed = wait_until(lambda: (c := condition(get(api, TRAINER, "trainjobs", "held"),
                                                  "Suspended")) and c["status"] == "False"
                         and c, timeout=TIMEOUT)
    assert resumed["reason"] == "Resumed"


@pytest.mark.parametrize(("outcome", "command"), [("Complete", ["torchrun", "train.py"]),
                                                 ("Failed", ["false"])])
def test_a_trainjob_runs_through_its_jobset_to_its_end(api, outcome, command):
    """End to end with simcluster's JobSet controller: the JobSet's Jobs and pods run, and
    the TrainJob's condition and jobsStatus follow the JobSet's."""
    name = f"run-{outcome.lower()}"
    create_trainjob(api, name, "torch-distributed", {"numNodes": 2, "command": command})
    done = wait_until(lambda: condition(get(api, TRAINER, "trainjobs", name), outcome),
                      timeout=90, message=f"{name} to be {outcome}")
    jobset = get(api, JOBSET, "jobsets", name)
    said = condition(jobset, "Completed" if outcome == "Complete" else "Failed")
    assert (done["status"], done["reason"], done["message"]) == (
        "True", said["reason"], said["message"])
    job = get(api, TRAINER, "trainjobs", name)
    [node] = job["status"]["jobsStatus"]
    assert node["name"] == "node"
    assert (node["succeeded"], node["failed"]) == ((1, 0) if outcome == "Complete" else (0, 1))
    assert condition(job, "Created")["status"] == "True"
