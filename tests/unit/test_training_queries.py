"""Listing jobs cluster-wide when some kinds (or pods) may not be listed everywhere
(odh.training.status.queries.list_summaries)."""

from __future__ import annotations

from odh.training import errors
from odh.training.kinds import KINDS
from odh.training.status.queries import list_summaries

MPI, TF = KINDS["mpijob"], KINDS["tfjob"]


def _job(kind, namespace: str, name: str) -> dict:
    return {"apiVersion": kind.api_version, "kind": kind.kind,
            "metadata": {"name": name, "namespace": namespace, "uid": f"{namespace}-{name}"},
            "spec": {}}


class FakeClient:
    """Jobs per (kind, namespace); cluster-wide lists refused for `refused` kinds (and
    "pods")."""

    def __init__(self, jobs: dict, refused: set[str]) -> None:
        self.jobs = jobs
        self.refused = refused
        self.calls: list[tuple[str, str | None]] = []

    def list_jobs(self, kind, namespace=None):
        self.calls.append((kind.slug, namespace))
        if namespace is None:
            if kind.slug in self.refused:
                raise errors.Forbidden(f"{kind.plural} is forbidden", status=403)
            return [j for (k, _ns), items in self.jobs.items() if k == kind.slug for j in items]
        return list(self.jobs.get((kind.slug, namespace), []))

    def list_job_pods(self, namespace, job_name=None, kind=None):
        self.calls.append(("pods", namespace))
        if namespace is None and "pods" in self.refused:
            raise errors.Forbidden("pods is forbidden", status=403)
        return []


JOBS = {("mpijob", "team-nlp"): [_job(MPI, "team-nlp", "bert")],
        ("mpijob", "research"): [_job(MPI, "research", "other")],
        ("tfjob", "research"): [_job(TF, "research", "mnist")],
        ("tfjob", "team-nlp"): [_job(TF, "team-nlp", "mine")]}


def test_a_kind_refused_cluster_wide_is_named_and_listed_in_the_fallback():
    client = FakeClient(JOBS, refused={"tfjob"})
    asked = []
    listing = list_summaries(client, None, [MPI, TF],
                             fallback=lambda: asked.append(1) or ["team-nlp"])
    names = sorted(s.name for s in listing.summaries)
    assert names == ["bert", "mine", "other"]  # MPIJobs everywhere, TFJobs of team-nlp
    assert listing.forbidden_kinds == [TF]
    assert not listing.pods_forbidden and listing.forbidden_namespaces == []
    assert asked == [1]


def test_without_a_fallback_the_refused_kind_is_hidden_not_an_error():
    listing = list_summaries(FakeClient(JOBS, refused={"tfjob"}), None, [MPI, TF])
    assert sorted(s.name for s in listing.summaries) == ["bert", "other"]
    assert listing.forbidden_kinds == [TF]


def test_pods_refused_cluster_wide_are_listed_in_the_fallback():
    client = FakeClient(JOBS, refused={"pods"})
    listing = list_summaries(client, None, [MPI], fallback=lambda: ["team-nlp", "team-cv"])
    assert listing.pods_forbidden
    assert ("pods", "team-nlp") in client.calls and ("pods", "team-cv") in client.calls
    assert sorted(s.name for s in listing.summaries) == ["bert", "other"]


def test_the_fallback_is_asked_once_however_many_kinds_are_refused():
    asked = []
    list_summaries(FakeClient(JOBS, refused={"mpijob", "tfjob", "pods"}), None, [MPI, TF],
                   fallback=lambda: asked.append(1) or [])
    assert asked == [1]
