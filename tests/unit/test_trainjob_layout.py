"""A TrainJob's pods before they exist, as its runtime lays them out (the runtimes are
upstream's, as simcluster/scenarios/trainer-runtimes.yaml has them): torch-distributed
has nodes only; mpi-distributed adds a Launcher; deepspeed-distributed's Launcher runs as
one of the nodes, so its node Job has one pod fewer. The watch hub's index hands each job
its runtime."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from odh.training.kinds import TRAINJOB
from odh.training.status.jobindex import JobIndex
from odh.training.status.summarize import summarize

RUNTIMES = {r["metadata"]["name"]: r for r in yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "simcluster/scenarios/trainer-runtimes.yaml")
    .read_text())}


def _job(runtime: str, nodes: int = 3) -> dict:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "run", "namespace": "team-nlp", "uid": "u1",
                         "resourceVersion": "1"},
            "spec": {"runtimeRef": {"name": runtime},
                     "trainer": {"numNodes": nodes, "resourcesPerNode": {
                         "limits": {"cpu": "2", "nvidia.com/gpu": "1"}}}}}


@pytest.mark.parametrize(("runtime", "pods"), [
    ("torch-distributed", ["run-node-0-0", "run-node-0-1", "run-node-0-2"]),
    ("mpi-distributed", ["run-launcher-0-0", "run-node-0-0", "run-node-0-1", "run-node-0-2"]),
    ("deepspeed-distributed", ["run-launcher-0-0", "run-node-0-0", "run-node-0-1"]),
])
def test_the_pods_a_trainjob_will_have_before_any_exists(runtime, pods):
    s = summarize(_job(runtime), [], None, layout=RUNTIMES[runtime])
    assert [r.name for r in s.replicas] == pods
    assert not any(r.exists for r in s.replicas)
    assert s.total == len(pods)
    # 3 nodes of 1 GPU whichever pod is a node (a Launcher that runs as a node is sized
    # as one, the others ask for none)
    assert s.gpus == 3


def test_a_runtime_that_cannot_be_read_leaves_the_nodes_the_spec_asks_for():
    s = summarize(_job("mpi-distributed"), [], None)
    assert [r.name for r in s.replicas] == ["run-node-0-0", "run-node-0-1", "run-node-0-2"]


def test_the_runtime_names_a_cluster_or_a_project_runtime():
    job = _job("mpi-distributed")
    assert TRAINJOB.layout_ref(job).plural == "clustertrainingruntimes"
    assert TRAINJOB.layout_ref(job).namespace == ""
    job["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
    ref = TRAINJOB.layout_ref(job)
    assert (ref.plural, ref.namespace, ref.name) == ("trainingruntimes", "team-nlp",
                                                      "mpi-distributed")


def test_the_hub_s_index_hands_a_trainjob_its_runtime_and_tells_it_when_it_changes():
    index = JobIndex()
    job = _job("deepspeed-distributed", nodes=2)
    key = ("team-nlp", "trainjob", "run")
    index.apply("jobs", "ADDED", job, TRAINJOB)
    assert index.job_data(key).layout is None
    touched = index.apply_layout("trainer.kubeflow.org", "clustertrainingruntimes", "ADDED",
                                 RUNTIMES["deepspeed-distributed"])
    assert touched == {key}
    assert index.apply_layout("trainer.kubeflow.org", "clustertrainingruntimes", "ADDED",
                              RUNTIMES["torch-distributed"]) == set()
    data = index.job_data(key)
    s = summarize(data.job, data.pods, None, layout=data.layout)
    assert [r.name for r in s.replicas] == ["run-launcher-0-0", "run-node-0-0"]
