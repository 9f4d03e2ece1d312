"""Validation of an MPIJobSpec: every rule, and every message saying what to do."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odh.training import MPIJobSpec
from odh.training.findings import by_field, errors_of, warnings_of
from odh.training.spec import EnvVar, PVCVolume, Toleration, read_manifest
from odh.training.validation import FieldError, ValidationContext, validate_spec


def good(**changes) -> MPIJobSpec:
    spec = MPIJobSpec(name="bert-finetune", namespace="team-nlp",
                      image="quay.io/team-nlp/bert:1.0",
                      command=["mpirun", "python", "train.py"], workers=4,
                      cpu_per_worker="8", memory_per_worker="32Gi", gpus_per_worker=2,
                      launcher_cpu="2", launcher_memory="8Gi")
    return dataclasses.replace(spec, **changes)


def messages(spec: MPIJobSpec, context: ValidationContext | None = None,
             severity: str | None = None) -> dict[str, list[str]]:
    found = validate_spec(spec, context)
    if severity:
        found = [f for f in found if f.severity == severity]
    return {name: [f.message for f in items] for name, items in by_field(found).items()}


def only(spec: MPIJobSpec, field: str, context: ValidationContext | None = None) -> str:
    found = messages(spec, context)
    assert list(found) == [field], found
    assert len(found[field]) == 1, found
    return found[field][0]


def test_a_good_spec_has_nothing_to_say():
    assert validate_spec(good()) == []
    assert validate_spec(good(), ValidationContext(existing_names={"other"})) == []


def test_field_error_severity_defaults_to_error():
    assert FieldError("name", "x").severity == "error"
    assert FieldError("name", "x").is_error
    assert not FieldError("name", "x", "warning").is_error


def test_errors_and_warnings_can_be_told_apart():
    found = validate_spec(good(slots_per_worker=4, command=["mpirun", "python", "t.py"],
                               name="Bad_Name"))
    assert [f.field for f in errors_of(found)] == ["name"]
    assert [f.field for f in warnings_of(found)] == ["slots_per_worker"]


# --- name -----------------------------------------------------------------------------------

def test_job_name_with_capitals_and_underscore_says_how_to_write_one():
    assert only(good(name="My_Job"), "name") == (
        'Job name "My_Job" is not valid: use lower-case letters, digits and "-", starting with '
        'a letter (for example "bert-finetune").')


@pytest.mark.parametrize("name", ["1job", "-job", "job.v1", "jöb", "job name", "<b>x</b>"])
def test_job_names_that_are_not_dns_1035_labels(name):
    assert "is not valid: use lower-case letters" in only(good(name=name), "name")


def test_a_name_ending_in_a_hyphen():
    assert only(good(name="bert-"), "name") == (
        'Job name "bert-" is not valid: it must end with a letter or digit, not "-".')


def test_an_empty_name_asks_for_one():
    assert only(good(name=""), "name") == 'Enter a job name, for example "bert-finetune".'


def test_the_name_leaves_room_for_the_last_worker_suffix():
    assert only(good(name="a" * 54, workers=100), "name") == (
        'The name is too long: at most 53 characters leave room for the "-worker-99" suffix '
        "the Workers get.")
    assert validate_spec(good(name="a" * 53, workers=100)) == []


def test_with_few_workers_the_launcher_suffix_is_what_bounds_the_name():
    # "-launcher" and "-worker-3" are both 9 characters: 54 is the longest name.
    assert validate_spec(good(name="a" * 54, workers=4)) == []
    assert "at most 54 characters" in only(good(name="a" * 55, workers=4), "name")


def test_a_name_already_taken_in_the_project():
    context = ValidationContext(existing_names={"bert"})
    assert only(good(name="bert"), "name", context) == (
        'A job called "bert" already exists in team-nlp: choose another name.')


def test_a_very_long_name_is_shortened_in_the_message():
    message = only(good(name="A" * 5000), "name")
    assert len(message) < 300


# --- project ----------------------------------------------------------------------------------

def test_the_project_is_required_and_must_be_a_namespace_name():
    assert only(good(namespace=""), "namespace") == "Choose the project to run the job in."
    assert "is not a valid project name" in only(good(namespace="Team NLP"), "namespace")


# --- image ------------------------------------------------------------------------------------

@pytest.mark.parametrize("image", [
    "docker.io/horovod/horovod:0.28.1", "horovod/horovod:0.28.1", "ubuntu:22.04",
    "localhost:5000/train:1", "quay.io/a/b/c:v1.2-rc_3",
    "quay.io/team/train@sha256:" + "a" * 64, "quay.io/team/train:1.0@sha256:" + "0" * 64,
    "[::1]:5000/train:1", "registry.example.com:443/x__y/z-z:latest",
])
def test_valid_image_references(image):
    assert validate_spec(good(image=image)) == []


@pytest.mark.parametrize(("image", "expected"), [
    ("", 'Enter the training image, for example "quay.io/my-team/train:1.0".'),
    ("quay.io/team/train :1", 'The image reference "quay.io/team/train :1" contains spaces: '
                              "remove them."),
    ("https://quay.io/team/train:1", 'Leave out "https://": an image reference starts with '
                                     'the registry host, for example "quay.io/my-team/train:1.0".'),
    ("quay.io/Team/Train:1", 'Image repository names are lower case: use '
                             '"quay.io/team/train".'),
    ("quay.io/team/train:", 'The image reference ends with ":" but has no tag: add one (for '
                            'example ":1.0") or remove the ":".'),
    ("quay.io/team/train:-1", 'The image tag "-1" is not valid: use up to 128 letters, '
                              'digits, "_", "." and "-", starting with a letter, digit or "_".'),
    ("quay.io/team/train@sha256:abc", 'The image digest "sha256:abc" is not valid: write it as '
                                      '"sha256:" followed by 64 hexadecimal digits.'),
    ("quay.io//train:1", '"quay.io//train:1" is not a valid image reference: write '
                         'registry/repository:tag, for example "quay.io/my-team/train:1.0".'),
])
def test_image_reference_mistakes(image, expected):
    assert only(good(image=image), "image") == expected


def test_an_image_without_a_tag_is_a_warning():
    found = validate_spec(good(image="quay.io/team/train"))
    assert found == [FieldError("image", 'No tag is given, so the image tagged "latest" is '
                                         "pulled, which can change between runs: add a tag (for "
                                         'example "quay.io/team/train:1.0").', "warning")]


def test_a_separate_worker_image_is_checked_too():
    assert "contains spaces" in only(good(worker_image="a b"), "worker_image")


def test_a_tag_longer_than_128_characters():
    assert "is not valid" in only(good(image="train:" + "a" * 129), "image")


def test_a_repository_name_longer_than_255_characters():
    assert "longer than 255" in only(good(image="a" * 256 + ":1"), "image")


# --- command ----------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [[""], ["  "], ["", "python"]])
def test_a_command_that_starts_with_an_empty_word_is_refused(command):
    assert only(good(command=command), "command").startswith(
        "The command starts with an empty word: write the program the Launcher runs first")


def test_no_command_runs_the_image_s_entrypoint():
    """As the MPI Operator runs a Launcher whose container names no command (issue 26)."""
    assert not [f for f in validate_spec(good(command=[])) if f.field == "command"]


def test_an_np_that_does_not_match_workers_and_slots_is_a_warning_on_the_workers():
    """Said where Workers are chosen (not on the command's step, before they are), with
    both ways to make them agree."""
    found = validate_spec(good(command=["mpirun", "-np", "4", "python", "train.py"]))
    assert found == [FieldError("workers", (
        "The command starts 4 MPI ranks (-np 4) but 4 workers x 2 slots give 8: change -np to "
        "8 (or leave it out, so mpirun starts one rank per slot), or choose 2 workers."),
        "warning")]
    found = validate_spec(good(command=["mpirun", "-np", "12", "python", "train.py"],
                               slots_per_worker=8))
    assert found[0].message.endswith("or choose 3 slots per worker.")


def test_horovodrun_needs_its_np_so_the_advice_is_to_change_it():
    message = only(good(command=["horovodrun", "-np", "2", "python", "t.py"]), "workers")
    assert message.endswith("change -np to 8, or choose 1 worker.")


@pytest.mark.parametrize("command", [
    ["mpirun", "python", "train.py"],
    ["mpirun", "-n", "8", "/home/mpiuser/pi"],
    ["mpirun", "--np=8", "python", "train.py"],
    ["sh", "-c", "mpirun -np 8 python train.py"],
    ["mpirun", "python", "train.py", "-n", "3"],  # -n after the program is the script's
    ["python", "train.py", "-np", "3"],
])
def test_commands_whose_process_count_matches_or_is_not_stated(command):
    assert validate_spec(good(command=command)) == []


# --- workers and resources ------------------------------------------------------------------

@pytest.mark.parametrize("workers", [0, -1, 101, 10**12])
def test_workers_from_1_to_100(workers):
    assert only(good(workers=workers, command=["mpirun", "python", "t.py"]), "workers") == (
        f"Number of workers must be a whole number from 1 to 100 (you entered {workers}).")


def test_a_memory_amount_in_the_wrong_unit_gets_the_quantity_message():
    assert only(good(memory_per_worker="16GB"), "memory_per_worker") == (
        '"16GB" is not a Kubernetes quantity: use a number with an optional suffix such as 500m, '
        "2, 16Gi or 512Mi (did you mean 16Gi?)")


@pytest.mark.parametrize("field", ["cpu_per_worker", "launcher_cpu"])
@pytest.mark.parametrize("value", ["0", "-1", "-500m"])
def test_cpu_must_be_more_than_zero(field, value):
    assert "must be more than 0: enter an amount such as 4 or 500m." in only(
        good(**{field: value}), field)


@pytest.mark.parametrize("field", ["memory_per_worker", "launcher_memory"])
def test_memory_must_be_more_than_zero(field):
    assert "must be more than 0: enter an amount such as 16Gi or 512Mi." in only(
        good(**{field: "0"}), field)


def test_cpu_below_a_millicore():
    assert only(good(cpu_per_worker="0.0001"), "cpu_per_worker") == (
        "CPUs per worker is less than 1m (a thousandth of a CPU), the smallest amount "
        "Kubernetes gives: use at least 1m.")


def test_memory_without_a_unit_is_bytes_and_the_message_says_so():
    assert only(good(memory_per_worker="16"), "memory_per_worker") == (
        'Memory per worker "16" is only 16 bytes, too little to start a container: add a unit '
        "(did you mean 16Gi?).")
    assert only(good(launcher_memory="1Ki"), "launcher_memory") == (
        "Launcher memory (1Ki) is too little to start a container: use at least 4Mi.")


def test_huge_quantities_are_refused_with_the_quantity_message():
    assert "too large for a Kubernetes quantity" in only(
        good(cpu_per_worker="1e30"), "cpu_per_worker")


@pytest.mark.parametrize("field", ["cpu_per_worker", "memory_per_worker", "launcher_cpu",
                                   "launcher_memory"])
def test_an_empty_amount_is_a_warning_that_says_what_happens(field):
    found = validate_spec(good(**{field: ""}))
    assert [(f.field, f.severity) for f in found] == [(field, "warning")]
    assert "is empty, so the pod gets no guaranteed" in found[0].message


@pytest.mark.parametrize("gpus", [-1, 17, 1000])
def test_gpus_are_a_whole_number_up_to_16(gpus):
    found = messages(good(gpus_per_worker=gpus, command=["mpirun", "python", "t.py"]),
                     severity="error")
    assert found == {"gpus_per_worker": [
        f"GPUs per worker must be a whole number from 0 to 16 (you entered {gpus})."]}


# --- slots ------------------------------------------------------------------------------------

def test_more_slots_than_gpus_is_a_warning_with_the_reason():
    found = validate_spec(good(slots_per_worker=4, command=["mpirun", "python", "t.py"]))
    assert found == [FieldError("slots_per_worker", (
        "Slots per worker (4) is more than GPUs per worker (2): each slot runs one MPI rank; "
        "with GPUs use one slot per GPU."), "warning")]


def test_fewer_slots_than_gpus_leaves_gpus_idle():
    found = validate_spec(good(gpus_per_worker=4, slots_per_worker=1,
                               command=["mpirun", "python", "t.py"]))
    assert [(f.field, f.severity) for f in found] == [("slots_per_worker", "warning")]
    assert "3 GPUs on each Worker stay idle" in found[0].message


def test_more_slots_than_cpus_on_a_cpu_job():
    found = validate_spec(good(gpus_per_worker=0, cpu_per_worker="4", slots_per_worker=8,
                               command=["mpirun", "python", "t.py"]))
    assert [(f.field, f.severity) for f in found] == [("slots_per_worker", "warning")]
    assert found[0].message.startswith("Slots per worker (8) is more than CPUs per worker (4)")


def test_a_trainjobs_processes_per_node_are_told_in_its_words():
    from odh.training.kinds import kind_for_slug
    trainjob = kind_for_slug("trainjob")
    cpu_job = trainjob.new_spec(name="pi", namespace="team-nlp", image="quay.io/a/b:1",
                                workers=2, cpu_per_worker="1", slots_per_worker=2)
    (found,) = [f for f in validate_spec(cpu_job) if f.field == "slots_per_worker"]
    assert found.message.startswith("Processes per node (2) is more than CPUs per node (1)")
    gpu_job = dataclasses.replace(cpu_job, cpu_per_worker="8", gpus_per_worker=4)
    (found,) = [f for f in validate_spec(gpu_job) if f.field == "slots_per_worker"]
    assert "2 GPUs on each node stay idle" in found.message
    assert "worker" not in found.message.lower()


@pytest.mark.parametrize("slots", [0, -1, 5000])
def test_slots_must_be_at_least_one(slots):
    assert only(good(slots_per_worker=slots, command=["mpirun", "python", "t.py"]),
                "slots_per_worker") == (
        "Slots per worker must be a whole number from 1 to 1024: each slot runs one MPI rank.")


# --- what the MPI Operator accepts ------------------------------------------------------------

def test_mpi_implementation_clean_pod_policy_and_launcher_creation_policy_enums():
    spec = good(mpi_implementation="MVAPICH", clean_pod_policy="Always",
                launcher_creation_policy="Later")
    assert messages(spec) == {
        "mpi_implementation": ['MPI implementation "MVAPICH" is not supported: choose OpenMPI, '
                               "Intel or MPICH."],
        "clean_pod_policy": ['Clean-pod policy "Always" is not supported: choose None, Running '
                             "or All."],
        "launcher_creation_policy": ['Launcher creation policy "Later" is not supported: choose '
                                     "AtStartup or WaitForWorkersReady."],
    }


@pytest.mark.parametrize("policy", ["None", "Running", "All"])
def test_every_clean_pod_policy_the_operator_knows(policy):
    assert validate_spec(good(clean_pod_policy=policy)) == []


@pytest.mark.parametrize(("field", "value"), [
    ("ttl_seconds_after_finished", -1), ("backoff_limit", -1),
    ("ttl_seconds_after_finished", 2**31), ("backoff_limit", 2**40),
])
def test_ttl_and_backoff_are_zero_or_more(field, value):
    message = only(good(**{field: value}), field)
    assert "whole number" in message and "or empty" in message


def test_ttl_and_backoff_of_zero_are_fine():
    assert validate_spec(good(ttl_seconds_after_finished=0, backoff_limit=0)) == []


def _manifest_spec(**patch) -> MPIJobSpec:
    manifest = {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": "bert", "namespace": "team-nlp"},
        "spec": {"mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "l", "image": "quay.io/a/b:1", "command": ["mpirun", "x"],
                 "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}},
            "Worker": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "w", "image": "quay.io/a/b:1",
                 "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}}}},
    }
    for path, value in patch.items():
        node = manifest["spec"]
        keys = path.split(".")
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
    return read_manifest(manifest)


def test_a_clean_cloned_manifest_is_fine():
    assert validate_spec(_manifest_spec()) == []


@pytest.mark.parametrize(("patch", "expected"), [
    ({"mpiReplicaSpecs.Launcher.replicas": 2},
     "The Launcher must have exactly 1 replica (the manifest says 2): set "
     "spec.mpiReplicaSpecs.Launcher.replicas to 1."),
    ({"mpiReplicaSpecs.Worker.restartPolicy": "Always"},
     'The Worker restart policy "Always" is not allowed: the MPI Operator accepts Never or '
     "OnFailure."),
    ({"sshAuthMountPath": ""},
     "spec.sshAuthMountPath is empty: remove it to use /root/.ssh, or give the path of the SSH "
     "keys."),
    ({"runPolicy.managedBy": "someone/else"},
     'spec.runPolicy.managedBy "someone/else" is not supported: remove it, or use '
     "kubeflow.org/mpi-operator or kueue.x-k8s.io/multikueue."),
])
def test_what_only_a_manifest_can_get_wrong(patch, expected):
    assert only(_manifest_spec(**patch), "manifest") == expected


def test_a_manifest_template_without_containers():
    spec = _manifest_spec(**{"mpiReplicaSpecs.Worker.template": {"spec": {"containers": []}}})
    spec.base["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = []
    found = [f for f in validate_spec(spec) if f.field == "manifest"]
    assert [f.message for f in found] == [
        "The Worker pod template has no containers: add one."]


# --- environment ------------------------------------------------------------------------------

def test_environment_variable_names():
    spec = good(env=[EnvVar("GOOD", "1"), EnvVar("MY-VAR", "x"), EnvVar("", "x"),
                     EnvVar("GOOD", "2"), EnvVar("9LIVES", "x"), EnvVar("ÄÖ", "x")])
    assert messages(spec) == {
        "env[1].name": ['Environment variable name "MY-VAR" is not valid: use letters, digits '
                        'and "_", not starting with a digit (for example "MY_VAR").'],
        "env[2].name": ["Enter a name for environment variable 3, or remove it."],
        "env[3].name": ['Environment variable "GOOD" is set twice: keep one.'],
        "env[4].name": ['Environment variable name "9LIVES" is not valid: use letters, digits '
                        'and "_", not starting with a digit.'],
        "env[5].name": ['Environment variable name "ÄÖ" is not valid: use letters, digits and '
                        '"_", not starting with a digit.'],
    }


def test_variables_the_operator_sets_are_a_warning():
    found = validate_spec(good(env=[EnvVar("K_MPI_JOB_ROLE", "worker")]))
    assert found == [FieldError("env[0].name", "K_MPI_JOB_ROLE is set by the MPI Operator, "
                                               "which overrides this value: remove it.",
                                "warning")]


def test_env_from_a_secret_is_fine():
    env = EnvVar("TOKEN", value_from={"secretKeyRef": {"name": "s", "key": "k"}})
    assert validate_spec(good(env=[env])) == []


# --- volumes ----------------------------------------------------------------------------------

def test_volumes_must_name_existing_claims_when_the_claims_are_known():
    spec = good(volumes=[PVCVolume("data", "/data"), PVCVolume("ckpt", "/ckpt")])
    context = ValidationContext(pvc_names={"data", "models"})
    assert messages(spec, context) == {"volumes[1].claim_name": [
        'No volume claim called "ckpt" exists in team-nlp: choose one of data, models.']}
    assert validate_spec(spec) == []  # claims unknown: nothing said


def test_a_project_without_claims():
    context = ValidationContext(pvc_names=set())
    assert only(good(volumes=[PVCVolume("data", "/data")]), "volumes[0].claim_name",
                context) == ('No volume claim called "data" exists in team-nlp, which has '
                             "none: create the claim first, or remove this volume.")


def test_mount_paths_are_absolute_unique_and_not_the_operators():
    spec = good(volumes=[PVCVolume("a", "data"), PVCVolume("b", "/data"),
                         PVCVolume("c", "/data/"), PVCVolume("d", "/etc/mpi"),
                         PVCVolume("e", "/root/.ssh"), PVCVolume("f", "/"),
                         PVCVolume("g", "")])
    assert messages(spec) == {
        "volumes[0].mount_path": ['Mount path "data" is not absolute: start it with "/" (for '
                                  'example "/data").'],
        "volumes[2].mount_path": ["Another volume is already mounted at /data/: give each "
                                  "volume its own mount path."],
        "volumes[3].mount_path": ["/etc/mpi is where the MPI Operator puts the hostfile: "
                                  "choose another mount path."],
        "volumes[4].mount_path": ["/root/.ssh is where the MPI Operator puts the SSH keys: "
                                  "choose another mount path."],
        "volumes[5].mount_path": ['Mounting at "/" would hide the whole image: choose a folder '
                                  'such as "/data".'],
        "volumes[6].mount_path": ['Enter where to mount the volume, for example "/data".'],
    }


def test_the_ssh_path_of_a_manifest_is_reserved_instead():
    spec = _manifest_spec(sshAuthMountPath="/home/mpiuser/.ssh")
    spec.volumes = [PVCVolume("data", "/home/mpiuser/.ssh"), PVCVolume("other", "/root/.ssh")]
    assert list(messages(spec)) == ["volumes[0].mount_path"]


def test_claim_names_sub_paths_and_the_same_claim_twice():
    spec = good(volumes=[PVCVolume("", "/a"), PVCVolume("Bad_Claim", "/b"),
                         PVCVolume("data", "/c", sub_path="../etc"),
                         PVCVolume("data", "/d", sub_path="/abs"),
                         PVCVolume("data", "/e", sub_path="ok/sub")])
    found = messages(spec)
    assert found["volumes[0].claim_name"] == [
        "Choose the volume claim to mount, or remove this volume."]
    assert found["volumes[1].claim_name"] == [
        'Volume claim "Bad_Claim" is not a valid claim name: use lower-case letters, digits, '
        '"-" and ".".']
    assert found["volumes[2].sub_path"] == [
        'Sub-path "../etc" must be a relative path without "..", for example '
        '"datasets/imagenet".']
    assert "volumes[3].sub_path" in found
    assert found["volumes[3].claim_name"] == [
        'The claim "data" is already mounted by another volume: mount it once and use a '
        "sub-path to reach a folder inside it."]
    assert "volumes[4].sub_path" not in found


def test_two_mounts_of_one_claim_under_different_volume_names_are_fine():
    spec = good(volumes=[PVCVolume("data", "/a", name="data-a"),
                         PVCVolume("data", "/b", name="data-b")])
    assert validate_spec(spec) == []


def test_a_volume_name_that_is_not_a_label():
    found = messages(good(volumes=[PVCVolume("data", "/a", name="Data_A")]))
    assert found == {"volumes[0].name": [
        'Volume name "Data_A" is not valid: use lower-case letters, digits and "-", at most 63 '
        "characters."]}


# --- placement --------------------------------------------------------------------------------

def test_node_selector_keys_and_values():
    spec = good(node_selector={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
                               "bad key": "x", "gpu": "has space", "Example.COM/x": "y"})
    assert messages(spec) == {"node_selector": [
        'Node selector key "bad key" is not valid: use letters, digits, "-", "_" and ".", '
        "starting and ending with a letter or digit.",
        'Node selector value "has space" (for gpu) is not valid: use letters, digits, "-", "_" '
        'and ".", starting and ending with a letter or digit.',
        'Node selector key "Example.COM/x" is not valid: the prefix before "/" must be a DNS '
        'name in lower case, such as "example.com".',
    ]}


def test_tolerations():
    spec = good(tolerations=[
        Toleration("nvidia.com/gpu", "Exists", effect="NoSchedule"),
        Toleration("", "Exists"),
        Toleration("dedicated", "Equal", "ml", "NoExecute", 60),
        Toleration("x", "In", "a"),
        Toleration("x", "Exists", "a"),
        Toleration("", "Equal", "a"),
        Toleration("x", "Equal", "a", "Sometimes"),
        Toleration("x", "Equal", "a", "NoSchedule", 30),
        Toleration("bad key", "Equal", "bad value"),
    ])
    assert messages(spec) == {
        "tolerations[3].operator": ['Toleration operator "In" is not supported: choose Equal or '
                                    "Exists."],
        "tolerations[4].value": ["A toleration with operator Exists matches any value: leave "
                                 "Value empty."],
        "tolerations[5].key": ["Enter the taint key to tolerate, or choose the Exists operator "
                               "to tolerate every taint."],
        "tolerations[6].effect": ['Toleration effect "Sometimes" is not supported: choose '
                                  "NoSchedule, PreferNoSchedule or NoExecute, or leave it empty "
                                  "for every effect."],
        "tolerations[7].seconds": ["Toleration seconds only apply to the NoExecute effect, as a "
                                   "whole number: set Effect to NoExecute or clear the "
                                   "seconds."],
        "tolerations[8].key": ['Toleration key "bad key" is not valid: use letters, digits, '
                               '"-", "_" and ".", starting and ending with a letter or digit.'],
        "tolerations[8].value": ['Toleration value "bad value" is not valid: use letters, '
                                 'digits, "-", "_" and ".", starting and ending with a letter '
                                 "or digit."],
    }


def test_priority_class_must_exist_when_the_classes_are_known():
    context = ValidationContext(priority_classes={"high", "low"})
    assert only(good(priority_class="urgent"), "priority_class", context) == (
        'Priority class "urgent" does not exist: choose one of high, low, or leave it empty.')
    assert validate_spec(good(priority_class="high"), context) == []
    assert validate_spec(good(priority_class="urgent")) == []
    assert "this cluster has none" in only(good(priority_class="urgent"), "priority_class",
                                           ValidationContext(priority_classes=set()))
    assert "is not a valid name" in only(good(priority_class="Urgent!"), "priority_class")


def test_queue_must_exist_when_local_queues_are_known():
    context = ValidationContext(local_queues={"team-nlp-queue"})
    assert only(good(queue_name="gpu"), "queue_name", context) == (
        'No Kueue queue called "gpu" exists in team-nlp: choose one of team-nlp-queue, or leave '
        "it empty.")
    assert validate_spec(good(queue_name="team-nlp-queue"), context) == []
    assert "which has none" in only(good(queue_name="gpu"), "queue_name",
                                    ValidationContext(local_queues=set()))
    assert "is not valid" in only(good(queue_name="a queue"), "queue_name")


def test_choices_are_cut_short_when_there_are_many():
    context = ValidationContext(pvc_names={f"claim-{i}" for i in range(9)})
    message = only(good(volumes=[PVCVolume("x", "/x")]), "volumes[0].claim_name", context)
    assert message.endswith("claim-0, claim-1, claim-2, claim-3, claim-4, ....")


# --- labels and annotations -------------------------------------------------------------------

def test_labels_and_annotations_follow_kubernetes_rules():
    spec = good(labels={"team": "nlp", "app.kubernetes.io/part-of": "bert", "a/b/c": "x",
                        "": "x", "x" * 64: "y", "ok": "v" * 64},
                annotations={"note": "any text at all, even <b>this</b>", "/x": "y"})
    found = messages(spec)
    assert found["labels"] == [
        'Label key "a/b/c" is not valid: the prefix before "/" must be a DNS name in lower case, '
        'such as "example.com".',
        "Enter a key for each entry, or remove the empty one.",
        f'Label key "{"x" * 37}..." is not valid: the name part is longer than 63 characters.',
        f'Label value "{"v" * 37}..." (for ok) is not valid: a label value is at most 63 '
        "characters.",
    ]
    assert found["annotations"] == [
        'Annotation key "/x" is not valid: the prefix before "/" is empty.']


def test_annotations_larger_than_256_kib():
    spec = good(annotations={"big": "x" * (256 * 1024)})
    assert only(spec, "annotations") == (
        "The annotations are larger than 256 KiB in total: shorten them.")


# --- LimitRanges ------------------------------------------------------------------------------

def limit_range(**limits) -> dict:
    return {"metadata": {"name": "limits", "namespace": "team-nlp"},
            "spec": {"limits": [dict(type="Container", **limits)]}}


def test_limit_range_maximum_and_minimum_per_container():
    context = ValidationContext(limit_ranges=[limit_range(
        max={"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
        min={"cpu": "500m", "memory": "4Gi"})])
    spec = good(launcher_cpu="250m")
    assert messages(spec, context) == {
        "cpu_per_worker": ["CPUs per worker (8) is above the maximum of 4 per container in "
                           "team-nlp (LimitRange limits): use at most 4."],
        "memory_per_worker": ["Memory per worker (32Gi) is above the maximum of 16Gi per "
                              "container in team-nlp (LimitRange limits): use at most 16Gi."],
        "gpus_per_worker": ["GPUs per worker (2) is above the maximum of 1 per container in "
                            "team-nlp (LimitRange limits): use at most 1."],
        "launcher_cpu": ["Launcher CPUs (250m) is below the minimum of 500m per container in "
                         "team-nlp (LimitRange limits): use at least 500m."],
        # LimitRanger refuses a container without a limit for a resource it has a max for.
        "manifest": ["LimitRange limits in team-nlp bounds nvidia.com/gpu per container, so "
                     "every container must set it, but the Launcher does not: ask an "
                     "administrator to give the LimitRange a default for it."],
    }


def test_limit_range_bounds_need_a_value_unless_a_default_fills_it_in():
    context = ValidationContext(limit_ranges=[limit_range(max={"cpu": "16"})])
    found = messages(good(cpu_per_worker=""), context, severity="error")
    assert found == {"cpu_per_worker": [
        "CPUs per worker must be set in team-nlp, where LimitRange limits bounds it per "
        "container: enter an amount."]}
    defaulted = ValidationContext(limit_ranges=[limit_range(max={"cpu": "16"},
                                                            default={"cpu": "2"})])
    assert messages(good(cpu_per_worker=""), defaulted, severity="error") == {}


def test_limit_range_ratio_between_limit_and_request():
    spec = _manifest_spec()
    worker = spec.base["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    worker["resources"] = {"requests": {"cpu": "1"}, "limits": {"cpu": "4", "memory": "1Gi"}}
    spec = read_manifest(spec.base)
    context = ValidationContext(limit_ranges=[limit_range(maxLimitRequestRatio={"cpu": "2"})])
    assert messages(spec, context) == {"cpu_per_worker": [
        "CPUs per worker: the limit is 4 times the request, more than the 2 allowed in "
        "team-nlp (LimitRange limits): make the request and the limit equal."]}
    # The dashboard writes requests = limits, so its own jobs always meet the ratio.
    assert validate_spec(good(), context) == []


def test_pod_limit_ranges_sum_the_containers():
    context = ValidationContext(limit_ranges=[{
        "metadata": {"name": "pods", "namespace": "team-nlp"},
        "spec": {"limits": [{"type": "Pod", "max": {"memory": "16Gi"}},
                            {"type": "PersistentVolumeClaim", "max": {"storage": "1Gi"}}]}}])
    assert messages(good(), context) == {"memory_per_worker": [
        "Memory per worker (32Gi) is above the maximum of 16Gi per pod in team-nlp (LimitRange "
        "pods): use at most 16Gi."]}


# --- robustness -------------------------------------------------------------------------------

text = st.text(max_size=80)
words = st.lists(text, max_size=4)
pairs = st.dictionaries(text, text, max_size=3)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=text, namespace=text, image=text, command=words, workers=st.integers(),
       cpu=text, memory=text, gpus=st.integers(-5, 40), launcher_cpu=text, launcher_memory=text,
       slots=st.one_of(st.none(), st.integers()), impl=text, clean=text, policy=text,
       ttl=st.one_of(st.none(), st.integers()), backoff=st.one_of(st.none(), st.integers()),
       env=st.lists(st.builds(EnvVar, text, text), max_size=3),
       volumes=st.lists(st.builds(PVCVolume, text, text, st.booleans(), st.just(""), text),
                        max_size=3),
       tolerations=st.lists(st.builds(Toleration, text, text, text, text,
                                      st.one_of(st.none(), st.integers())), max_size=2),
       node_selector=pairs, labels=pairs, annotations=pairs, priority=text, queue=text)
def test_validation_never_raises_whatever_is_typed(name, namespace, image, command, workers, cpu,
                                                   memory, gpus, launcher_cpu, launcher_memory,
                                                   slots, impl, clean, policy, ttl, backoff, env,
                                                   volumes, tolerations, node_selector, labels,
                                                   annotations, priority, queue):
    spec = MPIJobSpec(name=name, namespace=namespace, image=image, command=command,
                      workers=workers, cpu_per_worker=cpu, memory_per_worker=memory,
                      gpus_per_worker=gpus, launcher_cpu=launcher_cpu,
                      launcher_memory=launcher_memory, slots_per_worker=slots,
                      mpi_implementation=impl, clean_pod_policy=clean,
                      launcher_creation_policy=policy, ttl_seconds_after_finished=ttl,
                      backoff_limit=backoff, env=env, volumes=volumes, tolerations=tolerations,
                      node_selector=node_selector, labels=labels, annotations=annotations,
                      priority_class=priority, queue_name=queue)
    context = ValidationContext(existing_names={"bert"}, priority_classes={"high"},
                                pvc_names={"data"}, local_queues={"q"},
                                limit_ranges=[limit_range(max={"cpu": "4"}, min={"memory": "1"})])
    for finding in validate_spec(spec, context):
        assert finding.severity in ("error", "warning")
        assert finding.message and len(finding.message) < 1200
        assert finding.field


def test_an_image_pull_secret_is_written_to_every_pod_and_read_back():
    from odh.training.spec import build_manifest
    manifest = build_manifest(good(image_pull_secret="quay-robot"))
    for role in ("Launcher", "Worker"):
        pod = manifest["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]
        assert pod["imagePullSecrets"] == [{"name": "quay-robot"}]
    assert read_manifest(manifest).image_pull_secret == "quay-robot"
    assert "imagePullSecrets" not in build_manifest(good())["spec"]["mpiReplicaSpecs"][
        "Worker"]["template"]["spec"]


def test_an_image_pull_secret_must_be_a_secrets_name():
    assert messages(good(image_pull_secret="Quay Robot"))["image_pull_secret"] == [
        '"Quay Robot" is not a Secret\'s name: lowercase letters, digits, "-" and ".", '
        'starting and ending with a letter or digit (see "oc get secrets").']
    assert "image_pull_secret" not in messages(good(image_pull_secret="quay.robot-1"))
