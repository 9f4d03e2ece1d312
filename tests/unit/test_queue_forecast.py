"""What Kueue will do with a job not yet created (odh/training/queues/forecast.py)."""

from __future__ import annotations

from decimal import Decimal as D

from odh.training.queues.forecast import borrowable, queue_forecast
from odh.training.queues.standing import ExpectedStart

GPU = "nvidia.com/gpu"
LQ = {"metadata": {"name": "gpu-queue"}, "spec": {"clusterQueue": "gpu-a100"}}


def cluster_queue(name: str, gpus: int, used: int = 0, cohort: str = "", strict: bool = False,
                  lend: int | None = None, borrow: int | None = None) -> dict:
    quota = {"name": GPU, "nominalQuota": str(gpus)}
    if lend is not None:
        quota["lendingLimit"] = str(lend)
    if borrow is not None:
        quota["borrowingLimit"] = str(borrow)
    spec = {"resourceGroups": [{"coveredResources": [GPU],
                                "flavors": [{"name": "a100", "resources": [quota]}]}]}
    if cohort:
        spec["cohort"] = cohort
    if strict:
        spec["queueingStrategy"] = "StrictFIFO"
    return {"metadata": {"name": name}, "spec": spec, "status": {"flavorsReservation": [
        {"name": "a100", "resources": [{"name": GPU, "total": str(used)}]}]}}


def waiting(name: str, priority: int = 0) -> dict:
    return {"metadata": {"name": name, "namespace": "team-a"}, "priority": priority}


def test_a_job_that_fits_is_admitted_at_once():
    forecast = queue_forecast({GPU: D(8)}, 0, "gpu-queue", LQ,
                              [cluster_queue("gpu-a100", 16, used=8)], [])
    assert forecast.at_once
    assert forecast.sentence() == ("Kueue should admit it at once: the ClusterQueue gpu-a100 "
                                   "has room (needs 8 GPUs, 8 free now)")


def test_a_job_that_does_not_fit_is_queued_behind_those_of_its_priority_or_higher():
    pending = [waiting("urgent", 1000), waiting("older"), waiting("low", -5)]
    estimates = []

    def estimate(standing, cq, ahead):
        estimates.append([a["metadata"]["name"] for a in ahead])
        return ExpectedStart(600.0, ["the running jobs end when their progress says"])

    forecast = queue_forecast({GPU: D(16)}, 0, "gpu-queue", LQ,
                              [cluster_queue("gpu-a100", 16, used=8)], pending, estimate)
    assert not forecast.at_once
    assert forecast.sentence() == ("Queued in gpu-queue: position 3 of 4 (ClusterQueue "
                                   "gpu-a100), needs 16 GPUs, 8 free now")
    assert forecast.expected_text() == "Expected start: in about 10m"
    assert estimates == [["urgent", "older"]]


def test_strict_fifo_queues_a_job_that_fits_behind_a_waiting_one():
    cqs = [cluster_queue("gpu-a100", 16, used=8, strict=True)]
    assert not queue_forecast({GPU: D(4)}, 0, "gpu-queue", LQ, cqs, [waiting("big")]).at_once
    best_effort = [cluster_queue("gpu-a100", 16, used=8)]
    assert queue_forecast({GPU: D(4)}, 0, "gpu-queue", LQ, best_effort,
                          [waiting("big")]).at_once


def test_the_cohort_lends_what_it_does_not_use_within_its_limits():
    lq = {"spec": {"clusterQueue": "pool-a"}}
    cqs = [cluster_queue("pool-a", 8, used=8, cohort="pool", borrow=6),
           cluster_queue("pool-b", 8, used=0, cohort="pool", lend=4),
           cluster_queue("pool-c", 8, used=6, cohort="pool"),
           cluster_queue("elsewhere", 8, used=0)]
    assert borrowable(cqs[0], cqs) == {GPU: D(6)}  # 4 from b, 2 from c; at most 6
    assert queue_forecast({GPU: D(6)}, 0, "a-queue", lq, cqs, []).at_once
    assert not queue_forecast({GPU: D(7)}, 0, "a-queue", lq, cqs, []).at_once


def test_a_missing_cluster_queue_or_local_queue_is_said():
    gone = queue_forecast({GPU: D(1)}, 0, "gpu-queue", LQ, [], [])
    assert gone.sentence() == ("Kueue: the queue gpu-queue points at the ClusterQueue "
                               "gpu-a100, which does not exist: Kueue would hold the job "
                               "until it does")
    assert queue_forecast({GPU: D(1)}, 0, "nlp", None, [], []).sentence() == (
        "Kueue: the queue nlp does not exist in this project")
