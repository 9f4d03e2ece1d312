"""The fields of a finished job's history record (odh.training.status.history),
diagnosis included."""

from __future__ import annotations

from datetime import timedelta

import pytest

from odh.training.status.history import history_fields
from odh.training.status.summarize import summarize
from tests.unit.training_objects import (
    NS,
    T0,
    at,
    condition,
    container_terminated,
    created,
    launcher,
    mpijob,
    running,
    worker,
)

NOW = T0 + timedelta(hours=2)


def _failed(pods_of: str = "oom"):
    job = mpijob(conditions=[
        created(), running(status="False"),
        condition("Failed", "True", "BackoffLimitExceeded/Error",
                  "Job has reached the specified backoff limit", 900),
    ], status={"startTime": at(10), "completionTime": at(900)})
    pods = [launcher("resnet", phase="Failed", ready=False,
                     state=container_terminated("Error", 1, finished=890))]
    if pods_of == "oom":
        pods += [worker("resnet", 0, phase="Failed", ready=False,
                        state=container_terminated("Error", 137, finished=880)),
                 worker("resnet", 1, phase="Failed", ready=False,
                        state=container_terminated("OOMKilled", 137, finished=870))]
    return job, pods


def test_a_failed_job_keeps_the_diagnosed_cause_next_to_the_operators_reason():
    job, pods = _failed()
    fields = history_fields(job, summarize(job, pods, [], NOW))
    assert (fields["outcome"], fields["reason"]) == ("Failed", "BackoffLimitExceeded/Error")
    assert (fields["cause"], fields["cause_reason"]) == ("Worker 1 was OOMKilled", "OOMKilled")
    assert fields["duration_seconds"] == 890.0 and fields["namespace"] == NS


def test_without_a_failing_worker_the_launcher_is_the_cause():
    job, pods = _failed(pods_of="launcher only")
    fields = history_fields(job, summarize(job, pods, [], NOW))
    assert (fields["cause"], fields["cause_reason"]) == ("Launcher exited with code 1", "Error")


def test_without_pods_or_for_a_succeeded_job_there_is_no_cause():
    job, _pods = _failed()
    fields = history_fields(job, summarize(job, [], [], NOW))
    assert (fields["cause"], fields["cause_reason"]) == ("", "")
    done = mpijob(conditions=[created(), condition("Succeeded", "True", "MPIJobSucceeded",
                                                   "done", 600)],
                  status={"startTime": at(10), "completionTime": at(600)})
    pods = [launcher("resnet", phase="Succeeded", ready=False,
                     state=container_terminated("Completed", 0, finished=590))]
    fields = history_fields(done, summarize(done, pods, [], NOW))
    assert (fields["outcome"], fields["cause"], fields["cause_reason"]) == (
        "Succeeded", "", "")


def test_an_unfinished_job_has_no_record():
    job = mpijob(conditions=[created(), running()])
    with pytest.raises(ValueError, match="has not finished"):
        history_fields(job, summarize(job, [], [], NOW))
