"""What the watcher keeps of a failed run before the cluster deletes it
(odh/training/diagnosis/evidence.py), and how the diagnosis takes it back."""

from __future__ import annotations

import copy

from odh.training.diagnosis.evidence import (
    ANNOTATION,
    Kept,
    annotation_with,
    ghosts,
    kept_on_job,
    kept_tails,
    moments,
)


def _pod(restarts=0, state=None, last=None, phase="Running", deleting=False):
    status = {"name": "launcher", "restartCount": restarts, "state": state or {"running": {}}}
    if last:
        status["lastState"] = {"terminated": last}
    pod = {"metadata": {"name": "pi-launcher-x", "namespace": "team-nlp", "uid": "u1",
                        "labels": {"training.kubeflow.org/job-role": "launcher"}},
           "spec": {"containers": [{"name": "launcher", "image": "pi"}]},
           "status": {"phase": phase, "containerStatuses": [status]}}
    if deleting:
        pod["metadata"]["deletionTimestamp"] = "2026-11-28T10:00:00Z"
    return pod


FAILED = {"exitCode": 1, "reason": "Error"}


def test_a_restart_keeps_the_run_that_failed_as_the_previous_one():
    found = moments(_pod(), _pod(restarts=1, last=FAILED))
    assert [(m.container, m.run, m.previous, m.terminated) for m in found] == [
        ("launcher", 0, True, FAILED)]


def test_a_container_that_ends_in_failure_is_kept_once():
    ended = _pod(state={"terminated": FAILED}, phase="Failed")
    assert [(m.run, m.previous) for m in moments(_pod(), ended)] == [(0, False)]
    assert moments(ended, ended) == []  # seen already
    assert moments(_pod(), _pod(state={"terminated": {"exitCode": 0,
                                                      "reason": "Completed"}})) == []


def test_containers_stopped_because_their_pod_is_deleted_are_not_failures():
    stopping = _pod(state={"terminated": {"exitCode": 143, "reason": "Error"}}, deleting=True)
    assert moments(_pod(), stopping) == []
    assert moments(stopping, None) == []  # nothing had failed: nothing to keep when gone


def test_a_failed_pod_that_goes_away_is_kept_as_it_failed_not_as_it_was_stopped():
    before = _pod(restarts=6, state={"terminated": {"exitCode": 143, "reason": "Error"}},
                  last={"exitCode": 2, "reason": "Error"}, deleting=True)
    untouched = copy.deepcopy(before)
    (gone,) = moments(before, None)
    assert gone.gone and gone.run == -1
    state = gone.pod["status"]["containerStatuses"][0]["state"]
    assert state == {"terminated": {"exitCode": 2, "reason": "Error"}}
    assert before == untouched  # the watcher's own copy is not changed


def test_the_diagnosis_gets_back_the_pods_the_cluster_no_longer_has_with_their_logs():
    ghost = _pod(state={"terminated": FAILED}, phase="Failed")
    kept = [Kept("pi-launcher-x", "launcher", 0, True, ghost, "ssh: ... refused\n"),
            Kept("pi-launcher-x", "launcher", 1, True, ghost, "ssh: ... refused again\n"),
            Kept("pi-launcher-x", "", -1, False, ghost, "", gone=True)]
    assert ghosts([], kept) == [ghost]
    assert kept_tails([], kept) == {"pi-launcher-x": "ssh: ... refused again\n"}
    # while the pod is there, the cluster's own pod and log are read instead
    assert ghosts([ghost], kept) == [] and kept_tails([ghost], kept) == {}


def _job(annotation=None):
    meta = {"name": "pi", "namespace": "team-nlp", "uid": "j1"}
    if annotation is not None:
        meta["annotations"] = {ANNOTATION: annotation, "team": "nlp"}
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": meta}


def test_what_is_kept_on_the_job_reads_back_as_it_was_kept_without_the_command_line():
    ghost = _pod(state={"terminated": FAILED}, phase="Failed")
    ghost["metadata"]["annotations"] = {"note": "x" * 500}
    ghost["spec"]["containers"][0]["command"] = ["mpirun", "-np", "2", "--secret-flag"]
    moment = Kept("pi-launcher-x", "launcher", 0, True, ghost, "ssh: ... refused\n")
    (back,) = kept_on_job(_job(annotation_with(_job(), moment)))
    assert (back.pod_name, back.container, back.run, back.previous, back.gone, back.log) == (
        "pi-launcher-x", "launcher", 0, True, False, "ssh: ... refused")
    assert "command" not in back.pod["spec"]["containers"][0]
    assert "annotations" not in back.pod["metadata"]
    assert ghosts([], [back])[0]["status"]["phase"] == "Failed"


def test_the_job_keeps_the_newest_runs_and_the_end_of_each_log_within_bounds():
    job = _job()
    long_log = "".join(f"2026-11-30T01:00:{i % 60:02d}Z line {i} {'.' * 60}\n"
                       for i in range(500))
    for run in range(20):
        moment = Kept("pi-launcher-x", "launcher", run, True, _pod(restarts=run + 1,
                      last=FAILED), long_log)
        job = _job(annotation_with(job, moment))
    text = job["metadata"]["annotations"][ANNOTATION]
    assert len(text.encode()) <= 48 * 1024
    kept = kept_on_job(job)
    assert [k.run for k in kept] == list(range(12, 20))  # the newest eight
    assert kept[-1].log.endswith("line 499 " + "." * 60)
    assert len(kept[-1].log.encode()) <= 4096
    # written again, a run is not kept twice
    again = _job(annotation_with(job, kept[-1]))
    assert [k.run for k in kept_on_job(again)] == list(range(12, 20))


def test_an_annotation_someone_else_wrote_is_not_evidence():
    for junk in ("not json", '{"pod": "x"}', '[{"pod": "a", "snapshot": {}}]',
                 '[{"pod": "a", "run": "x", "snapshot": {"metadata": {"name": "a"}}}]', 42):
        assert kept_on_job(_job(junk)) == []
    assert kept_on_job(_job()) == []
