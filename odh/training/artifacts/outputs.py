"""Where a job writes: the directories on its PersistentVolumeClaims that its manifest names.

A job says where it writes in one of three ways, the first found wins:

1. the annotation `opendatahub.io/output-path` on the job (an absolute path as the job's
   containers see it, e.g. `/mnt/checkpoints/bert`; several separated by commas);
2. a flag of a container's command or arguments (`--output_dir`, `--output-dir`,
   `--checkpoint_dir`, `--checkpoint-dir`, `--save_dir`, `--save-dir`; `--flag value` or
   `--flag=value`, also inside a `sh -c` script);
3. the environment variables `OUTPUT_DIR` and `CHECKPOINT_DIR` of a container.

A path is an output when it lies on a volume that a PersistentVolumeClaim backs, mounted
by any container of the job (the Launcher's `mpirun ... --output_dir /mnt/out` names a
path its Workers' ranks write to, on the Workers' mount): the longest mount path that
contains it wins, and the claim's `subPath` is taken into account. A path on no claim
(the container's own filesystem, an `emptyDir`) is gone with the pod: it is reported as
such, not listed.
"""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass, field

from odh.training.kinds import JobKind
from odh.training.paths import as_dict, as_list, get_path

OUTPUT_PATH_ANNOTATION = "opendatahub.io/output-path"
OUTPUT_FLAGS = ("--output_dir", "--output-dir", "--checkpoint_dir", "--checkpoint-dir",
                "--save_dir", "--save-dir")
OUTPUT_ENV = ("OUTPUT_DIR", "CHECKPOINT_DIR")
_SHELLS = ("sh", "bash", "ash", "dash")


@dataclass(frozen=True)
class Mount:
    """A PersistentVolumeClaim as a container of the job mounts it."""

    claim: str
    mount_path: str  # normalised, no trailing slash
    sub_path: str = ""  # the volumeMount's subPath ("" = the volume's root)


@dataclass(frozen=True)
class OutputDir:
    """A directory the job writes to, on a claim: `sub_path` inside the volume (no leading
    slash; "" = its root), `path` where the job's containers see it, `named_by` what named it
    (the flag, the variable or the annotation)."""

    claim: str
    sub_path: str
    path: str
    named_by: str


@dataclass(frozen=True)
class JobOutputs:
    outputs: list[OutputDir] = field(default_factory=list)
    # paths the job names that lie on no claim (lost with the pod), with what named them
    not_on_a_volume: list[tuple[str, str]] = field(default_factory=list)
    # every claim the job mounts (what to say when it names no output)
    claims: list[str] = field(default_factory=list)


def _norm(path: str) -> str:
    return posixpath.normpath(path) if path else ""


def pod_mounts(pod_spec: dict) -> dict[str, list[Mount]]:
    """The claims each container of a pod spec mounts, by container name."""
    claims = {str(v.get("name", "")): str(get_path(v, ["persistentVolumeClaim", "claimName"])
                                          or "")
              for v in as_list(pod_spec.get("volumes")) if isinstance(v, dict)}
    found: dict[str, list[Mount]] = {}
    for container in as_list(pod_spec.get("containers")):
        if not isinstance(container, dict):
            continue
        mounts = []
        for m in as_list(container.get("volumeMounts")):
            if not isinstance(m, dict):
                continue
            claim = claims.get(str(m.get("name", "")), "")
            path = str(m.get("mountPath") or "")
            if claim and path.startswith("/"):
                sub = _norm(str(m.get("subPath") or "")).lstrip("/")
                mounts.append(Mount(claim, _norm(path), "" if sub == "." else sub))
        found[str(container.get("name", ""))] = mounts
    return found


def _words(argv: list[str]) -> list[str]:
    """A command's words, and those of a `sh -c` script it runs."""
    words = list(argv)
    if argv and posixpath.basename(argv[0]) in _SHELLS and "-c" in argv[1:]:
        i = argv.index("-c")
        if i + 1 < len(argv):
            try:
                words += shlex.split(argv[i + 1])
            except ValueError:
                pass
    return words


def flag_value(argv: list[str], flags: tuple[str, ...]) -> tuple[str, str] | None:
    """(flag, value) of the first of `flags` the command gives a value (`--f v`, `--f=v`)."""
    words = _words(argv)
    for i, word in enumerate(words):
        for flag in flags:
            if word == flag and i + 1 < len(words):
                return flag, words[i + 1]
            if word.startswith(flag + "="):
                return flag, word[len(flag) + 1:]
    return None


def _container_paths(container: dict) -> list[tuple[str, str]]:
    """(path, what named it) in one container: its flags, then its environment."""
    argv = [str(a) for a in (*as_list(container.get("command")), *as_list(container.get("args")))]
    named = []
    found = flag_value(argv, OUTPUT_FLAGS)
    if found:
        named.append((found[1], found[0]))
    for env in as_list(container.get("env")):
        if isinstance(env, dict) and env.get("name") in OUTPUT_ENV and env.get("value"):
            named.append((str(env["value"]), str(env["name"])))
    return named


def _resolve(path: str, mounts: list[Mount]) -> Mount | None:
    """The mount the path lies on: the longest mount path containing it."""
    best: Mount | None = None
    for m in mounts:
        if path == m.mount_path or path.startswith(m.mount_path.rstrip("/") + "/"):
            if best is None or len(m.mount_path) > len(best.mount_path):
                best = m
    return best


def find_outputs(kind: JobKind, job: dict) -> JobOutputs:
    """Where `job` (a manifest, of `kind`) writes: see the module's docstring."""
    mounts: list[Mount] = []
    named: list[tuple[str, str]] = []
    for spec in kind.output_pod_specs(job):
        for container_mounts in pod_mounts(spec).values():
            mounts += [m for m in container_mounts if m not in mounts]
        for container in as_list(spec.get("containers")):
            if isinstance(container, dict):
                named += _container_paths(container)
    annotation = str(as_dict(get_path(job, ["metadata", "annotations"]))
                     .get(OUTPUT_PATH_ANNOTATION) or "").strip()
    if annotation:
        named = [(p.strip(), OUTPUT_PATH_ANNOTATION) for p in annotation.split(",") if p.strip()]
    outputs: list[OutputDir] = []
    lost: list[tuple[str, str]] = []
    for raw, source in named:
        path = _norm(raw)
        mount = _resolve(path, mounts) if path.startswith("/") else None
        if mount is None:
            if (raw, source) not in lost:
                lost.append((raw, source))
            continue
        rest = posixpath.relpath(path, mount.mount_path)
        sub = _norm(posixpath.join(mount.sub_path, rest)) if rest != "." else mount.sub_path
        sub = "" if sub in (".", "") else sub
        out = OutputDir(mount.claim, sub, path, source)
        if all((o.claim, o.sub_path) != (out.claim, out.sub_path) for o in outputs):
            outputs.append(out)
    claims = list(dict.fromkeys(m.claim for m in mounts))
    return JobOutputs(outputs, lost, claims)
