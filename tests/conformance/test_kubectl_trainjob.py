"""`kubectl` against simcluster's Kubeflow Trainer v2 and JobSet APIs, with TrainJobs shaped
as kubeflow/trainer's examples write them (a torch-distributed one, an mpi-distributed one
with numNodes, numProcPerNode and resourcesPerNode): discovery, apply, get with the CRDs'
printer columns (TrainJob STATE; JobSet TERMINALSTATE, RESTARTS, COMPLETED, SUSPENDED),
`-o yaml`, describe, and the runtimes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests import simcluster_process
from tests.conformance.test_kubectl import Kubectl
from tests.waiting import wait_until

pytestmark = pytest.mark.kubectl

NS = "team-nlp"
RUNTIMES = yaml.safe_load((Path(__file__).resolve().parents[2] / "simcluster" / "scenarios"
                           / "trainer-runtimes.yaml").read_text())
SCENARIO = simcluster_process.admin_scenario(
    "kubectl-trainer", "Trainer v2 and JobSet for kubectl.", ["trainer", "jobset"], NS,
    objects=RUNTIMES,
    nodes=[{"name": "gpu-{i}", "count": 2, "cpu": 64, "memory": "512Gi", "gpus": 8}])

# after kubeflow/trainer's examples (the PyTorch MNIST notebook's TrainJob, the MPI one)
TORCH = f"""\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: pytorch-mnist
  namespace: {NS}
  annotations:
    simcluster.io/run-seconds: "30"
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    image: docker.io/kubeflow/pytorch-mnist:v1-9e12c68
    command: [torchrun, /workspace/mnist.py]
    numNodes: 2
    resourcesPerNode:
      limits:
        nvidia.com/gpu: 1
"""
MPI = f"""\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: mpi-pi
  namespace: {NS}
  annotations:
    simcluster.io/run-seconds: "3600"
spec:
  runtimeRef:
    name: mpi-distributed
  trainer:
    image: mpioperator/mpi-pi:openmpi
    command: [mpirun, -n, "4", /home/mpiuser/pi]
    numNodes: 2
    numProcPerNode: 2
    resourcesPerNode:
      requests:
        cpu: "2"
        memory: 2Gi
      limits:
        cpu: "2"
        memory: 2Gi
"""


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory):
    base = tmp_path_factory.mktemp("kubectl-trainer")
    sim = simcluster_process.start_scenario(base, SCENARIO)
    try:
        yield Kubectl(sim, base / "home", "admin")
    finally:
        sim.stop()


def table(kubectl: Kubectl, *args: str) -> list[list[str]]:
    """`kubectl get` as rows of cells, cut where the header's columns begin (an empty cell
    stays a cell)."""
    header, *rows = kubectl.out("get", *args, "-n", NS).splitlines()
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    bounds = list(zip(starts, starts[1:] + [None], strict=True))
    return [header.split()] + [[line[a:b].strip() for a, b in bounds] for line in rows]


def row(kubectl: Kubectl, kind: str, name: str) -> list[str]:
    return next((r for r in table(kubectl, kind)[1:] if r[0] == name), [])


def test_discovery_lists_the_trainer_and_jobset_resources(kubectl):
    trainer = kubectl.out("api-resources", "--api-group=trainer.kubeflow.org", "-o", "name")
    assert set(trainer.split()) == {"trainjobs.trainer.kubeflow.org",
                                    "trainingruntimes.trainer.kubeflow.org",
                                    "clustertrainingruntimes.trainer.kubeflow.org"}
    assert kubectl.out("api-resources", "--api-group=jobset.x-k8s.io", "-o",
                       "name").split() == ["jobsets.jobset.x-k8s.io"]


def test_the_cluster_training_runtimes(kubectl):
    listing = [line.split() for line in kubectl.out("get", "clustertrainingruntimes")
               .splitlines()]
    assert listing[0] == ["NAME", "AGE"]  # their CRD declares no printer columns
    assert [r[0] for r in listing[1:]] == ["deepspeed-distributed", "mpi-distributed",
                                          "torch-distributed"]
    assert kubectl.out("get", "clustertrainingruntime", "mpi-distributed", "-o",
                       "jsonpath={.spec.mlPolicy.mpi.sshAuthMountPath}") == "/home/mpiuser/.ssh"


def test_a_torch_trainjob_through_kubectl(kubectl):
    assert kubectl.out("apply", "-f", "-", stdin=TORCH).strip() == \
        "trainjob.trainer.kubeflow.org/pytorch-mnist created"
    assert table(kubectl, "trainjobs")[0] == ["NAME", "STATE", "AGE"]
    wait_until(lambda: row(kubectl, "trainjobs", "pytorch-mnist")[1:2] == ["Complete"], 90,
               message="the TrainJob's STATE to be Complete")
    assert table(kubectl, "jobsets")[0] == ["NAME", "TERMINALSTATE", "RESTARTS", "COMPLETED",
                                           "SUSPENDED", "AGE"]
    # no restarts: the cell is empty, as upstream's omitted status.restarts leaves it
    assert row(kubectl, "jobsets", "pytorch-mnist")[1:5] == ["Completed", "", "True", "false"]

    job = yaml.safe_load(kubectl.out("get", "trainjob", "pytorch-mnist", "-n", NS, "-o",
                                     "yaml"))
    assert job["spec"]["runtimeRef"] == {"apiGroup": "trainer.kubeflow.org",
                                         "kind": "ClusterTrainingRuntime",
                                         "name": "torch-distributed"}
    assert job["spec"]["trainer"]["numNodes"] == 2
    assert [c["type"] for c in job["status"]["conditions"]][-1] == "Complete"
    [node] = job["status"]["jobsStatus"]
    assert (node["name"], node["succeeded"]) == ("node", 1)

    described = kubectl.out("describe", "trainjob", "pytorch-mnist", "-n", NS)
    lines = [" ".join(line.split()) for line in described.splitlines()]
    for expected in ("Name: pytorch-mnist", f"Namespace: {NS}", "Kind: TrainJob",
                     "Name: torch-distributed", "Num Nodes: 2", "nvidia.com/gpu: 1",
                     "Type: Complete", "Jobs Status:"):
        assert expected in lines, (expected, described)


def test_an_mpi_trainjob_through_kubectl(kubectl):
    assert kubectl.out("apply", "-f", "-", stdin=MPI).strip() == \
        "trainjob.trainer.kubeflow.org/mpi-pi created"
    wait_until(lambda: kubectl.out("get", "pods", "-n", NS, "-l",
                                   "jobset.sigs.k8s.io/jobset-name=mpi-pi", "-o",
                                   "name").count("pod/") == 3, 60,
               message="the launcher's and the two nodes' pods")
    assert row(kubectl, "trainjobs", "mpi-pi")[1] == "Created"
    assert row(kubectl, "jobsets", "mpi-pi")[1:5] == ["", "", "", "false"]  # running
    job = yaml.safe_load(kubectl.out("get", "trainjob", "mpi-pi", "-n", NS, "-o", "yaml"))
    trainer = job["spec"]["trainer"]
    assert (trainer["numNodes"], trainer["numProcPerNode"]) == (2, 2)
    assert trainer["resourcesPerNode"]["limits"] == {"cpu": "2", "memory": "2Gi"}
    assert kubectl.out("get", "configmap", "mpi-pi-mpi-hostfile", "-n", NS, "-o",
                       "jsonpath={.data.hostfile}") == (
        "mpi-pi-node-0-0.mpi-pi slots=2\nmpi-pi-node-0-1.mpi-pi slots=2\n")
    described = [" ".join(line.split()) for line in
                 kubectl.out("describe", "trainjob", "mpi-pi", "-n", NS).splitlines()]
    for expected in ("Name: mpi-distributed", "Num Nodes: 2", "Num Proc Per Node: 2",
                     "Name: launcher", "Name: node"):
        assert expected in described, expected
    jobset = [" ".join(line.split()) for line in
              kubectl.out("describe", "jobset", "mpi-pi", "-n", NS).splitlines()]
    assert "Kind: JobSet" in jobset and "Replicated Jobs Status:" in jobset


def test_a_suspended_trainjob_shows_in_both_tables(kubectl):
    held = TORCH.replace("name: pytorch-mnist", "name: held").replace(
        "spec:\n", "spec:\n  suspend: true\n", 1)
    kubectl.run("apply", "-f", "-", stdin=held)
    wait_until(lambda: row(kubectl, "trainjobs", "held")[1:2] == ["Suspended"], 60,
               message="the TrainJob's STATE to be Suspended")
    assert row(kubectl, "jobsets", "held")[4] == "true"
    assert kubectl.out("patch", "trainjob", "held", "-n", NS, "--type", "merge", "-p",
                       '{"spec":{"suspend":false}}').strip() == \
        "trainjob.trainer.kubeflow.org/held patched"
    wait_until(lambda: row(kubectl, "jobsets", "held")[4] == "false", 60,
               message="the JobSet resumed")
    assert kubectl.out("delete", "trainjob", "held", "-n", NS).strip() == \
        'trainjob.trainer.kubeflow.org "held" deleted'
