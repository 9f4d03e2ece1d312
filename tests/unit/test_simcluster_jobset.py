"""Pure helpers of simcluster's JobSet controller and of Indexed batch Jobs."""

from __future__ import annotations

from simcluster.controllers import batchjob_indexed as indexed
from simcluster.controllers.jobset import objects
from simcluster.controllers.jobset import status as jstatus


def _jobset(**spec) -> dict:
    return objects.apply_defaults({
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "ns", "uid": "u1"},
        "spec": {"replicatedJobs": [
            {"name": "a", "template": {"spec": {"template": {"spec": {}}}}},
            {"name": "b", "replicas": 3, "template": {"spec": {"template": {"spec": {}}}}}],
            **spec}})


def _job(rjob: str, attempt: str = "0", ctype: str = "") -> dict:
    status = {"conditions": [{"type": ctype, "status": "True"}]} if ctype else {}
    return {"metadata": {"name": f"js-{rjob}", "labels": {
        objects.REPLICATED_JOB_NAME: rjob, objects.RESTART_ATTEMPT: attempt}},
        "spec": {"parallelism": 1, "completions": 1}, "status": status}


def test_intervals_round_trip():
    assert indexed.format_intervals({0, 1, 2, 4, 6, 7}) == "0-2,4,6-7"
    assert indexed.parse("0-2,4,6-7") == {0, 1, 2, 4, 6, 7}
    assert indexed.parse("") == set()


def test_free_indexes_skip_active_and_completed():
    job = {"spec": {"completionMode": "Indexed"}}
    active = [{"metadata": {"annotations": {indexed.INDEX_KEY: "1"}}}]
    assert indexed.free_indexes(job, {"completedIndexes": "0"}, active, 5, 2) == [2, 3]
    assert indexed.free_indexes({"spec": {}}, {}, [], 5, 2) == [None, None]


def test_defaults_global_indexes_and_labels():
    js = _jobset()
    assert js["spec"]["network"] == {"enableDNSHostnames": True,
                                     "publishNotReadyAddresses": True}
    assert [objects.global_index(js, "b", i) for i in range(3)] == ["1", "2", "3"]
    job = objects.job(js, js["spec"]["replicatedJobs"][1], 2)
    labels = job["metadata"]["labels"]
    assert labels[objects.GLOBAL_REPLICAS] == "4"
    assert labels[objects.JOB_KEY] == objects.job_key("ns", "js-b-2")
    assert job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["template"]["spec"] == {"restartPolicy": "OnFailure",
                                               "subdomain": "js"}


def test_success_policy_any_and_targets():
    done = jstatus.ChildJobs(successful=[_job("a", ctype="Complete")])
    assert not jstatus.success_reached(_jobset(), done)
    assert jstatus.success_reached(_jobset(successPolicy={"operator": "Any"}), done)
    assert jstatus.success_reached(
        _jobset(successPolicy={"operator": "All", "targetReplicatedJobs": ["a"]}), done)


def test_classify_and_failure_policy_rules():
    js = _jobset(failurePolicy={"maxRestarts": 3, "rules": [
        {"name": "stop", "action": "FailJobSet", "targetReplicatedJobs": ["b"]}]})
    js["status"] = {"restarts": 1}
    children = jstatus.classify(js, [_job("a", "0"), _job("a", "1", "Failed"),
                                     _job("b", "1", "Complete"), _job("b", "1")])
    assert [len(x) for x in (children.previous, children.failed, children.successful,
                             children.active)] == [1, 1, 1, 1]
    status: dict = {"restarts": 1}
    events = jstatus.execute_failure_policy(js, status, children, "t")
    assert status["restarts"] == 2 and status["restartsCountTowardsMax"] == 1
    assert events == [("Warning", "RestartJobSetFailurePolicyAction",
                       "applying RestartJobSet failure policy action "
                       "(first failed job: js-a)")]
    children.failed = [_job("b", "1", "Failed")]
    status = {}
    jstatus.execute_failure_policy(js, status, children, "t")
    assert status["conditions"][0]["reason"] == "FailJobSetFailurePolicyAction"
