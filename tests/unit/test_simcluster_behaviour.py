"""simcluster's behaviour annotations: bounds, and the warnings for what it does not do."""

from __future__ import annotations

import pytest

from simcluster import behaviour
from simcluster.training import _np


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
        "exit-code")]
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
