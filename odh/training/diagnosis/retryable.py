"""Which failures an automatic retry may answer (odh/training/manifests/retries.py): those
the diagnosis puts on the platform, not on the job: its node lost, a pod evicted, a pod
preempted (the diagnosis files a preemption under capacity; for a retry it is the
platform's doing all the same: the same job may well run once the higher-priority work is
done). An out-of-memory kill, a bad image, a crash of the program would fail the same way
again: retried only when the person asked for every failure (`retry-on: all`)."""

from __future__ import annotations

from dataclasses import dataclass

from odh.training.diagnosis.model import Culprit
from odh.training.manifests.retries import RetryPolicy

PLATFORM_SCENARIOS = frozenset({"evicted", "node-lost", "preempted"})


def platform_failure(scenario: str, culprit: str = "") -> bool:
    """Is a failure so diagnosed (its scenario's slug, whose problem it is) the platform's?"""
    return scenario in PLATFORM_SCENARIOS or culprit == Culprit.PLATFORM


@dataclass(frozen=True)
class RetryDecision:
    """Whether to retry a failed job, and which retry that would be (`attempt`: 1 for the
    first retry); `why` is a short structured reason, for logs and tests."""

    retry: bool
    attempt: int
    why: str


def decide(policy: RetryPolicy, attempt_done: int, scenario: str,
           culprit: str = "") -> RetryDecision:
    """A job that asked for `policy` failed, diagnosed `scenario`; it was itself the
    `attempt_done`-th retry (0: the first job)."""
    attempt = attempt_done + 1
    if policy.retries <= 0:
        return RetryDecision(False, attempt, "not-asked")
    if attempt > policy.retries:
        return RetryDecision(False, attempt, "retries-used")
    if not policy.all_failures and not platform_failure(scenario, culprit):
        return RetryDecision(False, attempt, "not-platform")
    return RetryDecision(True, attempt, "platform" if platform_failure(scenario, culprit)
                         else "all")
