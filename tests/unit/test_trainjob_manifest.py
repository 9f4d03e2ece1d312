"""The TrainJob's spec model: its trainer.kubeflow.org/v1alpha1 manifest built and read back
(round trip, unknown fields of the base kept, a clone), and its own rules."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from odh.training.kinds import TRAINJOB, default_kind, kind_for_manifest, wizard_kinds
from odh.training.spec import (
    EnvVar,
    ManifestError,
    PVCVolume,
    Toleration,
    build_manifest,
    clone_spec,
    read_manifest,
)
from odh.training.validation import errors_of, validate_spec, warnings_of

BASE = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "pi", "namespace": "team-nlp", "uid": "u-1", "resourceVersion": "7",
                 "labels": {"kueue.x-k8s.io/queue-name": "team"},
                 "annotations": {"opendatahub.io/username": "alice", "team": "nlp"}},
    "spec": {
        "runtimeRef": {"name": "mpi-distributed", "apiGroup": "trainer.kubeflow.org"},
        "managedBy": "trainer.kubeflow.org/trainjob-controller",
        "runtimePatches": [{"manager": "someone", "trainingRuntimeSpec": {"x": 1}}],
        "suspend": True,
        "trainer": {"image": "quay.io/t/pi:1", "command": ["mpirun"], "args": ["/pi"],
                    "numNodes": 3, "numProcPerNode": "auto",
                    "env": [{"name": "A", "value": "1"}],
                    "resourcesPerNode": {"limits": {"cpu": 2, "nvidia.com/gpu": "1"},
                                         "requests": {"memory": "4Gi"}}},
        "podSpecOverrides": [{"targetJobs": [{"name": "node"}], "serviceAccountName": "sa",
                              "nodeSelector": {"gpu": "a100"},
                              "volumes": [{"name": "data",
                                           "persistentVolumeClaim": {"claimName": "ds"}}],
                              "containers": [{"name": "node", "volumeMounts": [
                                  {"name": "data", "mountPath": "/data"}]}]}]},
    "status": {"conditions": []},
}


def spec(**fields):
    settings = dict(name="pi", namespace="team-nlp", image="quay.io/t/pi:1", workers=2,
                    cpu_per_worker="2", memory_per_worker="4Gi", gpus_per_worker=1)
    settings.update(fields)
    return TRAINJOB.new_spec(**settings)


def test_a_generated_manifest_says_the_runtime_and_the_nodes():
    manifest = build_manifest(spec(command=["mpirun", "/pi"], slots_per_worker=2,
                                   queue_name="team"))
    assert manifest["apiVersion"] == "trainer.kubeflow.org/v1alpha1"
    assert manifest["spec"]["runtimeRef"] == {"name": "mpi-distributed",
                                              "apiGroup": "trainer.kubeflow.org",
                                              "kind": "ClusterTrainingRuntime"}
    assert manifest["spec"]["trainer"] == {
        "image": "quay.io/t/pi:1", "command": ["mpirun", "/pi"], "numNodes": 2,
        "numProcPerNode": 2,
        "resourcesPerNode": {"requests": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": 1},
                             "limits": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": 1}}}
    assert manifest["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "team"}
    assert "podSpecOverrides" not in manifest["spec"]


def test_a_manifest_reads_as_its_spec():
    read = read_manifest(BASE)
    assert read.kind is TRAINJOB
    assert (read.runtime, read.runtime_kind, read.workers, read.slots_per_worker) == (
        "mpi-distributed", "ClusterTrainingRuntime", 3, None)
    assert (read.cpu_per_worker, read.memory_per_worker, read.gpus_per_worker) == (
        "2", "4Gi", 1)
    assert read.command == ["mpirun", "/pi"] and read.env == [EnvVar("A", "1")]
    assert read.volumes == [PVCVolume("ds", "/data", name="data")]
    assert read.node_selector == {"gpu": "a100"}
    assert (read.queue_name, read.created_by, read.annotations) == ("team", "alice",
                                                                   {"team": "nlp"})
    assert (read.launcher_cpu, read.launcher_memory) == ("", "")


def test_rebuilding_an_unchanged_spec_gives_its_manifest_back():
    assert build_manifest(read_manifest(BASE)) == BASE


def test_a_change_rewrites_only_its_setting_and_keeps_what_the_model_does_not_know():
    changed = read_manifest(BASE)
    changed.workers = 4
    changed.tolerations = [Toleration("gpu", effect="NoSchedule")]
    manifest = build_manifest(changed)
    expected = copy.deepcopy(BASE)
    expected["spec"]["trainer"]["numNodes"] = 4
    expected["spec"]["podSpecOverrides"][0]["tolerations"] = [
        {"key": "gpu", "operator": "Equal", "effect": "NoSchedule"}]
    assert manifest == expected
    assert read_manifest(manifest) == changed


def test_removing_every_override_removes_the_entry_but_not_the_others():
    changed = read_manifest(BASE)
    changed.volumes, changed.node_selector = [], {}
    override = build_manifest(changed)["spec"]["podSpecOverrides"]
    assert override == [{"targetJobs": [{"name": "node"}], "serviceAccountName": "sa"}]


@given(workers=st.integers(1, 64), gpus=st.integers(0, 8),
       slots=st.none() | st.integers(1, 16), command=st.lists(st.text("abc-/", min_size=1)),
       runtime_kind=st.sampled_from(["ClusterTrainingRuntime", "TrainingRuntime"]),
       claims=st.lists(st.sampled_from(["ds", "models"]), unique=True),
       selector=st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(["x", "y"])))
def test_any_spec_survives_its_manifest(workers, gpus, slots, command, runtime_kind, claims,
                                        selector):
    made = spec(workers=workers, gpus_per_worker=gpus, slots_per_worker=slots,
                command=command, runtime_kind=runtime_kind, node_selector=selector,
                volumes=[PVCVolume(c, f"/{c}") for c in claims])
    again = read_manifest(build_manifest(made))
    assert again == made
    assert read_manifest(build_manifest(again)) == made


def test_a_clone_drops_what_the_cluster_wrote_and_is_not_suspended():
    clone = clone_spec(read_manifest(BASE), "pi-2")
    manifest = build_manifest(clone)
    assert manifest["metadata"]["name"] == "pi-2"
    assert "uid" not in manifest["metadata"] and "status" not in manifest
    assert "suspend" not in manifest["spec"]
    assert "opendatahub.io/username" not in manifest["metadata"]["annotations"]
    assert manifest["spec"]["runtimePatches"] == BASE["spec"]["runtimePatches"]


def test_a_manifest_of_another_kind_is_refused_in_words():
    with pytest.raises(ManifestError, match="expected kind TrainJob"):
        TRAINJOB.read_manifest({**BASE, "apiVersion": "trainer.kubeflow.org/v2"})


def test_the_trainjob_is_created_and_the_wizard_shows_it_beside_the_mpijob():
    assert TRAINJOB.creatable and TRAINJOB.wizard_ready and TRAINJOB.counts_nodes
    assert wizard_kinds() == [default_kind(), TRAINJOB] and default_kind().slug == "mpijob"
    assert kind_for_manifest(BASE) is TRAINJOB


# -- its rules ---------------------------------------------------------------------------
def messages(made, severity=errors_of):
    return {f.field: f.message for f in severity(validate_spec(made))}


def test_a_good_spec_has_nothing_to_say():
    assert validate_spec(spec(command=["mpirun", "-np", "5", "/pi"])) == []


def test_no_nodes():
    assert messages(spec(workers=0)) == {"workers": (
        "A TrainJob needs at least 1 node: set the number of nodes (numNodes) to a whole number "
        "of 1 or more (you entered 0).")}


def test_a_runtime_is_named_and_of_a_kind_there_is():
    assert set(messages(spec(runtime=""))) == {"runtime"}
    assert "not a valid name" in messages(spec(runtime="Big_Runtime"))["runtime"]
    assert "ClusterTrainingRuntime (the cluster's runtimes) or TrainingRuntime" in messages(
        spec(runtime_kind="Runtime"))["runtime_kind"]


def test_what_the_runtime_sets_is_left_to_it():
    found = messages(spec(launcher_cpu="1", priority_class="high"))
    assert found["launcher_cpu"].startswith("A TrainJob's runtime sizes its launcher")
    assert found["priority_class"].startswith("A TrainJob takes its pods' PriorityClass")


def test_a_command_is_the_runtimes_when_left_out_and_no_launcher_is_asked_for():
    assert messages(spec(command=[])) == {}
    assert messages(spec(command=[]), warnings_of) == {}


def test_a_trainjob_compares_by_the_settings_it_has():
    from odh.training.status.compare import settings_of

    keys = [s.key for s in settings_of(build_manifest(spec()))]
    assert "runtime" in keys and "workers" in keys
    assert not {"worker_image", "disable_sidecar_injection"} & set(keys)
