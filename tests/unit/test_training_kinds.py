"""The training job kinds: how objects are recognised, and that every kind answers the
questions the pages ask of it (odh/training/kinds/)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from odh.training.kinds import (
    KINDS,
    MPIJOB,
    PYTORCHJOB,
    TFJOB,
    TRAINJOB,
    creatable_kinds,
    default_kind,
    kind_for_object,
    kind_for_slug,
    wizard_kinds,
)


def test_constants_describe_each_api():
    assert (MPIJOB.api_version, MPIJOB.plural, MPIJOB.replica_specs_field, MPIJOB.label) == (
        "kubeflow.org/v2beta1", "mpijobs", "mpiReplicaSpecs", "MPIJob")
    assert (PYTORCHJOB.api_version, PYTORCHJOB.plural, PYTORCHJOB.replica_specs_field) == (
        "kubeflow.org/v1", "pytorchjobs", "pytorchReplicaSpecs")
    assert (TFJOB.api_version, TFJOB.plural, TFJOB.replica_specs_field) == (
        "kubeflow.org/v1", "tfjobs", "tfReplicaSpecs")
    assert (TRAINJOB.api_version, TRAINJOB.plural, TRAINJOB.replica_specs_field) == (
        "trainer.kubeflow.org/v1alpha1", "trainjobs", "")


def test_kinds_are_keyed_by_slug():
    assert list(KINDS) == ["mpijob", "pytorchjob", "tfjob", "trainjob"]
    assert all(KINDS[slug].slug == slug for slug in KINDS)
    assert kind_for_slug("tfjob") is TFJOB


def test_unknown_slug_raises_key_error():
    with pytest.raises(KeyError):
        kind_for_slug("MPIJob")


@pytest.mark.parametrize(("obj", "expected"), [
    ({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob"}, MPIJOB),
    ({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob"}, PYTORCHJOB),
    ({"apiVersion": "kubeflow.org/v1", "kind": "TFJob"}, TFJOB),
    ({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"}, TRAINJOB),
    ({"apiVersion": "kubeflow.org/v1", "kind": "MPIJob"}, None),  # the old MPIJob API
    ({"apiVersion": "batch/v1", "kind": "Job"}, None),
    ({}, None),
])
def test_kind_for_object_matches_api_version_and_kind(obj, expected):
    assert kind_for_object(obj) is expected


def test_odh_imports_neither_django_nor_the_app_nor_simcluster():
    # A fresh interpreter, so nothing imported by other tests can hide a violation.
    script = (
        "import importlib, pkgutil, sys\n"
        "import odh.training\n"
        "for info in pkgutil.walk_packages(odh.training.__path__, 'odh.training.'):\n"
        "    importlib.import_module(info.name)\n"
        "bad = sorted(m for m in sys.modules\n"
        "             if m.split('.')[0] in ('django', 'training', 'simcluster', 'dashboard'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == ""


# -- every kind answers what the pages ask (a new kind without a sample here fails) ---------
def _pod(name: str, labels: dict, gpus: int = 0) -> dict:
    resources = {"requests": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    return {"metadata": {"name": name, "namespace": "team", "labels": labels},
            "spec": {"containers": [{"name": "main", "resources": resources}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "main", "ready": True, "restartCount": 0,
                 "state": {"running": {"startedAt": "2026-11-29T10:00:00Z"}}}]}}


def _v1_job(kind, roles: dict[str, int]) -> dict:
    return {"apiVersion": kind.api_version, "kind": kind.kind,
            "metadata": {"name": "run", "namespace": "team"},
            "spec": {kind.replica_specs_field: {
                role: {"replicas": count, "template": {"spec": {"containers": [
                    {"name": "main", "resources": {} if role == "Launcher" else
                     {"limits": {"nvidia.com/gpu": "1"}}}]}}}
                for role, count in roles.items()}}}


def _v1_pods(kind, roles: dict[str, int]) -> list[dict]:
    return [_pod(f"run-{role.lower()}-{i}", {
        "training.kubeflow.org/job-name": "run",
        "training.kubeflow.org/operator-name": kind.operator_name,
        "training.kubeflow.org/replica-type": role.lower(),
        "training.kubeflow.org/replica-index": str(i)}, gpus=1)
        for role, count in roles.items() for i in range(count)]


def _sample(kind) -> tuple[dict, list[dict], list[tuple[str, int | None]]]:
    """(a job of this kind, its pods as its operator labels them, (role, index) of each)"""
    if kind is MPIJOB:
        job = _v1_job(kind, {"Launcher": 1, "Worker": 2})
        mpi = {"training.kubeflow.org/job-name": "run",
               "training.kubeflow.org/operator-name": "mpi-operator"}
        pods = [_pod("run-launcher-x7k2q", {**mpi, "training.kubeflow.org/job-role": "launcher"}),
                *(_pod(f"run-worker-{i}", {**mpi, "training.kubeflow.org/job-role": "worker",
                                           "training.kubeflow.org/replica-index": str(i)},
                       gpus=1) for i in range(2))]
        return job, pods, [("Launcher", None), ("Worker", 0), ("Worker", 1)]
    if kind is PYTORCHJOB:
        roles = {"Master": 1, "Worker": 2}
        return (_v1_job(kind, roles), _v1_pods(kind, roles),
                [("Master", 0), ("Worker", 0), ("Worker", 1)])
    if kind is TFJOB:
        roles = {"Chief": 1, "PS": 1, "Worker": 2}
        return (_v1_job(kind, roles), _v1_pods(kind, roles),
                [("Chief", 0), ("PS", 0), ("Worker", 0), ("Worker", 1)])
    if kind is TRAINJOB:
        job = {"apiVersion": kind.api_version, "kind": kind.kind,
               "metadata": {"name": "run", "namespace": "team"},
               "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {
                   "numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": "1"}}}}}
        pods = [_pod(f"run-node-0-{i}-ab{i}cd", {
            "jobset.sigs.k8s.io/jobset-name": "run",
            "jobset.sigs.k8s.io/replicatedjob-name": "node",
            "batch.kubernetes.io/job-completion-index": str(i)}, gpus=1) for i in range(2)]
        return job, pods, [("Worker", 0), ("Worker", 1)]
    raise AssertionError(f"add a sample job of {kind.kind} to this test")


@pytest.mark.parametrize("kind", list(KINDS.values()), ids=list(KINDS))
def test_every_kind_answers_what_the_pages_ask(kind):
    from odh.training.metrics.promql import pod_regex
    from odh.training.status.summarize import job_pods, summarize

    job, pods, roles = _sample(kind)
    assert kind_for_object(job) is kind
    assert kind.lead_role == kind.roles[0]
    # the pods found, each under its role and index, in the order the pages list them
    found = job_pods(kind, job, pods)
    assert [(p.role, p.index) for p in found] == roles
    # a same-named job of another kind does not take them
    others = [k for k in KINDS.values() if k.pod_job_label == kind.pod_job_label
              and k.operator_name and kind.operator_name and k is not kind]
    for other in others:
        assert job_pods(other, {**job, "kind": other.kind}, pods) == []
    # how many pods the spec asks for, and the GPUs of the whole job
    summary = summarize(job, pods)
    assert summary.kind is kind
    assert summary.total == len(roles)
    assert summary.gpus == sum(1 for p in pods if "nvidia" in str(p["spec"]))
    # the charts select exactly its pods by name
    assert all(re.fullmatch(pod_regex(kind, "run"), p["metadata"]["name"]) for p in pods)
    assert not re.fullmatch(pod_regex(kind, "run"), "run2-worker-0")
    # a pod not created yet is shown under the name its operator will give it
    assert re.fullmatch(pod_regex(kind, "run"), kind.placeholder_name("run", "Worker", 3)) \
        or kind.placeholder_name("run", "Worker", 3).startswith("run-")
    # what its pages may offer
    assert isinstance(kind.creatable, bool) and isinstance(kind.runs_mpirun, bool)
    assert kind.creatable == (kind in creatable_kinds())
    _spec_answers(kind, job)


def _spec_answers(kind, job):
    """A kind created here makes, builds, reads back, copies and checks its spec; another
    says in words that it is not created here."""
    from odh.training.findings import ValidationContext
    from odh.training.kinds import ManifestError
    from odh.training.spec import build_manifest, clone_spec, new_spec, read_manifest
    from odh.training.validation import validate_spec

    if not kind.creatable:
        with pytest.raises(ManifestError, match="does not create"):
            kind.new_spec(name="x")
        # a pasted manifest of this kind is refused by the kind made by default, saying
        # what it expected
        with pytest.raises(ManifestError, match="expected"):
            read_manifest(job)
        return
    spec = new_spec(kind, name="run", namespace="team-nlp", image="quay.io/t/run:1",
                    command=["mpirun", "python", "train.py"], workers=2)
    assert spec.kind is kind and type(spec) is kind.spec_model.spec_class
    manifest = build_manifest(spec)
    assert kind_for_object(manifest) is kind
    assert read_manifest(manifest) == spec
    copy = clone_spec(read_manifest(manifest), "run-2")
    assert copy.name == "run-2" and copy.kind is kind
    assert [f for f in validate_spec(spec) if f.is_error] == []
    # the kind's own rules run with the shared ones
    for rule in kind.spec_model.rules:
        assert list(rule(spec, ValidationContext())) == []


def test_the_mpijob_and_the_trainjob_are_created_here_and_in_the_wizard():
    assert creatable_kinds() == [MPIJOB, TRAINJOB]
    assert wizard_kinds() == [MPIJOB, TRAINJOB] and default_kind() is MPIJOB
    assert [k for k in KINDS.values() if k.runs_mpirun] == [MPIJOB]
    assert str(MPIJOB.waiting_for_controller) == "Waiting for the MPI Operator"
    assert str(PYTORCHJOB.waiting_for_controller) == "Waiting for the Training Operator"
    assert TRAINJOB.waiting_for_controller is None


def test_a_pod_names_its_job_by_its_operators_label_or_its_jobsets():
    from odh.training.cluster.jobcalls import other_pods_selector
    from odh.training.kinds import pod_job_labels, pod_job_name

    assert pod_job_labels() == ("training.kubeflow.org/job-name", "jobset.sigs.k8s.io/jobset-name")
    assert pod_job_name({"training.kubeflow.org/job-name": "bert"}) == "bert"
    assert pod_job_name({"jobset.sigs.k8s.io/jobset-name": "llama",
                         "jobset.sigs.k8s.io/replicatedjob-name": "node"}) == "llama"
    assert pod_job_name({"app": "notebook"}) == ""
    # the pods of no training job: neither label
    assert other_pods_selector() == ("!training.kubeflow.org/job-name,"
                                     "!jobset.sigs.k8s.io/jobset-name")
