"""The job list's filters by creator, creation date and label selector
(odh.training.status.lists.listing), as the address carries them."""

from __future__ import annotations

from odh.training.status.lists import listing
from odh.training.status.summarize import summarize


def _job(name: str, created: str, creator: str = "", labels: dict | None = None) -> dict:
    return {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "team-nlp", "creationTimestamp": created,
                     "labels": labels or {},
                     "annotations": {"opendatahub.io/username": creator} if creator else {}},
        "spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1}, "Worker": {"replicas": 2}}},
    }


JOBS = [
    _job("bert", "2026-11-01T10:00:00Z", "alice", {"team": "nlp", "tier": "test"}),
    _job("gpt", "2026-11-15T23:59:59Z", "bob", {"team": "nlp"}),
    _job("yolo", "2026-11-16T00:00:00Z", "alice", {"team": "cv"}),
    _job("orphan", "2026-11-20T08:00:00Z"),
]
SUMMARIES = [summarize(job, []) for job in JOBS]
OBJECTS = {("team-nlp", "mpijob", job["metadata"]["name"]): (job, []) for job in JOBS}


def _names(query: dict) -> list[str]:
    filters = listing.JobFilters.from_query({"sort": "name", **query})
    return [s.name for s in listing.apply(SUMMARIES, filters, listing.labels_from(OBJECTS))]


def test_it_keeps_the_jobs_a_person_created():
    assert _names({"user": "alice"}) == ["bert", "yolo"]
    assert _names({"user": "carol"}) == []


def test_a_date_range_takes_whole_days_both_included():
    assert _names({"from": "2026-11-15", "to": "2026-11-15"}) == ["gpt"]
    assert _names({"from": "2026-11-16"}) == ["orphan", "yolo"]
    assert _names({"to": "2026-11-01"}) == ["bert"]


def test_a_label_selector_is_read_as_kubectl_reads_it():
    assert _names({"labels": "team=nlp"}) == ["bert", "gpt"]
    assert _names({"labels": "team=nlp,tier!=test"}) == ["gpt"]
    assert _names({"labels": "!team"}) == ["orphan"]
    assert _names({"labels": "team in (cv, nlp)", "user": "alice"}) == ["bert", "yolo"]


def test_filters_combine_with_the_existing_ones():
    assert _names({"labels": "team=nlp", "q": "gp"}) == ["gpt"]
    assert _names({"user": "alice", "status": "Running"}) == []


def test_a_selector_that_cannot_be_read_says_how_and_is_kept_as_typed():
    filters = listing.JobFilters.from_query({"labels": "team in nlp"})
    assert filters.labels == "team in nlp"
    assert "write KEY=VALUE" in filters.problem("labels")
    assert filters.selector is None
    assert _names({"labels": "team in nlp"}) == ["bert", "gpt", "orphan", "yolo"]


def test_a_date_that_cannot_be_read_or_a_range_backwards_says_how():
    bad = listing.JobFilters.from_query({"from": "15/11/2026"})
    assert bad.problem("from") == "“15/11/2026” is not a date: write YYYY-MM-DD, e.g. 2026-03-31."
    assert bad.created_from == "15/11/2026"
    backwards = listing.JobFilters.from_query({"from": "2026-11-16", "to": "2026-11-01"})
    assert "on or after 2026-11-16" in backwards.problem("to")
    assert _names({"from": "2026-11-16", "to": "2026-11-01"}) == [
        "bert", "gpt", "orphan", "yolo"]

