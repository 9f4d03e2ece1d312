"""The job numbers of /metrics (odh.training.overviews.jobmetrics): bounded label values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from odh.training.diagnosis import Facts, diagnose
from odh.training.overviews import jobmetrics
from odh.training.status.summarize import summarize

T0 = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)


def _job(name: str, namespace: str = "team-nlp", conditions: list | None = None,
         workers: int = 2, **meta) -> dict:
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                         "creationTimestamp": "2026-05-01T10:00:00Z", **meta},
            "spec": {"mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "l", "image": "x"}]}}},
                "Worker": {"replicas": workers, "template": {"spec": {"containers": [
                    {"name": "w", "image": "x"}]}}}}},
            "status": {"conditions": conditions or []}}


def _cond(ctype: str, status: str = "True", reason: str = "", at: str = "2026-05-01T10:05:00Z"):
    return {"type": ctype, "status": status, "reason": reason, "lastTransitionTime": at}


def _pod(job: str, role: str, index: int, phase: str, namespace: str = "team-nlp") -> dict:
    name = f"{job}-{role}-{index}"
    return {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                         "labels": {"training.kubeflow.org/job-name": job,
                                    "training.kubeflow.org/job-role": role,
                                    "training.kubeflow.org/replica-index": str(index)}},
            "spec": {"nodeName": "n1"}, "status": {"phase": phase}}


def test_job_counts_give_every_status_of_a_project_and_type():
    running = summarize(_job("a", conditions=[_cond("Running")]), [])
    pending = summarize(_job("b"), [])
    other = summarize(_job("c", namespace="team-cv", conditions=[_cond("Succeeded")]), [])
    counts = jobmetrics.job_counts([running, pending, other])
    assert counts[("team-nlp", "MPIJob", "Running")] == 1
    assert counts[("team-nlp", "MPIJob", "Pending")] == 1
    assert counts[("team-nlp", "MPIJob", "Failed")] == 0
    assert counts[("team-cv", "MPIJob", "Succeeded")] == 1
    assert len(counts) == 2 * len(jobmetrics.STATUSES)


def test_worker_states_count_pods_not_placeholders_or_the_launcher():
    job = _job("a", workers=3, conditions=[_cond("Running")])
    pods = [_pod("a", "launcher", 0, "Running"), _pod("a", "worker", 0, "Running"),
            _pod("a", "worker", 1, "Pending")]  # worker 2 not created yet
    counts = jobmetrics.worker_counts([summarize(job, pods)])
    assert counts == {("team-nlp", "MPIJob", "active"): 1,
                      ("team-nlp", "MPIJob", "pending"): 1,
                      ("team-nlp", "MPIJob", "failed"): 0}
    assert jobmetrics.worker_state("Failed", "OOMKilled") == "failed"
    assert jobmetrics.worker_state("Succeeded", "") is None


def test_a_pending_job_waits_since_it_was_created_or_last_resumed():
    fresh = summarize(_job("a"), [])
    assert jobmetrics.pending_since(fresh) == T0
    resumed = summarize(_job("b", conditions=[
        _cond("Suspended", "True", at="2026-05-01T10:10:00Z"),
        _cond("Suspended", "False", at="2026-05-01T10:20:00Z")]), [])
    assert jobmetrics.pending_since(resumed) == T0 + timedelta(minutes=20)
    found = jobmetrics.pending_jobs([(_job("a"), fresh)], T0 + timedelta(minutes=5))
    assert found == [jobmetrics.PendingJob("team-nlp", "MPIJob", "a", "other", 300.0)]


def test_pending_reasons_are_the_five_labels():
    job = _job("q")
    refused = {"metadata": {"name": "e1", "namespace": "team-nlp", "uid": "e1"},
               "involvedObject": {"kind": "MPIJob", "name": "q", "namespace": "team-nlp"},
               "reason": "MPIJobFailed", "type": "Warning",
               "message": 'worker pod created failed: pods "q-worker-1" is forbidden: '
                          "exceeded quota: team-quota, requested: requests.nvidia.com/gpu=8",
               "lastTimestamp": "2026-05-01T10:01:00Z"}
    summary = summarize(job, [], [refused])
    assert jobmetrics.pending_reason(job, summary) == "quota"
    queued = _job("k", labels={"kueue.x-k8s.io/queue-name": "team"})
    queued["spec"]["runPolicy"] = {"suspend": True}  # Kueue holds it until admitted
    assert jobmetrics.pending_reason(queued, summarize(queued, [])) == "queued"
    # what the diagnosis finds keeps it from starting as it is: configuration
    limited = dict(refused, message='worker pod created failed: pods "q-worker-1" is '
                   "forbidden: maximum cpu usage per Container is 64, but limit is 96")
    def with_events(j, s):
        return diagnose(Facts(j, [], [limited], summary=s))

    assert jobmetrics.pending_reason(job, summarize(job, [], [limited]),
                                     with_events) == "configuration"


def test_quota_samples_are_plain_numbers_in_base_units():
    quota = {"metadata": {"name": "team-quota", "namespace": "team-nlp"},
             "spec": {"hard": {"requests.nvidia.com/gpu": "16", "requests.cpu": "192",
                               "requests.memory": "1536Gi", "pods": "0"}},
             "status": {"used": {"requests.nvidia.com/gpu": "8", "requests.cpu": "66500m",
                                 "requests.memory": "520Gi"}}}
    samples = {s.resource: s for s in jobmetrics.quota_samples(quota)}
    assert (samples["requests.nvidia.com/gpu"].used, samples["requests.nvidia.com/gpu"].hard
            ) == (8.0, 16.0)
    assert samples["requests.nvidia.com/gpu"].ratio == 0.5
    assert samples["requests.cpu"].used == 66.5
    assert samples["requests.memory"].hard == 1536 * 2**30
    assert samples["pods"].ratio is None  # hard 0: no ratio
    assert samples["pods"].used == 0.0


@pytest.mark.parametrize(("reason", "message", "label"), [
    ("BackoffLimitExceeded", "Job has reached the specified backoff limit", "BackoffLimitExceeded"),
    ("BackoffLimitExceeded/", "", "BackoffLimitExceeded"),
    ("BackoffLimitExceeded/OOMKilled", "", "OOMKilled"),
    ("BackoffLimitExceeded/Evicted", "", "Evicted"),
    ("MPIJobEvicted", "2/4 workers are evicted", "Evicted"),
    ("DeadlineExceeded", "Job was active longer than specified deadline", "DeadlineExceeded"),
    ("MPIJobFailed", "OOMKilled", "OOMKilled"),
    ("MPIJobFailed", "MPIJob team-nlp/x has failed", "Error"),
    ("PyTorchJobFailed", "PyTorchJob x is failed because 1 Master replica(s) failed.", "Error"),
    ("BackoffLimitExceeded/ErrImagePull", "", "ImagePullBackOff"),
    ("", "", "Unknown"),
    ("SomethingNew", "whatever 12345", "Other"),
    ("a/b/c-unbounded-text-1234", "", "Other"),
])
def test_failure_reasons_are_a_bounded_set(reason, message, label):
    assert jobmetrics.failure_reason(reason, message) == label


@pytest.mark.parametrize(("reason", "message", "cause_reason", "label"), [
    # a Worker ran out of memory, the Launcher's mpirun exited: the operator's reason is
    # generic, the diagnosed cause is not
    ("BackoffLimitExceeded/Error", "", "OOMKilled", "OOMKilled"),
    ("BackoffLimitExceeded", "Job has reached the specified backoff limit", "OOMKilled",
     "OOMKilled"),
    ("MPIJobFailed", "MPIJob team-nlp/x has failed", "Evicted", "Evicted"),
    ("BackoffLimitExceeded/", "", "ErrImagePull", "ImagePullBackOff"),
    # a generic cause does not hide what the operator or the message say
    ("BackoffLimitExceeded/Error", "", "Error", "Error"),
    ("BackoffLimitExceeded", "", "Error", "BackoffLimitExceeded"),
    ("DeadlineExceeded", "", "Error", "DeadlineExceeded"),
    ("MPIJobFailed", "OOMKilled", "Error", "OOMKilled"),
    ("", "", "Error", "Error"),
    # an unknown cause is never a label value of its own
    ("BackoffLimitExceeded", "", "SomethingNew 1234", "BackoffLimitExceeded"),
    ("MPIJobFailed", "", "", "Error"),
])
def test_the_diagnosed_cause_names_a_failure_better_than_a_generic_reason(
        reason, message, cause_reason, label):
    assert jobmetrics.failure_reason(reason, message, cause_reason) == label

