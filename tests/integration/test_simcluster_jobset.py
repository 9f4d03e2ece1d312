"""The JobSet controller in simcluster (`apis: [jobset]`): a JobSet runs through batch/v1
Jobs and their pods as kubernetes-sigs/jobset runs it on a real cluster."""

from __future__ import annotations

import hashlib

import pytest
from kubernetes import client as k8s

from tests import simcluster_process
from tests.waiting import wait_until

NS = "team-nlp"
GROUP, VERSION, PLURAL = "jobset.x-k8s.io", "v1alpha2", "jobsets"
SCENARIO = simcluster_process.admin_scenario(
    "jobset", "The JobSet API and controller on a small CPU cluster.", ["jobset"], NS,
    nodes=[{"name": "cpu-{i}", "count": 2, "cpu": 16, "memory": "64Gi"}])
TIMEOUT = 120  # generous: a slow 2-core machine


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    base = tmp_path_factory.mktemp("jobset")
    with simcluster_process.admin_client(base, SCENARIO) as client:
        yield client


def rjob(name: str, replicas: int, command: list[str], **job_spec) -> dict:
    return {"name": name, "replicas": replicas, "template": {"spec": {**job_spec, "template": {
        "spec": {"containers": [{"name": "main", "image": "busybox:1.36",
                                 "command": command}]}}}}}


def jobset(name: str, *rjobs: dict, **spec) -> dict:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "JobSet",
            "metadata": {"name": name, "annotations": {"simcluster.io/epochs": "2"}},
            "spec": {"replicatedJobs": list(rjobs), **spec}}


def create(api, body: dict) -> None:
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, body)


def read(api, name: str) -> dict:
    return k8s.CustomObjectsApi(api).get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL,
                                                                  name)


def condition(js: dict, ctype: str) -> dict | None:
    return next((c for c in (js.get("status") or {}).get("conditions") or []
                 if c["type"] == ctype), None)


def wait_condition(api, name: str, ctype: str, status: str = "True") -> dict:
    def check() -> dict | None:
        js = read(api, name)
        c = condition(js, ctype)
        return js if c is not None and c["status"] == status else None
    return wait_until(check, TIMEOUT, message=lambda: f"JobSet {name} {ctype}={status}: "
                      f"{read(api, name).get('status')}")


def jobs_of(api, name: str) -> list[k8s.V1Job]:
    found = k8s.BatchV1Api(api).list_namespaced_job(
        NS, label_selector=f"jobset.sigs.k8s.io/jobset-name={name}").items
    return sorted(found, key=lambda j: j.metadata.name)


def reasons(api, name: str) -> list[str]:
    events = k8s.CoreV1Api(api).list_namespaced_event(
        NS, field_selector=f"involvedObject.name={name},involvedObject.kind=JobSet").items
    return [e.reason for e in sorted(events, key=lambda e: e.metadata.creation_timestamp)]


def test_a_jobset_runs_its_jobs_and_pods_to_completed(api):
    create(api, jobset("train", rjob("launcher", 1, ["sh", "-c", "sleep 3"]),
                       rjob("node", 2, ["sh", "-c", "sleep 2"])))
    done = wait_condition(api, "train", "Completed")
    uid = done["metadata"]["uid"]
    completed = condition(done, "Completed")
    assert (completed["reason"], completed["message"]) == ("AllJobsCompleted",
                                                           "jobset completed successfully")
    assert done["status"]["terminalState"] == "Completed"
    assert done["status"]["replicatedJobsStatus"] == [
        {"name": "launcher", "ready": 0, "succeeded": 1, "failed": 0, "active": 0,
         "suspended": 0},
        {"name": "node", "ready": 0, "succeeded": 2, "failed": 0, "active": 0,
         "suspended": 0}]
    assert "AllJobsCompleted" in reasons(api, "train")

    jobs = jobs_of(api, "train")
    assert [j.metadata.name for j in jobs] == ["train-launcher-0", "train-node-0",
                                               "train-node-1"]
    for job, (rj, index, global_index, replicas) in zip(
            jobs, [("launcher", "0", "0", "1"), ("node", "0", "1", "2"),
                   ("node", "1", "2", "2")], strict=True):
        ref = job.metadata.owner_references[0]
        assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller) == (
            f"{GROUP}/{VERSION}", "JobSet", "train", uid, True)
        expected = {
            "jobset.sigs.k8s.io/jobset-name": "train",
            "jobset.sigs.k8s.io/replicatedjob-name": rj,
            "jobset.sigs.k8s.io/replicatedjob-replicas": replicas,
            "jobset.sigs.k8s.io/global-replicas": "3",
            "jobset.sigs.k8s.io/job-index": index,
            "jobset.sigs.k8s.io/job-global-index": global_index,
            "jobset.sigs.k8s.io/restart-attempt": "0",
            "jobset.sigs.k8s.io/job-key": hashlib.sha1(
                f"{NS}/{job.metadata.name}".encode(), usedforsecurity=False).hexdigest(),
        }
        template = job.spec.template
        for meta in (job.metadata, template.metadata):
            assert expected.items() <= meta.labels.items()
            assert expected.items() <= meta.annotations.items()
            assert meta.annotations["simcluster.io/epochs"] == "2"  # carried down
        assert job.spec.completion_mode == "Indexed"
        assert job.spec.suspend is False
        assert template.spec.subdomain == "train"
        assert template.spec.restart_policy == "OnFailure"
        assert any(c.type == "Complete" and c.status == "True" for c in job.status.conditions)

    pods = k8s.CoreV1Api(api).list_namespaced_pod(
        NS, label_selector="jobset.sigs.k8s.io/jobset-name=train").items
    assert sorted(p.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]
                  for p in pods) == ["launcher", "node", "node"]
    assert all(p.status.phase == "Succeeded" and p.spec.subdomain == "train" for p in pods)
    # Indexed Jobs: the Job controller names each pod after its completion index
    for pod in pods:
        job_name = pod.metadata.labels["job-name"]
        assert pod.metadata.annotations["batch.kubernetes.io/job-completion-index"] == "0"
        assert pod.metadata.name.startswith(f"{job_name}-0-")
        assert pod.spec.hostname == f"{job_name}-0"  # DNS: train-node-1-0.train
    assert all(j.status.completed_indexes == "0" for j in jobs)

    svc = k8s.CoreV1Api(api).read_namespaced_service("train", NS)
    assert svc.spec.cluster_ip == "None"
    assert svc.spec.selector == {"jobset.sigs.k8s.io/jobset-name": "train"}
    assert svc.spec.publish_not_ready_addresses is True
    assert svc.metadata.owner_references[0].uid == uid


def test_a_failed_job_restarts_the_jobset_until_max_restarts(api):
    create(api, jobset("flaky", rjob("worker", 1, ["false"], backoffLimit=0),
                       failurePolicy={"maxRestarts": 1}))
    failed = wait_condition(api, "flaky", "Failed")
    status = failed["status"]
    assert status["restarts"] == 1
    assert status["restartsCountTowardsMax"] == 1
    assert status["terminalState"] == "Failed"
    cond = condition(failed, "Failed")
    assert cond["reason"] == "ReachedMaxRestarts"
    assert cond["message"] == ("jobset failed due to reaching max number of restarts "
                               "(first failed job: flaky-worker-0)")
    [job] = jobs_of(api, "flaky")
    assert job.metadata.labels["jobset.sigs.k8s.io/restart-attempt"] == "1"
    assert job.spec.template.metadata.labels["jobset.sigs.k8s.io/restart-attempt"] == "1"
    assert status["replicatedJobsStatus"][0]["failed"] == 1
    seen = reasons(api, "flaky")
    assert seen.count("RestartJobSetFailurePolicyAction") == 1
    assert "ReachedMaxRestarts" in seen


def test_without_a_failure_policy_a_failed_job_fails_the_jobset(api):
    create(api, jobset("brittle", rjob("worker", 1, ["false"], backoffLimit=0)))
    failed = wait_condition(api, "brittle", "Failed")
    cond = condition(failed, "Failed")
    assert (cond["reason"], cond["message"]) == (
        "FailedJobs", "jobset failed due to one or more job failures "
        "(first failed job: brittle-worker-0)")
    assert not failed["status"].get("restarts")


def test_suspend_and_resume(api):
    create(api, jobset("paused", rjob("worker", 2, ["sh", "-c", "sleep 2"]), suspend=True))
    suspended = wait_condition(api, "paused", "Suspended")
    cond = condition(suspended, "Suspended")
    assert (cond["reason"], cond["message"]) == ("SuspendedJobs", "jobset is suspended")
    jobs = wait_until(lambda: len(jobs_of(api, "paused")) == 2 and jobs_of(api, "paused"),
                      TIMEOUT, message="the suspended JobSet's Jobs")
    assert all(j.spec.suspend is True for j in jobs)
    wait_until(lambda: read(api, "paused")["status"]["replicatedJobsStatus"][0]["suspended"]
               == 2, TIMEOUT, message="replicatedJobsStatus.suspended 2")
    assert not k8s.CoreV1Api(api).list_namespaced_pod(
        NS, label_selector="jobset.sigs.k8s.io/jobset-name=paused").items

    k8s.CustomObjectsApi(api).patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "paused", {"spec": {"suspend": False}})
    resumed = wait_condition(api, "paused", "Suspended", "False")
    cond = condition(resumed, "Suspended")
    assert (cond["reason"], cond["message"]) == ("ResumeJobs", "jobset is resumed")
    wait_condition(api, "paused", "Completed")
    assert all(j.spec.suspend is False for j in jobs_of(api, "paused"))
    assert {"SuspendedJobs", "ResumeJobs", "AllJobsCompleted"} <= set(reasons(api, "paused"))


def test_ttl_seconds_after_finished_deletes_the_finished_jobset(api):
    create(api, jobset("brief", rjob("worker", 1, ["true"]), ttlSecondsAfterFinished=5))

    def gone() -> bool:
        names = [o["metadata"]["name"] for o in k8s.CustomObjectsApi(api)
                 .list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)["items"]]
        return "brief" not in names and not jobs_of(api, "brief")
    wait_until(gone, TIMEOUT, message="the JobSet and its Jobs deleted after its TTL")
