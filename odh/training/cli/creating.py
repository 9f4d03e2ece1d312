"""`odh training create`: the spec from flags or a manifest, and the wizard's words for what
is wrong with it, named as the person wrote it (a flag, or a manifest field). What differs
by kind (its own flags, its manifest's fields, what it cannot do without) the kind says
(`JobKind.command_line`)."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from odh.training.artifacts.outputs import OUTPUT_PATH_ANNOTATION
from odh.training.capacity.fit import Fix
from odh.training.checks.syntax import read_pairs
from odh.training.findings import FieldError
from odh.training.i18n import _
from odh.training.kinds import JobKind, command_line_flags, creatable_kinds
from odh.training.manifests.importing import ManifestImportError, parse_manifest_text
from odh.training.manifests.overrides import OverrideError, apply_set
from odh.training.manifests.retries import ALL, PLATFORM, with_retries
from odh.training.manifests.templates import BUILTIN_TEMPLATES, template_by_slug
from odh.training.quantity import parse_quantity
from odh.training.spec import (
    EnvVar,
    JobSpec,
    ManifestError,
    PVCVolume,
    build_manifest,
    read_manifest,
)

# what a person typed on the command line, by the spec attribute a finding names (a kind
# may name some its own way: JobKind.command_line)
FLAGS = {
    "name": "NAME", "namespace": "--namespace", "image": "--image", "command": "--command",
    "workers": "--workers", "cpu_per_worker": "--cpu-per-worker",
    "memory_per_worker": "--memory-per-worker", "gpus_per_worker": "--gpu-per-worker",
    "slots_per_worker": "--slots-per-worker", "launcher_cpu": "--launcher-cpu",
    "launcher_memory": "--launcher-memory", "mpi_implementation": "--mpi-implementation",
    "node_selector": "--node-selector", "env": "--env", "priority_class": "--priority-class",
    "queue_name": "--queue", "labels": "--label", "annotations": "--annotation",
    "image_pull_secret": "--image-pull-secret", "volumes": "--volume",
}
# a fix's change -> the flag that makes it
FIX_FLAGS = {"workers": "--workers", "gpus_per_worker": "--gpu-per-worker",
             "cpu_per_worker": "--cpu-per-worker", "memory_per_worker": "--memory-per-worker",
             "launcher_cpu": "--launcher-cpu", "launcher_memory": "--launcher-memory",
             "slots_per_worker": "--slots-per-worker", "node_selector": "--node-selector",
             "command": "--command", "image_pull_secret": "--image-pull-secret",
             "queue_name": "--queue"}


class UsageError(Exception):
    """Bad input on the command line; the message says how to fix it."""


def where(problem: FieldError, from_file: str, kind: JobKind) -> str:
    """The flag (or, for a manifest, the field) a finding is about, for a job of `kind`
    (the kind says where it names a field its own way: JobKind.command_line)."""
    head, sep, rest = problem.field.partition("[")
    said = kind.command_line
    named = said.manifest_field(head) if from_file else said.flag_for(head) or FLAGS.get(head)
    return named or head + sep + rest


def fix_flags(fix: Fix) -> str:
    """A fix as flags: "--gpu-per-worker 8 --workers 2"."""
    parts = []
    for key, value in fix.changes.items():
        if key == "env":
            parts += [_env_flag(row) for row in value if _env_flag(row)]
            continue
        flag = FIX_FLAGS.get(key)
        if flag is None:
            continue
        if isinstance(value, dict):
            value = ",".join(f"{k}={v}" for k, v in value.items())
        elif isinstance(value, list):
            value = shlex.join(str(v) for v in value)
        parts.append(f"{flag} {shlex.quote(str(value))}")
    return " ".join(parts)


def _env_flag(row: dict) -> str:
    """An environment row of a fix ({"name", "value", "value_from"}) as --env or
    --env-secret; "" for a value read from elsewhere (a field, a ConfigMap)."""
    name = str(row.get("name") or "")
    ref = (row.get("value_from") or {}).get("secretKeyRef")
    if ref:
        return "--env-secret " + shlex.quote(f"{name}={ref.get('name')}:{ref.get('key')}")
    if row.get("value_from"):
        return ""
    return "--env " + shlex.quote(f"{name}={row.get('value') or ''}")


def _quantity(flag: str, value: str) -> str:
    try:
        parse_quantity(value)
    except ValueError:
        raise UsageError(_("%(flag)s: “%(value)s” is not a quantity: write e.g. 8, 500m, "
                           "32Gi.") % {"flag": flag, "value": value[:40]}) from None
    return value


def _pairs(flag: str, text: str) -> dict[str, str]:
    pairs, problems = read_pairs(text)
    if problems:
        raise UsageError(f"{flag}: " + " ".join(problems))
    return pairs


def read_file(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read(4 * 1024 * 1024)
    try:
        with open(path, "rb") as f:
            return f.read(4 * 1024 * 1024)
    except OSError as exc:
        raise UsageError(_("Cannot read %(path)s: %(reason)s.")
                         % {"path": path, "reason": exc.strerror or exc}) from None


def _command(args: argparse.Namespace) -> list[str]:
    after_dashes = list(args.training_command or [])
    if args.command_text is not None:
        if after_dashes:
            raise UsageError(_("Give the training command once: either --command \"...\" or "
                               "after --."))
        try:
            return shlex.split(args.command_text)
        except ValueError as e:
            raise UsageError(_("--command: %(problem)s (check the quotes).")
                             % {"problem": e}) from None
    return after_dashes


def spec_from_args(args: argparse.Namespace, name: str, kind: JobKind) -> JobSpec:
    """The spec that `create` sends: the manifest's (-f) with the flags on top, or the
    flags alone (a spec of `kind`)."""
    command = _command(args)
    template = _template(args)
    if template is not None:
        if args.filename:
            raise UsageError(_("Give either a manifest (-f) or a template (--template), not "
                               "both."))
        spec = template.new_spec(name, args.namespace)
        if command:
            spec.command = command
        if args.image:
            spec.image = args.image
    elif args.filename:
        if command:
            raise UsageError(_("Give either a manifest (-f) or a training command, not both: "
                               "the manifest carries its own command."))
        text = read_file(args.filename)
        try:
            spec = parse_manifest_text(text)
        except ManifestImportError as exc:
            raise UsageError(f"{args.filename}: {exc}") from None
        if spec.kind is not kind and args.kind_given:
            raise UsageError(_("%(file)s is a %(found)s, not a %(kind)s: run odh training "
                               "create %(slug)s -f %(file)s.")
                             % {"file": args.filename, "found": spec.kind.label,
                                "kind": kind.label, "slug": spec.kind.slug})
    else:
        spec = kind.new_spec(name=name, image=args.image, command=command)
        said = spec.kind.command_line
        # what a spec of this kind cannot do without (a TrainJob's runtime has a command)
        missing = [flag for flag, value, needed in (
            ("NAME", name, True), ("--image", args.image, True),
            ("--command", command, said.needs_command)) if needed and not value]
        if missing:
            raise UsageError(str(said.missing) % {"what": ", ".join(missing)})
    if name:
        spec.name = name
    if args.namespace:
        spec.namespace = args.namespace
    if args.image and args.filename:
        spec.image = args.image
    for attr, flag, value in (("cpu_per_worker", "--cpu-per-worker", args.cpu),
                              ("memory_per_worker", "--memory-per-worker", args.memory),
                              ("launcher_cpu", "--launcher-cpu", args.launcher_cpu),
                              ("launcher_memory", "--launcher-memory", args.launcher_memory)):
        if value is not None:
            setattr(spec, attr, _quantity(flag, value))
    # the flags only some kinds' jobs take: refused for a job of another kind
    own = spec.kind.command_line.own_flags
    given = [f for f in command_line_flags() if getattr(args, f.dest, None) is not None
             and f not in own]
    if given:
        owner = next(k for k in creatable_kinds() if given[0] in k.command_line.own_flags)
        raise UsageError(str(owner.command_line.not_for_others) % {
            "flags": ", ".join(f.flag for f in given), "kind": spec.kind.label})
    for own_flag in own:
        value = getattr(args, own_flag.dest, None)
        if value is not None:
            setattr(spec, own_flag.field, value)
    settings: dict[str, Any] = {
        "workers": args.workers, "gpus_per_worker": args.gpus,
        "slots_per_worker": args.slots_per_worker,
        "mpi_implementation": {"IntelMPI": "Intel"}.get(args.mpi_implementation,
                                                        args.mpi_implementation),
        "queue_name": args.queue, "priority_class": args.priority_class}
    for attr, value in settings.items():
        if value is not None:
            setattr(spec, attr, value)
    for item in args.env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(_("--env “%(item)s”: write NAME=VALUE, e.g. --env "
                               "NCCL_DEBUG=INFO.") % {"item": item[:60]})
        spec.env = [e for e in spec.env if e.name != key] + [EnvVar(name=key, value=value)]
    for item in args.env_secret:
        key, sep, ref = item.partition("=")
        secret, colon, secret_key = ref.partition(":")
        if not (key and sep and secret and colon and secret_key):
            raise UsageError(_("--env-secret “%(item)s”: write NAME=SECRET:KEY, e.g. "
                               "--env-secret WANDB_API_KEY=wandb-api:api-key.")
                             % {"item": item[:60]})
        spec.env = [e for e in spec.env if e.name != key] + [EnvVar(name=key, value_from={
            "secretKeyRef": {"name": secret, "key": secret_key}})]
    for item in args.volume:
        spec.volumes = _with_volume(spec.volumes, item)
    if args.image_pull_secret is not None:
        spec.image_pull_secret = args.image_pull_secret
    if args.node_selector:
        spec.node_selector = _pairs("--node-selector", args.node_selector)
    for flag, attr, items in (("--label", "labels", args.label),
                              ("--annotation", "annotations", args.annotation)):
        for item in items:
            setattr(spec, attr, {**getattr(spec, attr), **_pairs(flag, item)})
    if args.output_artifacts is not None:
        path = args.output_artifacts.strip()
        if not path.startswith("/") or ".." in path.split("/"):
            raise UsageError(_("--output-artifacts “%(path)s”: give the absolute path the job "
                               "writes its results to, such as /mnt/output.")
                             % {"path": path[:80]})
        spec.annotations = {**spec.annotations, OUTPUT_PATH_ANNOTATION: path}
    spec.annotations = _retries(args, spec.annotations)
    return _with_fields_set(spec, args.set_fields) if args.set_fields else spec


def _with_volume(volumes: list[PVCVolume], item: str) -> list[PVCVolume]:
    """`--volume CLAIM:PATH[:ro]` added to the spec's claims (one mount per claim: the
    flag replaces a manifest's mount of the same claim). The claim's name and the path are
    checked with the rest of the spec (the claim must exist in the project)."""
    claim, _sep, rest = item.partition(":")
    path, _sep, mode = rest.partition(":")
    if not claim or not path or mode not in ("", "ro", "rw"):
        raise UsageError(_("--volume “%(item)s”: write CLAIM:PATH, e.g. --volume data:/data "
                           "(add :ro to mount it read-only).") % {"item": item[:80]})
    return [v for v in volumes if v.claim_name != claim] + [
        PVCVolume(claim_name=claim, mount_path=path, read_only=mode == "ro")]


def _retries(args: argparse.Namespace, annotations: dict[str, str]) -> dict[str, str]:
    """`--retries N [--retry-all-failures]` as the job's annotations (odh/training/
    manifests/retries.py)."""
    if args.retries is None:
        if args.retry_all_failures:
            raise UsageError(_("--retry-all-failures goes with --retries N: say how many "
                               "times to retry."))
        return annotations
    try:
        return with_retries(annotations, args.retries, ALL if args.retry_all_failures
                            else PLATFORM)
    except ValueError as e:
        raise UsageError(f"--retries: {e}") from None


def _template(args: argparse.Namespace):
    if not args.template:
        return None
    found = template_by_slug(args.template)
    if found is None:
        raise UsageError(_("--template “%(name)s”: there is no such template; use one of "
                           "%(names)s.") % {"name": args.template[:60], "names": ", ".join(
                               t.slug for t in BUILTIN_TEMPLATES)})
    return found


def _with_fields_set(spec: JobSpec, items: list[str]) -> JobSpec:
    """The spec with `--set PATH=VALUE`s applied to its manifest (then read back, so the
    wizard's checks see what they set)."""
    manifest = build_manifest(spec)
    try:
        for item in items:
            apply_set(manifest, item)
        changed = read_manifest(manifest)
    except (OverrideError, ManifestError) as e:
        raise UsageError(str(e)) from None
    changed.created_by = spec.created_by
    return changed
