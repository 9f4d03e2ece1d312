"""simcluster's retries back off exponentially, capped, however long they go on."""

from __future__ import annotations

from simcluster.backoff import exponential


def test_it_doubles_up_to_its_cap():
    assert [exponential(0.5, n, 60.0) for n in range(-1, 9)] == [
        0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]


def test_a_pod_tried_for_hours_still_gets_a_delay():
    """A pod that never fits is tried again at every change of the cluster: after an hour
    of churn its count passed 1024, where 2 ** n no longer fits a float (the scheduler
    stopped scheduling anything, found by benchmarks/soak.py)."""
    assert exponential(1.0, 5000, 10.0) == 10.0
    assert exponential(0.005, 10**9, 1000.0) == 1000.0
