"""Automatic retry (MPIJob-033), the pure parts: which failures are the platform's, the
decision, the back-off, the retry's name and the clone it makes of the failed job."""

from __future__ import annotations

import pytest

from odh.training.diagnosis.retryable import decide, platform_failure
from odh.training.manifests.retries import (
    RETRIES_ANNOTATION,
    RETRY_ATTEMPT_ANNOTATION,
    RETRY_OF_ANNOTATION,
    RETRY_OF_UID_ANNOTATION,
    RETRY_ON_ANNOTATION,
    RetryPolicy,
    backoff_seconds,
    job_policy,
    lineage_of,
    retry_annotations,
    retry_name,
    retry_spec,
    with_retries,
)
from odh.training.spec import build_manifest
from tests.training_jobs import mpijob


@pytest.mark.parametrize("scenario,culprit,platform", [
    ("node-lost", "platform", True), ("evicted", "platform", True),
    ("preempted", "capacity", True), ("oom-killed", "configuration", False),
    ("exit-code", "code", False), ("image-pull", "configuration", False),
    ("unknown", "unknown", False), ("some-new-platform-rule", "platform", True)])
def test_the_platforms_failures_are_a_lost_node_an_eviction_a_preemption(scenario, culprit,
                                                                          platform):
    assert platform_failure(scenario, culprit) is platform


def test_the_decision_retries_the_platforms_failures_until_the_retries_are_used():
    two = RetryPolicy(2, "platform")
    assert decide(two, 0, "node-lost").retry and decide(two, 0, "node-lost").attempt == 1
    assert decide(two, 1, "evicted").attempt == 2 and decide(two, 1, "evicted").retry
    assert not decide(two, 2, "node-lost").retry  # both used
    assert decide(two, 0, "oom-killed", "configuration").why == "not-platform"
    assert not decide(RetryPolicy(0), 0, "node-lost").retry
    every = RetryPolicy(1, "all")
    assert decide(every, 0, "oom-killed", "configuration").retry
    assert not decide(every, 1, "oom-killed").retry


def test_the_nth_retry_waits_twice_as_long_as_the_one_before():
    assert [backoff_seconds(n, 60) for n in (1, 2, 3, 4)] == [60, 120, 240, 480]
    assert backoff_seconds(3, 0.5) == 2.0


def test_the_wish_is_two_annotations_and_nonsense_asks_for_nothing():
    assert retry_annotations(2) == {RETRIES_ANNOTATION: "2", RETRY_ON_ANNOTATION: "platform"}
    assert retry_annotations("3", "all")[RETRY_ON_ANNOTATION] == "all"
    assert retry_annotations(0) == {}
    for bad in (-1, 6, "two"):
        with pytest.raises(ValueError, match="0 to 5"):
            retry_annotations(bad)
    with pytest.raises(ValueError, match="platform"):
        retry_annotations(1, "sometimes")
    assert with_retries({RETRIES_ANNOTATION: "2", "a": "b"}, 0) == {"a": "b"}
    job = mpijob("j", annotations={RETRIES_ANNOTATION: "lots", RETRY_ON_ANNOTATION: "x"})
    assert job_policy(job) == RetryPolicy(0, "platform")
    assert job_policy(mpijob("j", annotations={RETRIES_ANNOTATION: "2",
                                               RETRY_ON_ANNOTATION: "ALL"})).all_failures


def test_a_retry_is_a_clone_of_the_failed_job_linked_to_the_first():
    job = mpijob("bert-a", workers=2, annotations={
        RETRIES_ANNOTATION: "2", "opendatahub.io/username": "alice"})
    job["metadata"].update(uid="uid-1", namespace="team-nlp", resourceVersion="7")
    job["status"] = {"conditions": [{"type": "Failed", "status": "True"}]}
    first = retry_spec(job, 1)
    assert (first.name, first.namespace, first.created_by) == ("bert-a-retry-1", "team-nlp",
                                                               "alice")
    manifest = build_manifest(first)
    annotations = manifest["metadata"]["annotations"]
    assert annotations[RETRY_OF_ANNOTATION] == "bert-a"
    assert annotations[RETRY_OF_UID_ANNOTATION] == "uid-1"
    assert annotations[RETRY_ATTEMPT_ANNOTATION] == "1"
    assert annotations[RETRIES_ANNOTATION] == "2"  # the wish goes on with it
    assert annotations["opendatahub.io/username"] == "alice"
    assert "status" not in manifest and "uid" not in manifest["metadata"]
    assert "resourceVersion" not in manifest["metadata"]
    # the retry of a retry: named after the first, linked to the first
    manifest["metadata"].update(uid="uid-2", namespace="team-nlp")
    second = retry_spec(manifest, 2)
    assert second.name == "bert-a-retry-2"
    assert lineage_of(build_manifest(second)).first_uid == "uid-1"
    assert lineage_of(build_manifest(second)).attempt == 2
    assert lineage_of(job).attempt == 0 and lineage_of(job).first == "bert-a"


def test_a_long_name_is_shortened_so_the_pods_names_stay_valid():
    name = retry_name("x" * 60, 3, workers=8)
    assert name.endswith("-retry-3") and len(name) + len("-launcher") <= 63


# -- the wish, from the SDK and the CLI ----------------------------------------------------------
def test_the_sdk_records_retries_on_the_job():
    from odh.training import MPIJob, TrainJob
    from odh.training.errors import ValidationError

    job = MPIJob("bert-a", namespace="team-nlp", image="i", command=["true"], retries=2)
    annotations = build_manifest(job.spec)["metadata"]["annotations"]
    assert (annotations[RETRIES_ANNOTATION], annotations[RETRY_ON_ANNOTATION]) == (
        "2", "platform")
    job.update(retry_on="all")
    assert job.spec.annotations[RETRY_ON_ANNOTATION] == "all"
    assert job.spec.annotations[RETRIES_ANNOTATION] == "2"
    job.update(retries=0)
    assert RETRIES_ANNOTATION not in build_manifest(job.spec)["metadata"].get(
        "annotations", {})
    with pytest.raises(ValidationError) as refused:
        MPIJob("bert-a", retries=9)
    assert refused.value.field == "retries"
    with pytest.raises(ValidationError) as refused:
        MPIJob("bert-a", retries=1, retry_on="sometimes")
    assert refused.value.field == "retry_on"
    trainjob = TrainJob("t5", namespace="team-nlp", image="i", retries=1, retry_on="all")
    assert build_manifest(trainjob.spec)["metadata"]["annotations"][RETRY_ON_ANNOTATION] \
        == "all"


def test_the_cli_records_retries_on_the_job(capsys, monkeypatch, tmp_path):
    import yaml

    from tests.unit.test_training_cli import run

    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    base = ["training", "create", "mpijob", "bert", "-n", "team-nlp", "--image", "i",
            "--dry-run=client"]
    code, out, err = run(capsys, *base, "--retries", "3", "--", "python", "train.py")
    assert code == 0, err
    annotations = yaml.safe_load(out)["metadata"]["annotations"]
    assert (annotations[RETRIES_ANNOTATION], annotations[RETRY_ON_ANNOTATION]) == (
        "3", "platform")
    code, out, err = run(capsys, *base, "--retries", "1", "--retry-all-failures", "--",
                         "python", "train.py")
    assert yaml.safe_load(out)["metadata"]["annotations"][RETRY_ON_ANNOTATION] == "all"
    code, _out, err = run(capsys, *base, "--retries", "7", "--", "python", "train.py")
    assert code == 2 and "--retries: " in err and "0 to 5" in err
    code, _out, err = run(capsys, *base, "--retry-all-failures", "--", "python", "train.py")
    assert code == 2 and "goes with --retries N" in err


def test_describe_says_what_a_job_asked_for_and_which_retry_it_is():
    import io
    from datetime import UTC, datetime

    from odh.training.cli.output import describe_record, print_describe
    from odh.training.status.summarize import summarize

    job = mpijob("bert-a-retry-1", annotations={
        RETRIES_ANNOTATION: "2", RETRY_OF_ANNOTATION: "bert-a",
        RETRY_OF_UID_ANNOTATION: "uid-1", RETRY_ATTEMPT_ANNOTATION: "1"})
    job["metadata"].update(namespace="team-nlp", uid="uid-2")
    now = datetime.now(UTC)
    summary = summarize(job, [], [], now)
    out = io.StringIO()
    print_describe(job, summary, [], None, out, now)
    text = out.getvalue()
    assert "Retry 1 of 2 of bert-a" in text
    assert "Up to 2 retries after a failure of the platform" in text
    record = describe_record(job, summary, [], None, now)
    assert record["retry"] == {"retries": 2, "on": "platform", "retryOf": "bert-a",
                               "attempt": 1}


def test_a_clone_of_a_retry_is_a_job_of_its_own_that_keeps_the_wish():
    from odh.training.spec import clone_spec, read_manifest

    job = mpijob("bert-a-retry-1", annotations={
        RETRIES_ANNOTATION: "2", RETRY_OF_ANNOTATION: "bert-a",
        RETRY_OF_UID_ANNOTATION: "uid-1", RETRY_ATTEMPT_ANNOTATION: "1"})
    job["metadata"].update(uid="uid-2", namespace="team-nlp")
    copy = build_manifest(clone_spec(read_manifest(job), "bert-b"))
    annotations = copy["metadata"]["annotations"]
    assert not {RETRY_OF_ANNOTATION, RETRY_OF_UID_ANNOTATION,
                RETRY_ATTEMPT_ANNOTATION} & set(annotations)
    assert annotations[RETRIES_ANNOTATION] == "2"
    assert lineage_of(copy).attempt == 0
