"""The diagnosis of failing, waiting and unwell jobs: one computation for every place that
says why (the job page's error card, the list row's one line, the highlighted pod in
Topology, `odh training describe`, the SDK's exceptions), so they cannot disagree.

    facts = Facts(job, pods, events, logs=..., quotas=..., nodes=...)   # facts.py
    diagnosis = diagnose(facts)   # a Diagnosis, or None for a job that is doing fine

`gather.gather(client, ...)` reads the facts with one person's credentials, bounded in
time; everything else here is pure and framework-free. The scenarios, each with its page
in the troubleshooting guide (docs/troubleshooting/<scenario>.md):

- Failed: OOMKilled, evicted, node lost, preempted, deadline exceeded, CUDA out of
  memory (log), command not found / not executable (127/126), segfault (139), MPI
  communication (the Launcher's log), exit code with the last error lines; else "We
  could not tell why".
- Pending: invalid job, refused by a LimitRange or admission, quota, a missing
  volume/Secret/ConfigMap, image pull, a pod's start-up failing (as for Failed), can
  never fit a node, waiting for GPUs.
- Running: a pod failed or restarts (as for Failed), image pull or a missing object on
  a pod, possible hang (log timestamps, GPUs idle), low GPU utilization.

A job's generic verdict (BackoffLimitExceeded, MPIJobFailed) is never the headline when a
pod explains it: it is kept as evidence, as the consequence it is. A pod problem no rule
knows gives "We could not tell why" with the cluster's own reason and message.
"""

from __future__ import annotations

from odh.training.diagnosis.facts import Facts, GpuHolder, LogTail, SimilarRun, Usage
from odh.training.diagnosis.guide import PAGES, page_title
from odh.training.diagnosis.model import (
    Action,
    Culprit,
    Diagnosis,
    Evidence,
    JobFix,
    Severity,
    Suggestion,
    culprit_title,
)
from odh.training.diagnosis.rules import failures, no_room, pending, pod_setup, running
from odh.training.i18n import _
from odh.training.status.summary import JobStatus

__all__ = ["PAGES", "Action", "Culprit", "Diagnosis", "Evidence", "Facts", "GpuHolder",
           "JobFix", "LogTail", "Severity", "SimilarRun", "Suggestion", "Usage",
           "culprit_title", "diagnose", "page_title"]


def _first(rules, facts: Facts) -> Diagnosis | None:
    for rule in rules:
        found = rule(facts)
        if found is not None:
            return found
    return None


def _pod_problem(facts: Facts) -> Diagnosis | None:
    """A pod in trouble that no rule explains: say so, with the cluster's words."""
    problems = [r for r in facts.s.replicas if r.exists and r.problem]
    if not problems:
        return None
    first = problems[0]
    return failures.unknown(facts, _("We could not tell what is wrong with %(pod)s")
                            % {"pod": first.label}, first.reason or first.status,
                            first.message, first)


def _troubled_pod(facts: Facts) -> Diagnosis | None:
    """A job still under way with a pod that failed or restarts: the cause if a rule
    knows it, else that it restarts, else its exit code."""
    return (_first(failures.CAUSE_RULES, facts) or running.worker_restarting(facts)
            or failures.exit_code(facts))


def diagnose(facts: Facts) -> Diagnosis | None:
    """Why the job failed, waits or looks unwell; None when it is doing fine (or done)."""
    status = facts.s.status
    if status == JobStatus.FAILED:
        found = _first(failures.FAILURE_RULES, facts) or failures.unknown_failure(facts)
    elif status == JobStatus.PENDING:
        found = (_first(pending.PENDING_RULES, facts) or _troubled_pod(facts)
                 or no_room.waiting_for_capacity(facts) or _pod_problem(facts))
    elif status == JobStatus.RUNNING:
        found = (_troubled_pod(facts) or pod_setup.image_pull(facts) or pod_setup.volume(facts)
                 or _first(running.RUNNING_RULES, facts) or _pod_problem(facts))
    else:
        return None
    if found is not None:
        found.unread = list(dict.fromkeys(found.unread + facts.unread))
        # only the fixes this kind's spec can carry (a TrainJob's runtime sizes its
        # Launcher: no "Clone with more memory for the Launcher")
        found.suggestions = [s for s in found.suggestions if s.fix is None
                             or all(facts.s.kind.sets(name) for name in s.fix.fields)]
    return found
