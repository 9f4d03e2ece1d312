"""The watch hub's index: which job a pod or an event belongs to, and what a change touches."""

from __future__ import annotations

import re

from odh.training.kinds import MPIJOB, PYTORCHJOB
from odh.training.status.jobindex import JobIndex, candidate_job_name, may_concern_training_job
from training.live.hub.groups import job_group, ns_group

NS = "team-nlp"


def job(name: str, uid: str, kind=MPIJOB) -> dict:
    return {"apiVersion": kind.api_version, "kind": kind.kind,
            "metadata": {"name": name, "namespace": NS, "uid": uid, "resourceVersion": "1"}}


def pod(name: str, uid: str, job_name: str) -> dict:
    return {"metadata": {"name": name, "namespace": NS, "uid": uid,
                         "labels": {"training.kubeflow.org/job-name": job_name}}}


def event(uid: str, kind: str, name: str, involved_uid: str = "", when: str = "") -> dict:
    return {"metadata": {"name": f"{name}.{uid}", "namespace": NS, "uid": uid},
            "involvedObject": {"kind": kind, "name": name, "namespace": NS,
                               "uid": involved_uid},
            "lastTimestamp": when or "2026-01-01T00:00:00Z", "reason": "R", "message": "m"}


def test_it_tells_which_job_an_event_may_be_about():
    assert candidate_job_name(event("1", "MPIJob", "bert")) == "bert"
    assert candidate_job_name(event("1", "PyTorchJob", "bert")) == "bert"
    assert candidate_job_name(event("1", "Pod", "bert-large-worker-3")) == "bert-large"
    assert candidate_job_name(event("1", "Pod", "bert-launcher-x7k2p")) == "bert"
    assert candidate_job_name(event("1", "Pod", "a-worker-worker-1")) == "a-worker"
    assert candidate_job_name(event("1", "Pod", "resnet-master-0")) == "resnet"
    assert candidate_job_name(event("1", "Job", "bert-launcher")) == "bert"
    assert candidate_job_name(event("1", "Pod", "web-7d9f8-abcde")) is None
    assert candidate_job_name(event("1", "Node", "gpu-a100-1")) is None
    assert not may_concern_training_job(event("1", "Deployment", "web"))


def test_a_trainjobs_jobset_its_jobs_and_their_pods_are_about_it():
    assert candidate_job_name(event("1", "TrainJob", "llama-ft")) == "llama-ft"
    assert candidate_job_name(event("1", "JobSet", "llama-ft")) == "llama-ft"
    assert candidate_job_name(event("1", "Job", "llama-ft-node-0")) == "llama-ft"
    assert candidate_job_name(event("1", "Job", "llama-ft-dataset-initializer-0")) == "llama-ft"
    assert candidate_job_name(event("1", "Pod", "llama-ft-node-0-3-x7k2p")) == "llama-ft"
    assert candidate_job_name(event("1", "Pod", "pi-launcher-0-0-abcde")) == "pi"
    # a Job of nobody's: neither a launcher nor a replicated job's name
    assert candidate_job_name(event("1", "Job", "nightly-backup")) is None


def test_pods_and_events_touch_every_job_of_that_name():
    index = JobIndex()
    assert index.apply("jobs", "ADDED", job("bert", "j1")) == {(NS, "mpijob", "bert")}
    index.apply("jobs", "ADDED", job("bert", "j2", PYTORCHJOB))
    both = {(NS, "mpijob", "bert"), (NS, "pytorchjob", "bert")}
    assert index.apply("pods", "ADDED", pod("bert-worker-0", "p1", "bert")) == both
    assert index.apply("events", "ADDED", event("e1", "Pod", "bert-worker-0", "p1")) == both
    assert index.apply("events", "ADDED", event("e2", "Node", "n1")) == set()
    data = index.job_data((NS, "mpijob", "bert"))
    assert data is not None and data.kind == MPIJOB
    assert [p["metadata"]["uid"] for p in data.pods] == ["p1"]
    assert [e["metadata"]["uid"] for e in data.events] == ["e1"]


def test_a_known_pod_is_attributed_by_uid_whatever_its_name():
    index = JobIndex()
    index.apply("jobs", "ADDED", job("mnist", "j1"))
    index.apply("pods", "ADDED", pod("mnist-node-0-0-abcde", "p1", "mnist"))
    touched = index.apply("events", "ADDED", event("e1", "Pod", "mnist-node-0-0-abcde", "p1"))
    assert touched == {(NS, "mpijob", "mnist")}


def test_events_are_bounded_per_job_oldest_forgotten():
    index = JobIndex(max_events_per_job=3)
    index.apply("jobs", "ADDED", job("bert", "j1"))
    for i in range(5):
        index.apply("events", "ADDED", event(f"e{i}", "MPIJob", "bert",
                                             when=f"2026-01-01T00:00:0{i}Z"))
    data = index.job_data((NS, "mpijob", "bert"))
    assert sorted(e["metadata"]["uid"] for e in data.events) == ["e2", "e3", "e4"]
    assert index.counts()["events"] == 3


def test_a_late_delete_of_an_earlier_job_keeps_its_successor():
    index = JobIndex()
    index.apply("jobs", "ADDED", job("bert", "old"))
    index.apply("jobs", "ADDED", job("bert", "new"))  # deleted and created again, quickly
    index.apply("jobs", "DELETED", job("bert", "old"))
    assert index.job_data((NS, "mpijob", "bert")).job["metadata"]["uid"] == "new"
    index.apply("jobs", "DELETED", job("bert", "new"))
    assert index.job_data((NS, "mpijob", "bert")) is None
    assert index.job_keys() == []


def test_group_names_are_valid_for_channels():
    valid = re.compile(r"[A-Za-z0-9._-]{1,99}")
    assert ns_group("team-nlp") == "ns.team-nlp"
    assert job_group("team-nlp", "bert-large-pretrain") == "job.team-nlp.bert-large-pretrain"
    long = job_group("a" * 63, "b" * 200)
    assert valid.fullmatch(long) and long.startswith("job.aaa")
    assert long != job_group("a" * 63, "b" * 199)
    odd = job_group("team nlp", "bert/x")
    assert valid.fullmatch(odd) and odd.startswith("job.team-nlp.bert-x-")


def test_a_deleted_jobs_events_are_forgotten_and_so_are_orphans_after_a_while():
    from datetime import UTC, datetime, timedelta

    from odh.training.kinds import MPIJOB
    from odh.training.status.jobindex import JobIndex

    def event(uid: str, name: str, minutes_ago: float) -> dict:
        at = (datetime.now(UTC) - timedelta(minutes=minutes_ago)).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
        return {"metadata": {"uid": uid, "namespace": "ns", "name": f"{name}.{uid}"},
                "involvedObject": {"kind": "MPIJob", "name": name, "namespace": "ns"},
                "reason": "MPIJobCreated", "lastTimestamp": at}

    index = JobIndex()
    job = {"metadata": {"uid": "j1", "namespace": "ns", "name": "bert"}}
    index.apply("jobs", "ADDED", job, MPIJOB)
    index.apply("events", "ADDED", event("e1", "bert", 1))
    assert index.counts()["events"] == 1
    index.apply("jobs", "DELETED", job, MPIJOB)
    assert index.counts()["events"] == 0  # no page shows a deleted job's events
    # an event about a job the index does not have (late, or before the job's own news)
    index.apply("events", "ADDED", event("e2", "gone", 10))
    index.apply("events", "ADDED", event("e3", "soon", 1))
    assert index.forget_orphan_events(datetime.now(UTC) - timedelta(minutes=5)) == 1
    assert index.counts()["events"] == 1  # the recent one stays: its job may come


def test_what_the_indexed_pods_hold_follows_them_as_they_change_and_go():
    index = JobIndex()
    index.apply("jobs", "ADDED", job("train", "j1"))

    def bound(name: str, uid: str, gpus: str, phase: str = "Running") -> dict:
        p = pod(name, uid, "train")
        p["spec"] = {"nodeName": "gpu-0", "containers": [
            {"name": "c", "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}
        p["status"] = {"phase": phase}
        return p

    def gpus() -> dict:
        return dict(index.holdings().by_namespace("nvidia.com/gpu"))

    index.apply("pods", "ADDED", bound("train-worker-0", "p0", "4"))
    index.apply("pods", "ADDED", bound("train-worker-1", "p1", "4"))
    assert gpus() == {NS: 8}
    index.apply("pods", "MODIFIED", bound("train-worker-1", "p1", "4", phase="Failed"))
    assert gpus() == {NS: 4}
    index.apply("pods", "DELETED", bound("train-worker-0", "p0", "4"))
    assert gpus() == {}
    copy = index.holdings()
    index.apply("pods", "ADDED", bound("train-worker-2", "p2", "2"))
    assert dict(copy.by_namespace("nvidia.com/gpu")) == {}  # a copy does not move
    assert gpus() == {NS: 2}
