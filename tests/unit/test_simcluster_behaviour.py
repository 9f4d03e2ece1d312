"""simcluster's behaviour annotations: bounds, and the warnings for what it does not do."""

from __future__ import annotations

import pytest

from simcluster import behaviour
from simcluster.node import images
from simcluster.node.mpi_launcher import _np
from simcluster.node.training import cuda_oom_error, launched_program
from simcluster.node.workloads import seeded, shell_program


class FakeCluster:
    """Just enough of a cluster for behaviour_for on an object without owners."""


def behaviour_of(**annotations: str) -> behaviour.Behaviour:
    obj = {"metadata": {"annotations": {f"simcluster.io/{k.replace('_', '-')}": v
                                        for k, v in annotations.items()}}}
    return behaviour.behaviour_for(FakeCluster(), obj)  # type: ignore[arg-type]


def warnings(**annotations: str) -> list[tuple[str, str]]:
    return behaviour.annotation_warnings({"metadata": {"annotations": annotations}})


@pytest.mark.parametrize("epochs,expected", [
    ("100000000", 1000), ("1000", 1000), ("999", 999), ("0", 1), ("-3", 10), ("ten", 10),
    ("9" * 5000, 10)])
def test_epochs_are_bounded(epochs, expected):
    assert behaviour_of(epochs=epochs).epochs == expected


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "1e400", "ninety"])
def test_run_seconds_must_be_a_finite_non_negative_number(value):
    assert behaviour_of(run_seconds=value).run_seconds == 90.0


def test_an_unknown_failure_runs_without_one():
    assert behaviour_of(failure="OOM").failure == ""
    assert behaviour_of(failure="oom").failure == "oom"


def test_warnings_name_what_is_not_carried_out():
    assert warnings(**{"simcluster.io/failure": "OOM"}) == [(
        "UnknownSimclusterAnnotation",
        'simcluster.io/failure: "OOM" is not a failure simcluster simulates, so the job runs '
        "without one; valid values: oom, image-pull, mpi-connection-refused, hang, evict, "
        "exit-code, cuda-oom, command-not-found, not-executable, segfault, node-lost, "
        "restart-once")]
    assert warnings(**{"simcluster.io/epochs": "100000000"}) == [(
        "InvalidSimclusterAnnotation",
        "simcluster.io/epochs: 100000000 is more than simcluster simulates; using 1000 epochs")]
    assert warnings(**{"simcluster.io/failure-worker": "1.5"}) == [(
        "InvalidSimclusterAnnotation",
        'simcluster.io/failure-worker: "1.5" is not a non-negative whole number; using the '
        "default (0)")]
    [(reason, message)] = warnings(**{"simcluster.io/runseconds": "5"})
    assert reason == "UnknownSimclusterAnnotation"
    assert message.startswith("unknown annotation simcluster.io/runseconds is ignored; ")


def test_valid_and_foreign_annotations_give_no_warning():
    assert warnings(**{"simcluster.io/failure": "evict", "simcluster.io/epochs": "1000",
                       "simcluster.io/run-seconds": "1.5", "example.com/anything": "x"}) == []
    assert warnings(**{"simcluster.io/failure": ""}) == []  # empty: no failure asked for


@pytest.mark.parametrize("value,expected", [
    ("100000000", 100000000), ("0005", 5), ("0", 1), ("9" * 5000, 2**31 - 1),
    ("²", 4), ("many", 4)])
def test_mpirun_np_is_read_within_bounds(value, expected):
    assert _np(["mpirun", "-np", value, "/home/mpiuser/pi"], 4) == expected


@pytest.mark.parametrize("failure", ["cuda-oom", "command-not-found", "not-executable",
                                     "segfault", "node-lost", "restart-once"])
def test_the_diagnosable_failures_are_known(failure):
    assert behaviour_of(failure=failure).failure == failure
    assert warnings(**{"simcluster.io/failure": failure}) == []


def test_image_pull_error_kinds_and_their_warnings():
    assert behaviour_of(image_pull_error="unauthorized").pull_error == "unauthorized"
    assert behaviour_of().pull_error == "not-found"
    assert behaviour_of(image_pull_error="denied").pull_error == "not-found"
    assert warnings(**{"simcluster.io/image-pull-error": "denied"}) == [(
        "InvalidSimclusterAnnotation",
        'simcluster.io/image-pull-error: "denied" is not one of not-found, unauthorized, '
        "unreachable; using the default (not-found)")]
    assert warnings(**{"simcluster.io/image-pull-error": "unreachable"}) == []


@pytest.mark.parametrize("value,expected", [("25", 25.0), ("0", 0.0), ("100", 100.0),
                                            ("101", None), ("-5", None), ("busy", None)])
def test_gpu_utilization_is_a_percentage(value, expected):
    assert behaviour_of(gpu_utilization=value).gpu_utilization == expected
    if expected is None:
        [(reason, message)] = warnings(**{"simcluster.io/gpu-utilization": value})
        assert reason == "InvalidSimclusterAnnotation"
        assert message == (f'simcluster.io/gpu-utilization: "{value}" is not a percentage '
                           "from 0 to 100; using the default (80-98 while training)")


def test_pull_errors_are_worded_as_cri_o_words_them():
    image = "quay.io/cv-research/detr:2.0-private"
    assert images.pull_error(image, "unauthorized") == (
        "rpc error: code = Unknown desc = initializing source docker://quay.io/cv-research/"
        "detr:2.0-private: reading manifest 2.0-private in quay.io/cv-research/detr: "
        "unauthorized: access to the requested resource is not authorized")
    assert images.pull_error(image, "unreachable") == (
        'rpc error: code = Unknown desc = pinging container registry quay.io: Get '
        '"https://quay.io/v2/": dial tcp: lookup quay.io on 172.30.0.10:53: no such host')
    assert images.pull_error("busybox", "unreachable").startswith(
        "rpc error: code = Unknown desc = pinging container registry registry-1.docker.io:")
    assert images.pull_error(image).endswith(": manifest unknown")


@pytest.mark.parametrize("argv,program", [
    (["mpirun", "-np", "2", "--allow-run-as-root", "-x", "NCCL_DEBUG=INFO", "pyhton",
      "/workspace/run_squad.py"], "pyhton"),
    (["horovodrun", "-np", "4", "-H", "a:2,b:2", "python", "train.py"], "python"),
    (["mpirun", "--mca", "btl", "^openib", "--bind-to=none", "./bench"], "./bench"),
    (["mpirun", "-np", "2"], "mpirun"),
])
def test_the_program_a_launcher_starts(argv, program):
    assert launched_program(argv) == program


@pytest.mark.parametrize("argv,program", [
    (["python3", "train.py"], "python3"),
    (["sh", "-c", "pyhton train.py --epochs 3"], "pyhton"),
    (["/bin/bash", "-c", "mpirun -np 2 torchrunn x.py"], "torchrunn"),
    ([], "sh"),
])
def test_the_program_a_container_runs(argv, program):
    assert shell_program(argv) == program


def test_a_cuda_oom_message_adds_up_for_the_card():
    message = cuda_oom_error(81920, seeded("team-nlp", "llama2-7b-sft"))
    assert message.startswith("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ")
    assert "GPU 0 has a total capacity of 79.15 GiB of which " in message
    assert message.endswith("If reserved but unallocated memory is large try setting "
                            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
                            "fragmentation.  See documentation for Memory Management  "
                            "(https://pytorch.org/docs/stable/notes/cuda.html"
                            "#environment-variables)")
    numbers = [float(x) for x in __import__("re").findall(r"(\d+\.\d\d) GiB", message)]
    tried, total, free, in_use, allocated, unallocated = numbers
    assert tried > free and allocated + unallocated < in_use < total
    assert abs(total - free - in_use) < 0.02
    assert cuda_oom_error(81920, seeded("team-nlp", "llama2-7b-sft")) == message
    assert "total capacity of 39.57 GiB" in cuda_oom_error(40960, seeded("a", "b"))
