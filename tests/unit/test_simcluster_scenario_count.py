"""A scenario's `jobs[].count`: many jobs from one entry (simcluster/scenario.py)."""

from __future__ import annotations

import pytest

from simcluster.scenario import ScenarioError, _expand_jobs


def _job(name: str, **extra) -> dict:
    return {"ago": "5m", "as": "alice", **extra,
            "manifest": {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                         "metadata": {"name": name, "namespace": "team-nlp"}}}


def test_it_makes_count_jobs_named_by_their_number():
    jobs = _expand_jobs([_job("bulk-{i}", count=3), _job("single")])
    assert [j["manifest"]["metadata"]["name"] for j in jobs] == [
        "bulk-0", "bulk-1", "bulk-2", "single"]
    assert all(j["ago"] == "5m" and j["as"] == "alice" and "count" not in j for j in jobs)
    jobs[0]["manifest"]["metadata"]["labels"] = {"x": "y"}  # copies, not one shared object
    assert "labels" not in jobs[1]["manifest"]["metadata"]


@pytest.mark.parametrize(("entry", "message"), [
    (_job("bulk", count=2), "with count > 1 the manifest's name needs {i}"),
    (_job("bulk-{i}", count=0), "jobs[0].count: a whole number of at least 1"),
    (_job("bulk-{i}", count="many"), "jobs[0].count: a whole number of at least 1"),
    ({"ago": "5m"}, "jobs[0]: each job needs a manifest"),
])
def test_it_says_what_is_wrong_with_an_entry(entry, message):
    with pytest.raises(ScenarioError) as refused:
        _expand_jobs([entry])
    assert message in str(refused.value)
