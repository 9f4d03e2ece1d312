"""Failures the program's own output tells: CUDA out of memory, a missing or broken program
(with the likely typo), a segmentation fault (odh.training.diagnosis.rules.failures tries
them in order)."""


from __future__ import annotations

import difflib

from odh.training.diagnosis import fixes as f
from odh.training.diagnosis import logs, suggest
from odh.training.diagnosis.common import (
    labels,
    launcher_tails,
    names,
    quote,
    rank_of,
    replicas_workers_first,
    tails,
    worker_for_rank,
)
from odh.training.diagnosis.facts import Facts
from odh.training.diagnosis.model import Culprit, Diagnosis, Evidence, Severity
from odh.training.diagnosis.rules.shared import consequence, exit_meaning
from odh.training.i18n import _
from odh.training.status.pods import (
    ReplicaState,
)

_PROGRAMS = ("python", "python3", "mpirun", "horovodrun", "torchrun", "deepspeed", "bash",
             "sh", "accelerate", "mpiexec")


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
        consequence(facts, evidence), names(affected), labels(affected), found,
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
                     headline % values, consequence(facts, evidence), names(affected),
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
                     % {"pod": who}, consequence(facts, evidence), names(affected),
                     labels(affected), found, raw_reason="SIGSEGV")
