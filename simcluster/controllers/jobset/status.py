"""The JobSet controller's status arithmetic: its child Jobs sorted into the current run's
active, successful and failed ones and those of earlier restarts, `replicatedJobsStatus`,
the metav1.Condition handling (`updateCondition`), and the success and failure policies.

Each function changes the in-memory status and returns the events (type, reason,
message) to record once the status is written, as upstream queues them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simcluster.controllers.conditions import int_or
from simcluster.controllers.jobset import objects

Obj = dict[str, Any]
Event = tuple[str, str, str]

ALL_JOBS_COMPLETED = ("AllJobsCompleted", "jobset completed successfully")
FAILED_JOBS = ("FailedJobs", "jobset failed due to one or more job failures")
REACHED_MAX_RESTARTS = ("ReachedMaxRestarts",
                        "jobset failed due to reaching max number of restarts")
FAIL_ACTION = ("FailJobSetFailurePolicyAction", "applying FailJobSet failure policy action")
RESTART_ACTION = ("RestartJobSetFailurePolicyAction",
                  "applying RestartJobSet failure policy action")
RESTART_IGNORE_MAX_ACTION = (
    "RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction",
    "applying RestartJobSetAndIgnoreMaxRestarts failure policy action")
SUSPENDED = ("SuspendedJobs", "jobset is suspended")
RESUMED = ("ResumeJobs", "jobset is resumed")


@dataclass
class ChildJobs:
    active: list[Obj] = field(default_factory=list)
    successful: list[Obj] = field(default_factory=list)
    failed: list[Obj] = field(default_factory=list)
    previous: list[Obj] = field(default_factory=list)  # of an earlier restart attempt

    def names(self) -> set[str]:
        return {j["metadata"]["name"]
                for j in self.active + self.successful + self.failed + self.previous}


def job_condition(job: Obj, ctype: str) -> Obj | None:
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype and c.get("status") == "True":
            return c
    return None


def classify(js: Obj, jobs: list[Obj]) -> ChildJobs:
    out = ChildJobs()
    current = objects.restarts(js)
    for job in jobs:
        attempt = (job["metadata"].get("labels") or {}).get(objects.RESTART_ATTEMPT, "")
        if not attempt.isdigit() or int(attempt) < current:
            out.previous.append(job)
        elif job_condition(job, "Failed"):
            out.failed.append(job)
        elif job_condition(job, "Complete"):
            out.successful.append(job)
        else:
            out.active.append(job)
    return out


def _rjob_of(job: Obj) -> str:
    return (job["metadata"].get("labels") or {}).get(objects.REPLICATED_JOB_NAME, "")


def replicated_jobs_status(js: Obj, children: ChildJobs) -> list[Obj]:
    counts = {r["name"]: {"name": r["name"], "ready": 0, "succeeded": 0, "failed": 0,
                          "active": 0, "suspended": 0}
              for r in js["spec"]["replicatedJobs"]}
    for job in children.active:
        c = counts.get(_rjob_of(job))
        if c is None:
            continue
        spec, status = job.get("spec") or {}, job.get("status") or {}
        pods = int_or(spec.get("parallelism"), 1) or 0
        completions = int_or(spec.get("completions"), None)
        if completions is not None and completions < pods:
            pods = completions
        if int(status.get("succeeded") or 0) + int(status.get("ready") or 0) >= pods:
            c["ready"] += 1
        if int(status.get("active") or 0) > 0:
            c["active"] += 1
        if spec.get("suspend"):
            c["suspended"] += 1
    for key, jobs in (("succeeded", children.successful), ("failed", children.failed)):
        for job in jobs:
            if _rjob_of(job) in counts:
                counts[_rjob_of(job)][key] += 1
    return list(counts.values())


# -- conditions --------------------------------------------------------------------------------
def finished(status: Obj) -> Obj | None:
    for c in status.get("conditions") or []:
        if c.get("type") in ("Completed", "Failed") and c.get("status") == "True":
            return c
    return None


def set_condition(status: Obj, ctype: str, value: str, reason: str, message: str, now: str,
                  event_type: str) -> list[Event]:
    """updateCondition: a changed status replaces the condition in place; a new condition
    is added only when True; StartupPolicyInProgress and StartupPolicyCompleted exclude
    each other. Returns the event to record when something changed."""
    new = {"type": ctype, "status": value, "lastTransitionTime": now, "reason": reason,
           "message": message}
    conditions = status.setdefault("conditions", [])
    found = changed = False
    exclusive = {"StartupPolicyInProgress": "StartupPolicyCompleted",
                 "StartupPolicyCompleted": "StartupPolicyInProgress"}
    for i, current in enumerate(conditions):
        if current.get("type") == ctype:
            found = True
            if current.get("status") != value:
                conditions[i] = new
                changed = True
        elif exclusive.get(ctype) == current.get("type") and value == "True" and \
                current.get("status") == "True":
            current["status"] = "False"
            changed = True
    if not found and value == "True":
        conditions.append(new)
        changed = True
    if not conditions:
        status.pop("conditions")
    return [(event_type, reason, message)] if changed else []


def _fail(status: Obj, reason: str, message: str, now: str) -> list[Event]:
    events = set_condition(status, "Failed", "True", reason, message, now, "Warning")
    status["terminalState"] = "Failed"
    return events


# -- success and failure policies -------------------------------------------------------------
def success_reached(js: Obj, children: ChildJobs) -> bool:
    policy = js["spec"]["successPolicy"]
    targets = policy.get("targetReplicatedJobs") or [r["name"] for r in
                                                     js["spec"]["replicatedJobs"]]
    matching = sum(1 for j in children.successful if _rjob_of(j) in targets)
    if policy.get("operator") == "Any":
        expected = 1
    else:
        expected = sum(r["replicas"] for r in js["spec"]["replicatedJobs"]
                       if r["name"] in targets)
    return matching >= expected


def complete(status: Obj, now: str) -> list[Event]:
    events = set_condition(status, "Completed", "True", *ALL_JOBS_COMPLETED, now, "Normal")
    status["terminalState"] = "Completed"
    return events


def _failure_time(job: Obj) -> str:
    return (job_condition(job, "Failed") or {}).get("lastTransitionTime") or ""


def _first_failed(jobs: list[Obj]) -> Obj:
    return min(jobs, key=_failure_time)


def _rule_applies(rule: Obj, job: Obj) -> bool:
    reasons = rule.get("onJobFailureReasons") or []
    if reasons and (job_condition(job, "Failed") or {}).get("reason") not in reasons:
        return False
    targets = rule.get("targetReplicatedJobs") or []
    return bool(_rjob_of(job)) and (not targets or _rjob_of(job) in targets)


def with_first(message: str, job: Obj) -> str:
    return f"{message} (first failed job: {job['metadata']['name']})"


def execute_failure_policy(js: Obj, status: Obj, children: ChildJobs,
                           now: str) -> list[Event]:
    """A Job of the current run failed: fail the JobSet, or restart it (status.restarts
    + 1; the next sync deletes the Jobs of the earlier attempt and recreates them)."""
    policy = js["spec"].get("failurePolicy")
    if not isinstance(policy, dict):
        first = _first_failed(children.failed)
        return _fail(status, FAILED_JOBS[0], with_first(FAILED_JOBS[1], first), now)
    action, failed = "RestartJobSet", None
    for rule in policy.get("rules") or []:
        hits = [j for j in children.failed if _rule_applies(rule, j)]
        if hits and isinstance(rule, dict) and rule.get("action"):
            action, failed = rule["action"], _first_failed(hits)
            break
    failed = failed or _first_failed(children.failed)
    if action == "FailJobSet":
        return _fail(status, FAIL_ACTION[0], with_first(FAIL_ACTION[1], failed), now)
    counted = int_or(status.get("restartsCountTowardsMax"), 0) or 0
    if action != "RestartJobSetAndIgnoreMaxRestarts":
        # RestartJobSet, and the actions simcluster does not model (RecreateJob)
        if counted >= (int_or(policy.get("maxRestarts"), 0) or 0):
            return _fail(status, REACHED_MAX_RESTARTS[0],
                         with_first(REACHED_MAX_RESTARTS[1], failed), now)
        status["restartsCountTowardsMax"] = counted + 1
        reason, message = RESTART_ACTION
    else:
        reason, message = RESTART_IGNORE_MAX_ACTION
    status["restarts"] = (int_or(status.get("restarts"), 0) or 0) + 1
    return [("Warning", reason, with_first(message, failed))]
