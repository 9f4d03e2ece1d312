"""Why a pod (and so the job) failed: killed for memory, evicted, its node lost, preempted,
out of GPU memory, a missing or broken program, MPI unable to reach its Workers, a plain
non-zero exit. Each rule returns a Diagnosis or None; `diagnose` tries them in order, the
causes before their consequences (a Worker's OOM kill before the Launcher's exit code,
both before the operator's BackoffLimitExceeded)."""

from __future__ import annotations

import difflib

from odh.training.cluster.events import event_time, involved
from odh.training.diagnosis import fixes as f
from odh.training.diagnosis import logs, suggest
from odh.training.diagnosis.common import (
    event_evidence,
    job_events,
    job_verdict,
    labels,
    launcher_tails,
    names,
    pod_events,
    quote,
    rank_of,
    raw_pod,
    replica_for_host,
    replicas_workers_first,
    several,
    tails,
    worker_for_rank,
)
from odh.training.diagnosis.facts import Facts
from odh.training.diagnosis.model import Culprit, Diagnosis, Evidence, Severity
from odh.training.diagnosis.rules.netpol import blocking_policies
from odh.training.durations import format_duration
from odh.training.i18n import _, ngettext
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import format_memory
from odh.training.spec import SIDECAR_ANNOTATION
from odh.training.status.pods import (
    JOB_NAME_LABEL,
    JOB_ROLE_LABEL,
    OPERATOR_NAME_LABEL,
    REPLICA_INDEX_LABEL,
    ReplicaState,
)
from odh.training.status.summary import JobStatus

_PROGRAMS = ("python", "python3", "mpirun", "horovodrun", "torchrun", "deepspeed", "bash",
             "sh", "accelerate", "mpiexec")


def exit_meaning(code: int | None) -> str:
    meanings = {
        1: _("a general error in the program"), 2: _("wrong arguments or a missing file"),
        126: _("the program is not executable"), 127: _("the program was not found"),
        130: _("interrupted (SIGINT)"), 134: _("aborted (SIGABRT)"),
        137: _("killed (SIGKILL), usually for memory"),
        139: _("a segmentation fault (SIGSEGV)"), 143: _("stopped (SIGTERM)"),
    }
    return meanings.get(code or 0, "")


def _consequence(facts: Facts, evidence: list[Evidence]) -> list[Evidence]:
    verdict = job_verdict(facts)
    return evidence + ([verdict] if verdict else [])


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
        _consequence(facts, evidence), names(victims), labels(victims), found,
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
        _consequence(facts, evidence), names(victims), labels(victims), found,
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
        _consequence(facts, evidence), names(victims), labels(victims), found,
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
        % {"pod": pods}, _consequence(facts, evidence), names(victims), labels(victims), found,
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


# -- what the logs say --------------------------------------------------------------------------
def _log_hit(facts: Facts, finder) -> tuple[ReplicaState | None, str, str] | None:
    """(the pod the line is about, the clean line, the raw line) for the first log tail
    where `finder` recognises something."""
    for tail in tails(facts):
        line = finder(tail.texts)
        if line is None:
            continue
        raw = next((t for t in reversed(tail.texts) if line in t), line)
        rank = rank_of(raw)
        about = worker_for_rank(facts, rank) if rank is not None else None
        source = next((r for r in facts.s.replicas if r.name == tail.pod), None)
        return about or source, line, raw
    return None


def cuda_out_of_memory(facts: Facts) -> Diagnosis | None:
    hit = _log_hit(facts, logs.cuda_oom)
    if hit is None:
        return None
    about, line, _raw = hit
    who = about.label if about else _("A rank")
    evidence = [Evidence("log", quote(line), who)]
    tried = logs.tried_to_allocate(line)
    if tried:
        evidence.append(Evidence("number", _("It tried to allocate %(amount)s more on a GPU "
                                             "that had no room left.") % {"amount": tried}, who))
    spec = f.spec_of(facts.job)
    found = []
    if spec is not None:
        batch = f.batch_size_fix(spec)
        found += suggest.fix(batch)
    if not found:
        size = logs.batch_size_in_log([t for tail in tails(facts) for t in tail.texts])
        found.append(suggest.advice(
            _("Use a smaller batch size per GPU (the log says %(size)d): memory grows with "
              "it.") % {"size": size} if size else
            _("Use a smaller batch size per GPU: memory grows with it.")))
    found.append(suggest.advice(_("Train in mixed precision (bf16 or fp16), and turn on "
                                  "gradient checkpointing.")))
    if spec is not None:
        found += suggest.fix(f.more_workers_fix(facts, spec))
    found.append(suggest.advice(_("If memory is fragmented, set "
                                  "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.")))
    found += suggest.logs(about) + [suggest.guide("cuda-out-of-memory")]
    affected = [about] if about else []
    return Diagnosis(
        "cuda-out-of-memory", Severity.ERROR, Culprit.CONFIGURATION,
        _("%(pod)s ran out of GPU memory (CUDA out of memory)") % {"pod": who},
        _consequence(facts, evidence), names(affected), labels(affected), found,
        raw_reason="CUDA out of memory", raw_message=quote(line))


_START_REASONS = ("StartError", "ContainerCannotRun", "RunContainerError",
                  "CreateContainerError")


def command_problem(facts: Facts) -> Diagnosis | None:
    """Exit 127 / 126, a runtime that could not start the program, or a log that says so."""
    culprits = [r for r in replicas_workers_first(facts)
                if r.exit_code in (126, 127) or (r.reason in _START_REASONS and (
                    logs.command_not_found([r.message]) or logs.not_executable([r.message])))]
    line = None
    for tail in launcher_tails(facts) + tails(facts):
        line = logs.command_not_found(tail.texts) or logs.not_executable(tail.texts)
        if line:
            break
    if not culprits and line is None:
        return None
    launcher = facts.s.launcher
    first = culprits[0] if culprits else launcher
    if line is None and first is not None:
        line = logs.command_not_found([first.message]) or logs.not_executable([first.message])
    executable = (first is not None and first.exit_code == 126) or (
        line is not None and logs.not_executable([line]) is not None
        and logs.command_not_found([line]) is None)
    program = logs.missing_program(line or "")
    who = first.label if first else _("The program")
    values = {"pod": who, "program": program, "code": 126 if executable else 127}
    if executable:
        headline = _("%(pod)s could not run its program: “%(program)s” is not executable "
                     "(exit code %(code)d)") if program else \
            _("%(pod)s could not run its program: it is not executable (exit code %(code)d)")
    else:
        headline = _("%(pod)s could not start its program: “%(program)s” was not found "
                     "(exit code %(code)d)") if program else \
            _("%(pod)s could not start its program: command not found (exit code %(code)d)")
    evidence = [Evidence("log", quote(line), who)] if line else []
    if first is not None and first.exit_code is not None:
        evidence.append(Evidence("state", _("Exit code %(code)d: %(meaning)s.") % {
            "code": first.exit_code, "meaning": exit_meaning(first.exit_code)}, who))
    found = []
    spec = f.spec_of(facts.job)
    typo = _typo_fix(spec, program) if spec is not None and not executable else None
    found += suggest.fix(typo)
    found += suggest.fix(f.edit_fix(_("Clone and edit the command"), "command"))
    image = spec.image if spec is not None else ""
    if program and image:
        found.append(suggest.advice(_("Check that the image has the program:"),
                                    f"podman run --rm {image} which {program}"))
    found += suggest.logs(first) + [suggest.guide("command-not-found")]
    affected = [first] if first else []
    return Diagnosis("command-not-found", Severity.ERROR, Culprit.CONFIGURATION,
                     headline % values, _consequence(facts, evidence), names(affected),
                     labels(affected), found,
                     raw_reason=first.reason if first else "", raw_message=quote(line or ""))


def _typo_fix(spec, program: str):
    if not program or program in _PROGRAMS:
        return None
    close = difflib.get_close_matches(program, _PROGRAMS, n=1, cutoff=0.75)
    if not close:
        return None
    words = [str(w) for w in spec.command]
    if program not in words:
        return None
    changed = [close[0] if w == program else w for w in words]
    return f.JobFix(_("Clone with “%(right)s” instead of “%(wrong)s” in the command")
                    % {"right": close[0], "wrong": program}, {"command": changed})


def segfault(facts: Facts) -> Diagnosis | None:
    crashed = [r for r in replicas_workers_first(facts) if r.exit_code == 139]
    hit = _log_hit(facts, logs.segfault)
    if not crashed and hit is None:
        return None
    about = hit[0] if hit and hit[0] else (crashed[0] if crashed else None)
    who = about.label if about else _("A rank")
    evidence = []
    for tail in tails(facts):
        lines = [t for t in logs.last_error_lines(tail.texts) if logs.segfault([t])]
        if lines:
            evidence += [Evidence("log", quote(t), who) for t in lines[-3:]]
            break
    code_of = crashed[0] if crashed else facts.s.launcher
    if code_of is not None and code_of.exit_code:
        evidence.append(Evidence("state", _("Exit code %(code)d: %(meaning)s.") % {
            "code": code_of.exit_code, "meaning": exit_meaning(code_of.exit_code)},
            code_of.label))
    found = [suggest.advice(_("Run the script with Python's fault handler on (PYTHONFAULTHANDLER"
                              "=1) to see where it crashed.")),
             suggest.advice(_("Check that the image's CUDA, NCCL and framework builds match the "
                              "GPU driver, and that native extensions were built for them.")),
             suggest.advice(_("Try one rank on one Worker to see whether it crashes without "
                              "MPI."))]
    found += suggest.similar(facts) + suggest.logs(about) + [suggest.guide("segfault")]
    affected = [about] if about else []
    return Diagnosis("segfault", Severity.ERROR, Culprit.CODE,
                     _("%(pod)s crashed with a segmentation fault (exit code 139)")
                     % {"pod": who}, _consequence(facts, evidence), names(affected),
                     labels(affected), found, raw_reason="SIGSEGV")


# -- MPI could not reach its Workers ------------------------------------------------------------
def mpi_communication(facts: Facts) -> Diagnosis | None:
    if not facts.s.kind.runs_mpirun:
        return None
    trouble = None
    for tail in launcher_tails(facts):
        trouble = logs.mpi_trouble(tail.texts)
        if trouble:
            break
    if trouble is None:
        return None
    launcher = facts.s.launcher
    if facts.s.status == JobStatus.RUNNING and not (launcher and launcher.restarts):
        return None  # mpirun still retries: only a failed or restarted Launcher counts
    worker = replica_for_host(facts, trouble.host) if trouble.host else None
    who = worker.label if worker else _("its Workers")
    headlines = {
        "refused": _("The Launcher could not reach %(pod)s over SSH (connection refused)"),
        "timeout": _("The Launcher could not reach %(pod)s over SSH (connection timed out)"),
        "unreachable": _("The Launcher could not reach %(pod)s: no route to it"),
        "reset": _("The Launcher's SSH connection to %(pod)s was reset"),
        "resolve": _("The Launcher could not find %(pod)s by its host name"),
        "auth": _("The Launcher was refused SSH login to %(pod)s"),
        "orte": _("mpirun could not start its daemons on %(pod)s"),
    }
    evidence = [Evidence("log", quote(trouble.line), _("Launcher"))]
    addresses = _addresses(facts, worker)
    if addresses:
        evidence.append(Evidence("number", addresses))
    blockers = _blocking(facts, worker)
    sidecar = _sidecar_on(facts.job)
    culprit = Culprit.PLATFORM
    found = []
    if blockers:
        culprit = Culprit.CONFIGURATION
        evidence.append(Evidence("state", _("NetworkPolicy %(names)s selects the Workers and "
                                            "admits no SSH (TCP 22) from the Launcher.")
                                 % {"names": ", ".join(blockers)}, _("Project")))
        found.append(suggest.advice(_("Allow the job's own pods to reach each other on TCP "
                                      "22 (and the ports MPI uses): ask a project "
                                      "administrator to change %(names)s.")
                                    % {"names": ", ".join(blockers)},
                                    f"oc get networkpolicy -n {facts.s.namespace}"))
    elif facts.network_policies is not None:
        evidence.append(Evidence("state", _("No NetworkPolicy of the project blocks SSH "
                                            "between the job's pods."), _("Project")))
    if sidecar != "false":
        if sidecar == "true":
            culprit = Culprit.CONFIGURATION
            evidence.append(Evidence("state", _("The pods ask for the Istio sidecar "
                                                "(%(annotation)s: \"true\"): its proxy breaks "
                                                "mpirun's SSH connections.")
                                     % {"annotation": SIDECAR_ANNOTATION}, _("Job")))
        found += suggest.fix(f.sidecar_fix())
    found += suggest.logs(worker)
    found.append(suggest.advice(_("Use the same MPI implementation and version in the "
                                  "Launcher's and the Workers' images.")))
    found.append(suggest.guide("mpi-communication"))
    affected = [worker] if worker else []
    return Diagnosis("mpi-communication", Severity.ERROR, culprit,
                     headlines[trouble.kind] % {"pod": who}, _consequence(facts, evidence),
                     names(affected), labels(affected), found, raw_message=quote(trouble.line))


def _addresses(facts: Facts, worker: ReplicaState | None) -> str:
    parts = []
    for replica in [facts.s.launcher, worker]:
        if replica is None:
            continue
        ip = get_path(raw_pod(facts, replica.name), ["status", "podIP"])
        if ip:
            parts.append(f"{replica.label} {ip}")
    return _("Pod addresses: %(addresses)s") % {"addresses": ", ".join(parts)} if parts else ""


def _mpi_pod(facts: Facts, replica: ReplicaState) -> dict:
    """The pod, or (removed already) what the MPI Operator labels it with."""
    pod = raw_pod(facts, replica.name)
    if pod:
        return pod
    labels = {JOB_NAME_LABEL: facts.s.name, OPERATOR_NAME_LABEL: "mpi-operator",
              JOB_ROLE_LABEL: replica.role.lower()}
    if replica.index is not None:
        labels[REPLICA_INDEX_LABEL] = str(replica.index)
    return {"metadata": {"name": replica.name, "labels": labels}}


def _blocking(facts: Facts, worker: ReplicaState | None) -> list[str]:
    if not facts.network_policies or facts.s.launcher is None:
        return []
    source = _mpi_pod(facts, facts.s.launcher)
    targets = [_mpi_pod(facts, worker)] if worker else \
        [_mpi_pod(facts, r) for r in facts.s.workers]
    found: set[str] = set()
    for target in targets:
        if source and target:
            found.update(blocking_policies(facts.network_policies, source, target))
    return sorted(found)


def _sidecar_on(job: dict) -> str:
    """"false" when every pod template opts out of the Istio sidecar, "true" when one opts
    in, "" when they say nothing."""
    values = []
    for role in as_dict(get_path(job, ["spec", "mpiReplicaSpecs"])).values():
        values.append(str(get_path(role, ["template", "metadata", "annotations",
                                          SIDECAR_ANNOTATION], "")))
    if "true" in values:
        return "true"
    return "false" if values and all(v == "false" for v in values) else ""


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
                     _consequence(facts, evidence), [first.name], [first.label], found,
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
                     _consequence(facts, evidence), [], [values["role"]], found,
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
