"""A job that runs but is not well: a pod crashed and restarts, training has gone quiet
(possible hang), or its GPUs mostly wait (a performance hint)."""

from __future__ import annotations

from odh.training.diagnosis import fixes as f
from odh.training.diagnosis import logs, suggest
from odh.training.diagnosis.common import (
    container_state,
    quote,
    raw_pod,
    replicas_workers_first,
)
from odh.training.diagnosis.facts import IDLE_GPU_PERCENT, LOW_GPU_PERCENT, LOW_GPU_SECONDS, Facts
from odh.training.diagnosis.model import Culprit, Diagnosis, Evidence, Severity
from odh.training.durations import format_duration
from odh.training.i18n import _
from odh.training.logs.progress import progress_source
from odh.training.paths import get_path
from odh.training.status.summary import JobStatus

DEFAULT_BACKOFF_LIMIT = 6  # the batch Job's default, which the MPI Operator passes on


def _retry_text(facts: Facts, count: int) -> str:
    limit = get_path(facts.job, ["spec", "runPolicy", "backoffLimit"])
    if isinstance(limit, int) and limit >= count:
        return _("retry %(count)d of %(limit)d") % {"count": count, "limit": limit}
    return _("retry %(count)d") % {"count": count}


def worker_restarting(facts: Facts) -> Diagnosis | None:
    s = facts.s
    if s.status not in (JobStatus.RUNNING, JobStatus.PENDING):
        return None
    restarted = [r for r in replicas_workers_first(facts) if r.restarts > 0]
    if not restarted:
        return None
    first = restarted[0]
    pod = raw_pod(facts, first.name)
    last = container_state(pod, last=True)
    code = last.get("exitCode")
    reason = str(last.get("reason") or "")
    running = first.status == "Running" and first.reason in ("", "Running")
    values = {"pod": first.label, "retry": _retry_text(facts, first.restarts)}
    headline = (_("%(pod)s crashed and restarted (%(retry)s)") if running else
                _("%(pod)s crashed and is restarting (%(retry)s)")) % values
    evidence = []
    if code is not None:
        evidence.append(Evidence("state", _("Its last run ended with exit code %(code)s "
                                            "(%(reason)s).") % {"code": code,
                                                                "reason": reason or "Error"},
                                 first.label))
    previous = facts.log_of(f"{first.name}#previous") or facts.log_of(first.name)
    if previous is not None and previous.previous:
        line = logs.last_line(previous.texts)
        if line:
            evidence.append(Evidence("log", quote(line), first.label))
    workers = [r for r in s.workers if r.role == "Worker"]
    if workers:
        healthy = sum(r.status == "Running" and not r.problem for r in workers)
        evidence.append(Evidence("number", _("%(healthy)d/%(total)d Workers healthy")
                                 % {"healthy": healthy, "total": len(workers)}))
    found = suggest.logs(first, previous=True)
    culprit = Culprit.CODE
    if reason == "OOMKilled":
        culprit = Culprit.CONFIGURATION
        spec = f.spec_of(facts.job)
        if spec is not None:
            found += suggest.fix(f.memory_fix(facts, spec, first.role == "Launcher", None))
    found.append(suggest.advice(_("If it keeps crashing, suspend or delete the job so it does "
                                  "not hold its GPUs.")))
    found.append(suggest.guide("worker-restarting"))
    return Diagnosis("worker-restarting", Severity.WARNING, culprit, headline, evidence,
                     [first.name], [first.label], found, raw_reason=reason,
                     raw_message=str(last.get("message") or ""))


def possible_hang(facts: Facts) -> Diagnosis | None:
    s = facts.s
    if s.status != JobStatus.RUNNING or "possible-hang" in facts.dismissed:
        return None
    source = progress_source(s.replicas)
    tail = facts.log_of(getattr(source, "name", "")) if source else None
    if tail is None or tail.previous or source is None:
        return None
    last = tail.last_time
    since = last or getattr(source, "started", None) or s.started
    if since is None:
        return None
    silence = (facts.now - since).total_seconds()
    if silence < facts.hang_after_seconds:
        return None
    usage = facts.usage
    util = usage.gpu_util if usage else None
    if util is not None and util >= IDLE_GPU_PERCENT:
        return None  # quiet, but its GPUs are working
    if usage is not None and usage.gpu_unread:
        # asked, not answered: the GPUs may be busy (a quiet job that computes), and a
        # second look that reads them would say otherwise; nothing rather than that
        return None
    values = {"silence": format_duration(silence), "pod": source.label}
    evidence = []
    line = logs.last_line(tail.texts)
    if line and last is not None:
        evidence.append(Evidence("log", _("Last line, %(ago)s ago: %(line)s") % {
            "ago": format_duration(silence), "line": quote(line, 200)}, source.label, last))
    else:
        evidence.append(Evidence("state", _("No log line since it started %(ago)s ago.")
                                 % {"ago": format_duration(silence)}, source.label))
    if util is not None:
        evidence.append(Evidence("number", _("GPU utilization %(percent)d%% over the last "
                                             "%(window)s") % {
            "percent": round(util), "window": format_duration(usage.gpu_util_seconds)}))
        headline = _("Possible hang: no new log line for %(silence)s and the GPUs are idle")
    else:
        headline = _("Possible hang: no new log line from %(pod)s for %(silence)s")
    workers = [r for r in s.workers if r.exists]
    found = suggest.logs(workers[0] if workers else None) + [suggest.topology()]
    found.append(suggest.advice(_("Set NCCL_DEBUG=INFO to see where the ranks wait, or dump the "
                                  "Python stacks of a rank:"), "py-spy dump --pid 1"))
    found.append(suggest.advice(_("If it stays stuck, delete the job and retry it; add a "
                                  "timeout to the collective operations (for example "
                                  "NCCL_TIMEOUT).")))
    found += [suggest.dismiss(), suggest.guide("possible-hang")]
    return Diagnosis("possible-hang", Severity.WARNING, Culprit.CODE, headline % values,
                     evidence, [source.name], [source.label], found, dismissable=True)


def low_gpu_utilization(facts: Facts) -> Diagnosis | None:
    s = facts.s
    if s.status != JobStatus.RUNNING or "low-gpu-utilization" in facts.dismissed or not s.gpus:
        return None
    usage = facts.usage
    if usage is None or usage.gpu_util is None or usage.gpu_util_seconds < LOW_GPU_SECONDS:
        return None
    if usage.gpu_util >= LOW_GPU_PERCENT or usage.gpu_util < IDLE_GPU_PERCENT:
        return None  # busy enough, or idle (which the hang rule speaks of)
    values = {"percent": round(usage.gpu_util),
              "window": format_duration(usage.gpu_util_seconds)}
    found = [suggest.advice(_("Feed the GPUs faster: more data loader workers, pinned memory, "
                              "the data set on a fast local volume.")),
             suggest.advice(_("A larger batch per GPU keeps it busier, if memory allows.")),
             suggest.metrics(), suggest.dismiss(), suggest.guide("low-gpu-utilization")]
    return Diagnosis("low-gpu-utilization", Severity.INFO, Culprit.CODE,
                     _("GPU utilization is %(percent)d%% over the last %(window)s") % values,
                     [Evidence("number", _("The job's GPUs were busy %(percent)d%% of the time "
                                           "on average over the last %(window)s; a healthy "
                                           "data-parallel job keeps them above 40%%.")
                               % values)], [], [], found, dismissable=True)


RUNNING_RULES = (possible_hang, low_gpu_utilization)
