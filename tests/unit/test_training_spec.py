"""The MPIJob spec model: manifests built from it, read back, edited on a base, cloned."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest
import yaml

from odh.training import MPIJobSpec
from odh.training.checks.names import fresh_name, is_dns1035_label, max_job_name_length
from odh.training.spec import (
    EnvVar,
    ManifestError,
    PVCVolume,
    Toleration,
    build_manifest,
    clone_spec,
    manifest_yaml,
    read_manifest,
)
from tests import reference

EXAMPLES = reference.EXAMPLES
EXAMPLE_FILES = sorted(EXAMPLES.glob("**/*.yaml"))


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def test_the_upstream_examples_are_there():
    assert len(EXAMPLE_FILES) >= 5


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_every_upstream_example_survives_read_then_build_exactly(path):
    manifest = load(path)
    assert build_manifest(read_manifest(manifest)) == manifest


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_every_upstream_example_means_the_same_when_generated_afresh(path):
    spec = read_manifest(load(path))
    fresh = dataclasses.replace(spec, base=None)
    assert read_manifest(build_manifest(fresh)) == spec


def test_reading_an_example_gives_the_settings_a_person_would_name():
    spec = read_manifest(load(EXAMPLES / "pi/pi.yaml"))
    assert spec.name == "pi"
    assert spec.image == "mpioperator/mpi-pi:openmpi"
    # command and args together are what the Launcher runs
    assert spec.command == ["mpirun", "-n", "2", "/home/mpiuser/pi"]
    assert (spec.workers, spec.cpu_per_worker, spec.memory_per_worker) == (2, "1", "1Gi")
    assert (spec.launcher_cpu, spec.launcher_memory) == ("1", "1Gi")
    assert spec.slots_per_worker is None and spec.effective_slots == 1
    assert spec.clean_pod_policy == "Running" and spec.ttl_seconds_after_finished == 60
    assert spec.disable_sidecar_injection is False
    assert spec.worker_image == ""


def test_reading_a_gpu_example():
    spec = read_manifest(load(EXAMPLES / "tensorflow-benchmarks/tensorflow-benchmarks.yaml"))
    assert spec.gpus_per_worker == 1
    assert (spec.cpu_per_worker, spec.memory_per_worker, spec.launcher_cpu) == ("", "", "")


def full_spec(**changes) -> MPIJobSpec:
    spec = MPIJobSpec(
        name="resnet-horovod", namespace="team-nlp", image="quay.io/team/horovod:0.28",
        command=["mpirun", "-np", "8", "python", "train.py", "--epochs=3"],
        workers=4, cpu_per_worker="8", memory_per_worker="32Gi", gpus_per_worker=2,
        launcher_cpu="500m", launcher_memory="1Gi", mpi_implementation="Intel",
        env=[EnvVar("NCCL_DEBUG", "INFO"),
             EnvVar("TOKEN", value_from={"secretKeyRef": {"name": "hf", "key": "token"}})],
        volumes=[PVCVolume("datasets", "/data", read_only=True),
                 PVCVolume("checkpoints", "/ckpt", sub_path="resnet")],
        node_selector={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
        tolerations=[Toleration("nvidia.com/gpu", "Exists", effect="NoSchedule"),
                     Toleration("spot", value="true", effect="NoExecute", seconds=300)],
        priority_class="high", queue_name="team-nlp-queue", clean_pod_policy="All",
        ttl_seconds_after_finished=3600, backoff_limit=0,
        launcher_creation_policy="WaitForWorkersReady", labels={"team": "nlp"},
        annotations={"note": "baseline"}, created_by="alice", worker_image="quay.io/team/w:1",
    )
    return dataclasses.replace(spec, **changes)


SPECS = {
    "defaults": MPIJobSpec(name="pi", image="mpioperator/mpi-pi:openmpi",
                           command=["mpirun", "-n", "2", "/home/mpiuser/pi"]),
    "everything": full_spec(),
    "explicit-slots": full_spec(slots_per_worker=4),
    "cpu-only": full_spec(gpus_per_worker=0, slots_per_worker=3),
    "no-resources": full_spec(cpu_per_worker="", memory_per_worker="", launcher_cpu="",
                              launcher_memory=""),
    "sidecar-allowed": full_spec(disable_sidecar_injection=False, namespace=""),
    "one-worker": MPIJobSpec(name="x", workers=1, command=["sh", "-c", "echo hi\nsleep 1\n"],
                             clean_pod_policy="None", backoff_limit=3),
}


@pytest.mark.parametrize("name", SPECS)
def test_a_spec_survives_build_then_read(name):
    spec = SPECS[name]
    assert read_manifest(build_manifest(spec)) == spec


def test_a_generated_manifest_is_a_complete_mpijob():
    manifest = build_manifest(full_spec())
    assert manifest["apiVersion"] == "kubeflow.org/v2beta1" and manifest["kind"] == "MPIJob"
    meta = manifest["metadata"]
    assert meta["name"] == "resnet-horovod" and meta["namespace"] == "team-nlp"
    assert meta["labels"] == {"team": "nlp", "kueue.x-k8s.io/queue-name": "team-nlp-queue"}
    assert meta["annotations"] == {"note": "baseline", "opendatahub.io/username": "alice"}
    spec = manifest["spec"]
    assert spec["slotsPerWorker"] == 2  # follows GPUs per worker
    assert spec["mpiImplementation"] == "Intel"
    assert spec["launcherCreationPolicy"] == "WaitForWorkersReady"
    assert spec["runPolicy"] == {"cleanPodPolicy": "All", "ttlSecondsAfterFinished": 3600,
                                 "backoffLimit": 0}
    launcher = spec["mpiReplicaSpecs"]["Launcher"]
    worker = spec["mpiReplicaSpecs"]["Worker"]
    assert launcher["replicas"] == 1 and worker["replicas"] == 4
    lc = launcher["template"]["spec"]["containers"][0]
    wc = worker["template"]["spec"]["containers"][0]
    assert lc["command"] == ["mpirun", "-np", "8", "python", "train.py", "--epochs=3"]
    assert "command" not in wc and "args" not in wc  # the operator runs sshd
    assert lc["image"] == "quay.io/team/horovod:0.28" and wc["image"] == "quay.io/team/w:1"
    assert wc["resources"] == {
        "requests": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 2},
        "limits": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 2}}
    assert lc["resources"]["requests"] == lc["resources"]["limits"] == {
        "cpu": "500m", "memory": "1Gi"}
    for template, container in ((launcher["template"], lc), (worker["template"], wc)):
        assert template["metadata"]["annotations"] == {"sidecar.istio.io/inject": "false"}
        pod = template["spec"]
        assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
        assert pod["priorityClassName"] == "high"
        assert pod["tolerations"] == [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoExecute",
             "tolerationSeconds": 300}]
        assert pod["volumes"] == [
            {"name": "pvc-datasets", "persistentVolumeClaim": {"claimName": "datasets"}},
            {"name": "pvc-checkpoints", "persistentVolumeClaim": {"claimName": "checkpoints"}}]
        assert container["volumeMounts"] == [
            {"name": "pvc-datasets", "mountPath": "/data", "readOnly": True},
            {"name": "pvc-checkpoints", "mountPath": "/ckpt", "subPath": "resnet"}]
        assert container["env"] == [
            {"name": "NCCL_DEBUG", "value": "INFO"},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}]


def test_a_minimal_spec_leaves_out_what_it_does_not_set():
    manifest = build_manifest(MPIJobSpec(name="pi", image="img", command=["mpirun", "pi"],
                                         disable_sidecar_injection=False))
    assert "namespace" not in manifest["metadata"] and "labels" not in manifest["metadata"]
    template = manifest["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    assert set(template) == {"spec"}
    assert set(template["spec"]) == {"containers"}
    assert "backoffLimit" not in manifest["spec"]["runPolicy"]


def test_slots_default_to_gpus_or_one():
    assert MPIJobSpec(gpus_per_worker=4).effective_slots == 4
    assert MPIJobSpec(gpus_per_worker=0).effective_slots == 1
    assert MPIJobSpec(gpus_per_worker=4, slots_per_worker=1).effective_slots == 1
    # an explicit value equal to the default is the default
    assert MPIJobSpec(gpus_per_worker=4, slots_per_worker=4).slots_per_worker is None


def test_spellings_of_the_same_job_are_equal_specs():
    assert MPIJobSpec(image="a", worker_image="a") == MPIJobSpec(image="a")
    assert MPIJobSpec(labels={"kueue.x-k8s.io/queue-name": "q"}) == MPIJobSpec(queue_name="q")
    assert MPIJobSpec(annotations={"opendatahub.io/username": "bob"}) == MPIJobSpec(
        created_by="bob")
    assert PVCVolume("My.Data", "/d").name == "pvc-my-data"


def test_base_is_provenance_not_identity():
    manifest = load(EXAMPLES / "pi/pi.yaml")
    spec = read_manifest(manifest)
    assert spec == dataclasses.replace(spec, base=None)
    manifest["metadata"]["name"] = "changed-later"  # the caller's dict is not the base
    assert build_manifest(spec)["metadata"]["name"] == "pi"


def test_editing_a_read_manifest_changes_only_what_changed():
    original = load(EXAMPLES / "pi/pi.yaml")
    spec = read_manifest(copy.deepcopy(original))
    spec.workers = 4
    spec.cpu_per_worker = "2"
    manifest = build_manifest(spec)
    expected = copy.deepcopy(original)
    expected["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 4
    worker = expected["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    worker["resources"] = {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "2"}}
    assert manifest == expected
    # everything the model does not know is still there
    assert worker["command"] == ["/usr/sbin/sshd"] and worker["securityContext"]


def test_editing_the_command_of_a_launcher_that_used_args():
    spec = read_manifest(load(EXAMPLES / "pi/pi-intel.yaml"))
    spec.command = ["mpirun", "-n", "4", "/home/mpiuser/pi"]
    launcher = build_manifest(spec)["spec"]["mpiReplicaSpecs"]["Launcher"]
    container = launcher["template"]["spec"]["containers"][0]
    assert container["command"] == ["mpirun", "-n", "4", "/home/mpiuser/pi"]
    assert "args" not in container
    assert container["imagePullPolicy"] == "Always"


def test_editing_env_and_volumes_keeps_other_volumes_and_writes_both_templates():
    base = build_manifest(full_spec())
    for role in ("Launcher", "Worker"):
        pod = base["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]
        pod["volumes"].append({"name": "shm", "emptyDir": {"medium": "Memory"}})
        pod["containers"][0]["volumeMounts"].append({"name": "shm", "mountPath": "/dev/shm"})
    spec = read_manifest(base)
    assert [v.claim_name for v in spec.volumes] == ["datasets", "checkpoints"]
    spec.volumes = [PVCVolume("datasets", "/datasets")]
    spec.env = [EnvVar("OMP_NUM_THREADS", "4")]
    manifest = build_manifest(spec)
    for role in ("Launcher", "Worker"):
        pod = manifest["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]
        assert [v["name"] for v in pod["volumes"]] == ["shm", "pvc-datasets"]
        assert pod["containers"][0]["volumeMounts"] == [
            {"name": "shm", "mountPath": "/dev/shm"},
            {"name": "pvc-datasets", "mountPath": "/datasets"}]
        assert pod["containers"][0]["env"] == [{"name": "OMP_NUM_THREADS", "value": "4"}]
    assert read_manifest(manifest) == spec


def test_turning_settings_off_on_a_base_removes_them():
    spec = read_manifest(build_manifest(full_spec()))
    spec.gpus_per_worker = 0
    spec.slots_per_worker = None
    spec.disable_sidecar_injection = False
    spec.queue_name = ""
    spec.tolerations = []
    spec.backoff_limit = None
    manifest = build_manifest(spec)
    worker = manifest["spec"]["mpiReplicaSpecs"]["Worker"]
    assert "nvidia.com/gpu" not in worker["template"]["spec"]["containers"][0]["resources"][
        "limits"]
    assert manifest["spec"]["slotsPerWorker"] == 1
    assert "metadata" not in worker["template"]
    assert manifest["metadata"]["labels"] == {"team": "nlp"}
    assert "tolerations" not in worker["template"]["spec"]
    assert "backoffLimit" not in manifest["spec"]["runPolicy"]
    assert read_manifest(manifest) == spec


def test_a_base_without_workers_gets_a_whole_worker_spec_when_workers_are_added():
    base = build_manifest(full_spec())
    del base["spec"]["mpiReplicaSpecs"]["Worker"]
    spec = read_manifest(base)
    assert spec.workers == 0
    spec.workers = 2
    spec.gpus_per_worker = 1
    spec.worker_image = ""
    worker = build_manifest(spec)["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2
    container = worker["template"]["spec"]["containers"][0]
    assert container["image"] == spec.image
    assert container["env"][0] == {"name": "NCCL_DEBUG", "value": "INFO"}


def test_read_rejects_what_is_not_a_v2beta1_mpijob():
    with pytest.raises(ManifestError, match="expected kind MPIJob"):
        read_manifest({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob"})
    with pytest.raises(ManifestError):
        read_manifest(["not", "a", "mapping"])  # type: ignore[arg-type]


def test_read_tolerates_odd_values_without_crashing():
    spec = read_manifest({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                          "metadata": None, "spec": {"mpiReplicaSpecs": {
                              "Launcher": {"template": {"spec": {"containers": "x"}}},
                              "Worker": {"replicas": "3"}}}})
    assert spec.workers == 3 and spec.image == "" and spec.command == []


def test_manifest_yaml_is_ordered_readable_and_safe():
    text = manifest_yaml(build_manifest(SPECS["one-worker"]))
    assert text.startswith("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n")
    assert "- |\n" in text  # a multi-line script is a literal block
    assert "!!python" not in text
    assert yaml.safe_load(text) == build_manifest(SPECS["one-worker"])
    assert manifest_yaml(build_manifest(SPECS["one-worker"])) == text  # stable


LIVE_JOB = {
    "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
    "metadata": {
        "name": "resnet-horovod", "namespace": "team-nlp", "uid": "8c1d-42",
        "resourceVersion": "4711", "generation": 2,
        "creationTimestamp": "2024-05-01T10:00:00Z",
        "labels": {"kueue.x-k8s.io/queue-name": "team-nlp-queue"},
        "annotations": {"opendatahub.io/username": "alice",
                        "kubectl.kubernetes.io/last-applied-configuration": "{}"},
        "managedFields": [{"manager": "kubectl"}],
    },
    "spec": {
        "slotsPerWorker": 1, "sshAuthMountPath": "/home/mpiuser/.ssh",
        "runPolicy": {"cleanPodPolicy": "Running", "suspend": True},
        "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "l", "image": "img", "command": ["mpirun", "x"]}]}}},
            "Worker": {"replicas": 2, "template": {"spec": {
                "containers": [{"name": "w", "image": "img"}],
                "affinity": {"podAntiAffinity": {}}}}},
        },
    },
    "status": {"conditions": [{"type": "Created", "status": "True"}]},
}


def test_clone_gets_a_new_name_and_loses_what_the_cluster_wrote():
    original = read_manifest(copy.deepcopy(LIVE_JOB))
    clone = clone_spec(original, "resnet-horovod-x7k2p")
    manifest = build_manifest(clone)
    meta = manifest["metadata"]
    assert meta["name"] == "resnet-horovod-x7k2p" and meta["namespace"] == "team-nlp"
    for key in ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"):
        assert key not in meta
    assert "status" not in manifest
    assert "annotations" not in meta  # creator and last-applied are not copied
    assert meta["labels"] == {"kueue.x-k8s.io/queue-name": "team-nlp-queue"}
    assert "suspend" not in manifest["spec"]["runPolicy"]
    # what the model does not know survives the clone
    assert manifest["spec"]["sshAuthMountPath"] == "/home/mpiuser/.ssh"
    assert manifest["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["affinity"]
    # the original is untouched
    assert original.base["metadata"]["uid"] == "8c1d-42" and original.name == "resnet-horovod"
    assert clone == dataclasses.replace(original, name="resnet-horovod-x7k2p", created_by="",
                                        annotations={})


def test_clone_of_a_spec_without_base():
    clone = clone_spec(full_spec(), "copy")
    assert clone.name == "copy" and clone.base is None and clone.created_by == ""


def test_fresh_name_keeps_room_for_the_pod_suffixes():
    assert fresh_name("pi", "x7k2p") == "pi-x7k2p"
    long = "a" * 60
    name = fresh_name(long, "x7k2p")
    assert name.endswith("-x7k2p") and len(name) == max_job_name_length() == 53
    assert is_dns1035_label(f"{name}-worker-99") and is_dns1035_label(f"{name}-launcher")
    assert fresh_name("ab-" + "c" * 60, "s", workers=2) == "ab-" + "c" * 49 + "-s"
    assert not fresh_name("a" * 47 + "-" * 5 + "b", "zz").count("--")


def test_max_job_name_length_depends_on_the_number_of_workers():
    assert max_job_name_length(1) == 54  # "-launcher" is the longest suffix
    assert max_job_name_length(10) == 54
    assert max_job_name_length(11) == 53
    assert max_job_name_length(1000) == 52


# --- properties -------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_names = st.from_regex(r"[a-z]([-a-z0-9]{0,12}[a-z0-9])?", fullmatch=True)
_text = st.text(max_size=8)
_specs = st.builds(
    MPIJobSpec,
    name=st.one_of(st.just(""), _names), namespace=st.one_of(st.just(""), _names),
    image=_text, command=st.lists(_text, max_size=4), workers=st.integers(0, 100),
    cpu_per_worker=st.sampled_from(["", "1", "500m", "8", "0.5", 2, None]),
    memory_per_worker=st.sampled_from(["", "2Gi", "512Mi", "1.5Gi", "16G"]),
    gpus_per_worker=st.integers(0, 8),
    launcher_cpu=st.sampled_from(["", "1", "250m"]),
    launcher_memory=st.sampled_from(["", "1Gi", "2Gi"]),
    slots_per_worker=st.one_of(st.none(), st.integers(1, 8)),
    mpi_implementation=st.sampled_from(["OpenMPI", "Intel", "MPICH"]),
    env=st.lists(st.builds(EnvVar, name=_names, value=_text), max_size=3),
    volumes=st.lists(st.builds(PVCVolume, claim_name=_names, mount_path=_text,
                               read_only=st.booleans(), sub_path=_text),
                     max_size=3, unique_by=lambda v: v.name),
    node_selector=st.dictionaries(_text, _text, max_size=2),
    tolerations=st.lists(st.builds(Toleration, key=_text,
                                   operator=st.sampled_from(["Equal", "Exists"]),
                                   value=_text, effect=st.sampled_from(["", "NoSchedule"]),
                                   seconds=st.one_of(st.none(), st.integers(0, 600))),
                         max_size=2),
    priority_class=_text, queue_name=_text,
    clean_pod_policy=st.sampled_from(["Running", "All", "None"]),
    ttl_seconds_after_finished=st.one_of(st.none(), st.integers(0, 10**6)),
    backoff_limit=st.one_of(st.none(), st.integers(0, 10)),
    launcher_creation_policy=st.sampled_from(["AtStartup", "WaitForWorkersReady"]),
    disable_sidecar_injection=st.booleans(),
    labels=st.dictionaries(_text, _text, max_size=2),
    annotations=st.dictionaries(_text, _text, max_size=2),
    created_by=_text, worker_image=_text,
)
_examples = st.sampled_from([load(p) for p in EXAMPLE_FILES])
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["replicas", "template", "spec", "containers", "image", "command",
                         "args", "env", "resources", "limits", "requests", "cpu", "volumes",
                         "volumeMounts", "name", "persistentVolumeClaim", "metadata",
                         "annotations", "nodeSelector", "tolerations", "x"]),
        inner, max_size=4),
    max_leaves=25)
_junk = st.fixed_dictionaries({
    "apiVersion": st.just("kubeflow.org/v2beta1"), "kind": st.just("MPIJob"),
    "metadata": _json,
    "spec": st.fixed_dictionaries({"mpiReplicaSpecs": st.fixed_dictionaries(
        {"Launcher": _json, "Worker": _json}), "runPolicy": _json, "slotsPerWorker": _json}),
})
_settings = settings(max_examples=150, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(_specs)
def test_property_any_spec_survives_build_then_read(spec):
    assert read_manifest(build_manifest(spec)) == spec


@_settings
@given(_specs, _specs)
def test_property_editing_a_built_manifest_gives_the_edited_spec(before, after):
    edited = dataclasses.replace(after, base=build_manifest(before))
    assert read_manifest(build_manifest(edited)) == after


@_settings
@given(_examples, _specs)
def test_property_editing_an_upstream_example_gives_the_edited_spec(example, after):
    edited = dataclasses.replace(after, base=example)
    manifest = build_manifest(edited)
    assert read_manifest(manifest) == after
    assert manifest["spec"].get("sshAuthMountPath") == example["spec"].get("sshAuthMountPath")


@_settings
@given(_junk, _specs)
def test_property_odd_manifests_read_and_rebuild_without_error(junk, after):
    spec = read_manifest(junk)
    assert build_manifest(spec) == junk
    build_manifest(dataclasses.replace(after, base=junk))  # an edit never raises


def test_digits_that_are_not_decimal_numbers_read_as_absent():
    # "²" is a digit to str.isdigit, not a number to int(): found by the property above
    junk = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": None,
            "spec": {"slotsPerWorker": "²", "mpiReplicaSpecs": {"Worker": {"replicas": "³"}}}}
    spec = read_manifest(junk)
    assert spec.slots_per_worker is None and spec.workers == 0
    assert build_manifest(spec) == junk
