"""Resuming a failed run from a checkpoint: what the job's template declares, and the
change a clone makes.

A job declares how it is resumed in one of these ways (the first found wins):

- the annotation `opendatahub.io/resume-arg` names a flag of its command, e.g.
  `--resume_from_checkpoint`: the clone's command gets `<flag> <checkpoint path>` (the
  flag's earlier value, if the command has one, is replaced);
- the annotation `opendatahub.io/resume-env` names an environment variable, e.g.
  `RESUME_FROM`: the clone's job sets it to the checkpoint's path;
- the job's command environment already has a variable `RESUME_FROM` (with any value, even
  empty): the same as `opendatahub.io/resume-env: RESUME_FROM`.

It is offered on a run that failed, or that Kueue preempted and holds suspended (`resumable`:
Kueue stops the job with an event whose message begins "Preempted to accommodate a
workload"; its own conditions say only that it is suspended).

Without one the dashboard cannot know how the program takes a checkpoint, and offers no
"Resume from this checkpoint". The checkpoint's path is the one the job's containers see
(the output directory's path plus the checkpoint's name), so it is right for a clone that
mounts the same volume at the same place.
"""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass

from odh.training.artifacts.outputs import OutputDir
from odh.training.kinds import JobSpec
from odh.training.paths import as_dict, get_path
from odh.training.status.summary import JobStatus, JobSummary

RESUME_ARG_ANNOTATION = "opendatahub.io/resume-arg"
RESUME_ENV_ANNOTATION = "opendatahub.io/resume-env"
RESUME_ENV = "RESUME_FROM"
_SHELLS = ("sh", "bash", "ash", "dash")


@dataclass(frozen=True)
class ResumeWay:
    """How the job takes a checkpoint: a flag of its command, or an environment variable."""

    flag: str = ""
    env: str = ""

    @property
    def text(self) -> str:
        return self.flag or self.env


def resume_way(spec: JobSpec) -> ResumeWay | None:
    """What the job declares (see the module's docstring), or None."""
    annotations = {**as_dict(get_path(spec.base, ["metadata", "annotations"])),
                   **spec.annotations}
    flag = str(annotations.get(RESUME_ARG_ANNOTATION) or "").strip()
    if flag.startswith("-") and " " not in flag:
        return ResumeWay(flag=flag)
    env = str(annotations.get(RESUME_ENV_ANNOTATION) or "").strip()
    if env and env.replace("_", "").isalnum():
        return ResumeWay(env=env)
    if any(e.name == RESUME_ENV and not e.value_from for e in spec.env):
        return ResumeWay(env=RESUME_ENV)
    return None


def checkpoint_path(output: OutputDir, relative: str) -> str:
    """Where the job's containers see a checkpoint listed in `output`."""
    return posixpath.join(output.path, relative)


def _with_flag(command: list[str], flag: str, value: str) -> list[str]:
    """The command with `flag value` set; in a `sh -c` script, at the script's end."""
    if command and posixpath.basename(command[0]) in _SHELLS and "-c" in command[1:-1]:
        i = command.index("-c") + 1
        script = _with_flag_in_script(command[i], flag, value)
        return [*command[:i], script, *command[i + 1:]]
    words = list(command)
    for i, word in enumerate(words):
        if word == flag and i + 1 < len(words):
            return [*words[:i + 1], value, *words[i + 2:]]
        if word.startswith(flag + "="):
            return [*words[:i], f"{flag}={value}", *words[i + 1:]]
    return [*words, flag, value]


def _with_flag_in_script(script: str, flag: str, value: str) -> str:
    try:
        words = shlex.split(script)
    except ValueError:
        words = []
    if flag in words or any(w.startswith(flag + "=") for w in words):
        return shlex.join(_with_flag(words, flag, value))
    return f"{script.rstrip()} {shlex.quote(flag)} {shlex.quote(value)}"


def resume_changes(spec: JobSpec, way: ResumeWay, path: str) -> dict:
    """The change to the job's spec a clone makes to resume from `path`: {"command": [...]}
    or {"env": [{"name", "value"}...]} (the attributes a diagnosis' fix changes)."""
    if way.flag:
        return {"command": _with_flag(spec.command, way.flag, path)}
    env = [{"name": e.name, "value": e.value, "value_from": e.value_from} for e in spec.env
           if e.name != way.env]
    return {"env": [*env, {"name": way.env, "value": path, "value_from": None}]}


def _says_preempted(reason: object, message: object) -> bool:
    return "preempt" in f"{reason} {message}".lower()


def resumable(summary: JobSummary, events: list[dict]) -> bool:
    """A failed run, or one preempted and held suspended: by its conditions, or by the
    job's own events (Kueue's "Stopped: Preempted to accommodate a workload ...", upstream
    and simcluster alike), the newest saying so."""
    if summary.status == JobStatus.FAILED:
        return True
    if summary.status != JobStatus.SUSPENDED:
        return False
    if any(_says_preempted(c.reason, c.message) for c in summary.conditions):
        return True
    about_job = [e for e in events
                 if (e.get("involvedObject") or {}).get("name") == summary.name
                 and (e.get("involvedObject") or {}).get("kind") == summary.kind.kind]
    about_job.sort(key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    # the last word on the job: a preemption, not a suspension the person asked for since
    stops = [e for e in about_job if e.get("reason") == "Stopped"
             or "suspend" in str(e.get("reason") or "").lower()
             or _says_preempted(e.get("reason"), e.get("message"))]
    return bool(stops) and _says_preempted(stops[-1].get("reason"), stops[-1].get("message"))
