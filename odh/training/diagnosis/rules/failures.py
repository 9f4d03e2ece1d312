"""Why a pod (and so the job) failed: killed for memory, evicted, its node lost, preempted,
out of GPU memory, a missing or broken program, MPI unable to reach its Workers, a plain
non-zero exit. Each rule returns a Diagnosis or None; `diagnose` tries them in order, the
causes before their consequences (a Worker's OOM kill before the Launcher's exit code,
both before the operator's BackoffLimitExceeded)."""

from __future__ import annotations

from odh.training.cluster.events import event_time, involved
from odh.training.diagnosis import fixes as f
from odh.training.diagnosis import logs, suggest
from odh.training.diagnosis.common import (
    event_evidence,
    job_events,
    labels,
    names,
    pod_events,
    quote,
    raw_pod,
    replicas_workers_first,
    several,
    tails,
)
from odh.training.diagnosis.facts import Facts
from odh.training.diagnosis.model import Culprit, Diagnosis, Evidence, Severity
from odh.training.diagnosis.rules.mpi_network import mpi_communication
from odh.training.diagnosis.rules.program import command_problem, cuda_out_of_memory, segfault
from odh.training.diagnosis.rules.shared import consequence, exit_meaning
from odh.training.durations import format_duration
from odh.training.i18n import _, ngettext
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import format_memory
from odh.training.status.pods import (
    ReplicaState,
)
from odh.training.status.summary import JobStatus


def _failed(replica: ReplicaState, reason: str) -> bool:
    return replica.reason == reason


# -- killed for memory ------------------------------------------------------------------------
def oom_killed(facts: Facts) -> Diagnosis | None:
    victims = [r for r in replicas_workers_first(facts) if _failed(r, "OOMKilled")]
    if not victims:
        return None
    first = victims[0]
    pod = raw_pod(facts, first.name)
    request, limit = f.pod_memory(pod)
    peak = (facts.usage.memory_peak.get(first.name) if facts.usage else None) or None
    evidence = [Evidence("state", _("Container state OOMKilled, exit code 137: the kernel "
                                    "killed it for using more memory than its limit."),
                         first.label, first.finished)]
    if limit:
        evidence.append(Evidence("number", _("Memory request %(request)s, limit %(limit)s.")
                                 % {"request": format_memory(request),
                                    "limit": format_memory(limit)}, first.label))
    if peak and limit:
        share = round(100 * peak / float(limit))
        text = _("Peak memory use %(peak)s, %(percent)d%% of its limit") % {
            "peak": approx_memory(peak), "percent": share}
        if share >= 90:
            text += ": " + _("it used almost all of its memory before it was killed.")
        evidence.append(Evidence("number", text, first.label))
    spec = f.spec_of(facts.job)
    found: list = []
    if spec is not None:
        found += suggest.fix(f.memory_fix(facts, spec, first.role == "Launcher", peak))
        batch = f.batch_size_fix(spec)
        found += suggest.fix(batch) if batch else [suggest.advice(
            _("Use a smaller batch size per rank: memory grows with it."))]
    found += [suggest.advice(_("Turn on gradient checkpointing: it trades some compute for "
                               "much less activation memory.")),
              suggest.advice(_("Train in mixed precision (bf16 or fp16): tensors take half "
                               "the memory."))]
    found += suggest.similar(facts) + suggest.logs(first)
    found.append(suggest.metrics("memory", _("See %(pod)s's memory over the run on the "
                                             "Metrics tab") % {"pod": first.label}))
    found.append(suggest.guide("oom-killed"))
    return Diagnosis(
        "oom-killed", Severity.ERROR, Culprit.CONFIGURATION,
        ngettext("%(pod)s ran out of memory and was killed (exit code 137)",
                 "%(pod)s ran out of memory and were killed (exit code 137)", len(victims))
        % {"pod": several(victims)},
        consequence(facts, evidence), names(victims), labels(victims), found,
        raw_reason="OOMKilled", raw_message=first.message)


def approx_memory(value: float) -> str:
    """A measured amount of memory, to a tenth: "47.6Gi", "512Mi"."""
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20)):
        if value >= size:
            text = f"{value / size:.1f}".removesuffix(".0")
            return f"{text}{unit}"
    return f"{int(value)}"


# -- the node or the scheduler took the pod away -----------------------------------------------
def evicted(facts: Facts) -> Diagnosis | None:
    victims = [r for r in replicas_workers_first(facts) if _failed(r, "Evicted")]
    if not victims:
        return None
    first = victims[0]
    text = first.message
    why = _("the node ran low on memory") if "low on resource: memory" in text else \
        _("the node ran low on disk space") if "ephemeral-storage" in text else \
        _("the node needed its resources back")
    evidence = [Evidence("state", quote(text) or _("The pod's status says Evicted."),
                         first.label, first.finished)]
    evidence += [event_evidence(e, first.label) for e in pod_events(facts, first.name,
                                                                      "Evicted")[-1:]]
    found = [suggest.retry(_("Retry the job: an eviction comes from the node, not from the "
                              "job's configuration.")),
             suggest.advice(_("Ask for as much memory as the job uses (request equal to "
                              "limit): such pods are the last a node evicts."))]
    found += suggest.logs(first) + [suggest.guide("evicted")]
    return Diagnosis(
        "evicted", Severity.ERROR, Culprit.PLATFORM,
        ngettext("%(pod)s was evicted: %(why)s", "%(pod)s were evicted: %(why)s",
                 len(victims)) % {"pod": several(victims), "why": why},
        consequence(facts, evidence), names(victims), labels(victims), found,
        raw_reason="Evicted", raw_message=text)


def node_lost(facts: Facts) -> Diagnosis | None:
    victims = [r for r in replicas_workers_first(facts)
               if r.reason == "NodeLost" or pod_events(facts, r.name, "NodeNotReady")
               or _disruption(raw_pod(facts, r.name)) in ("DeletionByTaintManager",
                                                           "DeletionByPodGC")]
    if not victims:
        return None
    first = victims[0]
    evidence = [Evidence("state", quote(first.message) or _("The pod's node stopped "
                                                            "reporting."), first.label)]
    evidence += [event_evidence(e, first.label)
                 for e in pod_events(facts, first.name, "NodeNotReady")[-1:]]
    found = [suggest.retry(_("Retry the job: the node failed, not the job.")),
             suggest.advice(_("Save checkpoints regularly, so that a retry resumes instead "
                              "of starting over.")),
             suggest.advice(_("Tell your administrator which node it was if it happens "
                              "again."))]
    found += [suggest.guide("node-lost")]
    return Diagnosis(
        "node-lost", Severity.ERROR, Culprit.PLATFORM,
        ngettext("%(pod)s's node %(node)s stopped responding",
                 "The node %(node)s of %(pod)s stopped responding", len(victims))
        % {"pod": several(victims), "node": first.node or _("(unknown)")},
        consequence(facts, evidence), names(victims), labels(victims), found,
        raw_reason=first.reason, raw_message=first.message)


def _disruption(pod: dict) -> str:
    for condition in as_list(get_path(pod, ["status", "conditions"])):
        condition = as_dict(condition)
        if condition.get("type") == "DisruptionTarget" and condition.get("status") == "True":
            return str(condition.get("reason", ""))
    return ""


def preempted(facts: Facts) -> Diagnosis | None:
    victims = [r for r in replicas_workers_first(facts)
               if pod_events(facts, r.name, "Preempted") or _disruption(
                   raw_pod(facts, r.name)) in ("PreemptionByScheduler", "PreemptionByKueue")]
    # pods already gone leave only their events
    gone = [e for e in facts.events if e.get("reason") == "Preempted"]
    if not victims and not gone:
        return None
    evidence = [event_evidence(e) for e in gone[:3]]
    pods = ", ".join(labels(victims)) if victims else _("A pod of this job")
    found = [suggest.advice(_("Retry the job when the higher-priority work is done, or give "
                              "it a higher priority class if your team may.")),
             suggest.advice(_("Save checkpoints regularly, so that a preempted job resumes "
                              "instead of starting over.")),
             suggest.guide("preempted")]
    return Diagnosis(
        "preempted", Severity.ERROR, Culprit.CAPACITY,
        _("%(pod)s was preempted to make room for a higher-priority workload")
        % {"pod": pods}, consequence(facts, evidence), names(victims), labels(victims), found,
        raw_reason="Preempted")


def deadline_exceeded(facts: Facts) -> Diagnosis | None:
    s = facts.s
    if s.status != JobStatus.FAILED or "DeadlineExceeded" not in s.reason:
        return None
    deadline = get_path(facts.job, ["spec", "runPolicy", "activeDeadlineSeconds"])
    values = {"deadline": format_duration(deadline) if isinstance(deadline, int) else "?"}
    evidence = [Evidence("state", f"{s.reason}: {quote(s.message)}", s.kind.kind)]
    found = [suggest.advice(_("Raise or remove runPolicy.activeDeadlineSeconds: export the "
                              "job's YAML, change it and create it again.")),
             suggest.advice(_("Save checkpoints, so a job stopped at its deadline can resume.")),
             suggest.guide("deadline-exceeded")]
    return Diagnosis("deadline-exceeded", Severity.ERROR, Culprit.CONFIGURATION,
                     _("The job ran longer than its deadline of %(deadline)s and was stopped")
                     % values, evidence, [], [], found, raw_reason=s.reason,
                     raw_message=s.message)


# -- a plain non-zero exit ------------------------------------------------------------------------
def exit_code(facts: Facts) -> Diagnosis | None:
    failed = [r for r in replicas_workers_first(facts)
              if r.exit_code not in (None, 0) and (r.status == "Failed" or r.restarts
                                                   or r.reason in ("Error", "CrashLoopBackOff"))]
    if facts.s.kind.runs_mpirun:
        # the Launcher (mpirun) speaks for its ranks; a Worker's sshd exits with it
        failed.sort(key=lambda r: r.role != "Launcher")
    if not failed:
        return None
    first = failed[0]
    code = first.exit_code
    text = None
    for tail in tails(facts):
        if tail.pod == first.name:
            text = logs.last_error_lines(tail.texts)
            break
    evidence = [Evidence("state", _("Exit code %(code)d: %(meaning)s.") % {
        "code": code, "meaning": exit_meaning(code) or _("the program's own code")},
        first.label, first.finished)]
    if text:
        evidence += [Evidence("log", quote(line), first.label) for line in text]
        error = quote(text[-1], 140)
        headline = _("%(pod)s failed with exit code %(code)d: %(error)s") % {
            "pod": first.label, "code": code, "error": error}
    else:
        headline = _("%(pod)s exited with code %(code)d") % {"pod": first.label, "code": code}
    found = suggest.logs(first) + suggest.similar(facts)
    found.append(suggest.advice(_("Fix the error the log shows, then clone the job (or retry "
                                  "it if the input has changed).")))
    found.append(suggest.guide("exit-code"))
    return Diagnosis("exit-code", Severity.ERROR, Culprit.CODE, headline,
                     consequence(facts, evidence), [first.name], [first.label], found,
                     raw_reason=first.reason, raw_message=first.message)


# -- a batch Job that gave up ---------------------------------------------------------------------
def backoff_limit(facts: Facts) -> Diagnosis | None:
    """A Job of the job (a TrainJob's node Job, an MPIJob's launcher Job) reached its
    backoff limit, or the job's status says which of its Jobs failed, and no pod tells why:
    a container restarted in place (the JobSet's pods restart OnFailure) leaves no failed
    pod, and the failed Job's pods are deleted with it."""
    s = facts.s
    if s.status != JobStatus.FAILED:
        return None
    gave_up = [e for e in job_events(facts, ("BackoffLimitExceeded",))
               if involved(e).get("kind") == "Job"]
    failed = s.kind.failed_batch_jobs(facts.job)
    backoff = bool(gave_up) or "BackoffLimitExceeded" in s.reason
    if not backoff and not failed:
        return None
    batch = str(involved(gave_up[-1]).get("name") or "") if gave_up else \
        next((name for _role, name, _words in failed if name), "")
    role = (s.kind.batch_job_role(s.name, batch) if batch else None) or \
        (failed[0][0] if failed else s.kind.lead_role)
    values = {"role": s.kind.pod_label(role, None), "job": batch}
    if backoff:
        headline = _("The %(role)s Job %(job)s reached its backoff limit: its pods failed "
                     "too many times") if batch else \
            _("The %(role)s Job reached its backoff limit: its pods failed too many times")
    else:
        headline = _("The %(role)s Job %(job)s failed, and the job with it") if batch else \
            _("The %(role)s Job failed, and the job with it")
    evidence = [event_evidence(e, batch or values["role"]) for e in gave_up[-1:]]
    evidence += [Evidence("state", words, s.kind.kind) for _role, _name, words in failed
                 if words]
    # the kubelet's words about the restarts in place, the pods themselves gone
    restarts = sorted((e for e in facts.events if e.get("reason") == "BackOff"
                       and involved(e).get("kind") == "Pod"
                       and s.kind.event_job_name("Pod", str(involved(e).get("name") or ""))
                       == s.name), key=lambda e: event_time(e) or facts.now)
    evidence += [event_evidence(e, str(involved(e).get("name") or "")) for e in restarts[-1:]]
    found = [suggest.events(),
             suggest.advice(_("Its pods were deleted with the failed Job, and their logs with "
                              "them: the job's page in the dashboard shows the failed runs it "
                              "kept; a new run's restarting pod can be read while it runs.")),
             suggest.retry(_("Retry the job: a pod that failed for a passing reason (a node, "
                             "the network, a busy service) may run through next time.")),
             *suggest.similar(facts), suggest.guide("backoff-limit")]
    return Diagnosis("backoff-limit", Severity.ERROR, Culprit.UNKNOWN, headline % values,
                     consequence(facts, evidence), [], [values["role"]], found,
                     raw_reason=s.reason, raw_message=s.message)


def unknown_failure(facts: Facts) -> Diagnosis | None:
    s = facts.s
    if s.status != JobStatus.FAILED:
        return None
    return unknown(facts, _("We could not tell why the job failed"), s.reason, s.message)


def unknown(facts: Facts, headline: str, reason: str, text: str,
            replica: ReplicaState | None = None) -> Diagnosis:
    evidence = [Evidence("state", f"{reason or _('no reason given')}: {quote(text) or '-'}",
                         replica.label if replica else facts.s.kind.kind)]
    found = [suggest.events()] + suggest.logs(replica or facts.s.launcher) + [
        suggest.guide("unknown")]
    return Diagnosis("unknown", Severity.ERROR if facts.s.status == JobStatus.FAILED
                     else Severity.WARNING, Culprit.UNKNOWN, headline, evidence,
                     [replica.name] if replica else [], [replica.label] if replica else [],
                     found, raw_reason=reason, raw_message=text)


# what explains a pod's failure, most telling first
CAUSE_RULES = (oom_killed, evicted, node_lost, preempted, cuda_out_of_memory, command_problem,
               segfault, mpi_communication)
FAILURE_RULES = (*CAUSE_RULES[:4], deadline_exceeded, *CAUSE_RULES[4:], exit_code,
                 backoff_limit)
