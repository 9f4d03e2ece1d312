"""Validation rules for the wizard's later fields: what the job is for (its description),
where its containers start (the working directory), and the Secrets and ConfigMaps it
takes variables from or mounts."""

from __future__ import annotations

import posixpath

from odh.training.checks.names import is_dns1123_subdomain
from odh.training.checks.rules_job import Findings, text
from odh.training.findings import FieldError, ValidationContext
from odh.training.i18n import _, shown
from odh.training.kinds.jobspec import SOURCE_KINDS
from odh.training.paths import get_path
from odh.training.spec import JobSpec

# A description is a sentence or a paragraph, not a document: the job list and the
# Overview show it whole.
MAX_DESCRIPTION = 2000
MAX_PATH = 4096
MPI_CONFIG_PATH = "/etc/mpi"
DEFAULT_SSH_PATH = "/root/.ssh"


def check_description(spec: JobSpec, context: ValidationContext) -> Findings:
    description = text(getattr(spec, "description", ""))
    if len(description) > MAX_DESCRIPTION:
        yield FieldError("description", _(
            "The description is %(length)d characters long: shorten it to at most %(limit)d "
            "(a sentence or two on what the job is for).")
            % {"length": len(description), "limit": MAX_DESCRIPTION})


def check_working_dir(spec: JobSpec, context: ValidationContext) -> Findings:
    path = text(getattr(spec, "working_dir", ""))
    if not path:
        return
    values = {"path": shown(path, 80)}
    if not path.startswith("/"):
        yield FieldError("working_dir", _(
            'Working directory "%(path)s" is not absolute: start it with "/" (for example '
            '"/workspace").') % values)
    elif len(path) > MAX_PATH or any(ch in path for ch in "\n\r\t\x00"):
        yield FieldError("working_dir", _(
            'Working directory "%(path)s" is not a path a container can start in: use one '
            'line of at most 4096 characters, such as "/workspace".') % values)


def _check_source(field: str, kind: str, name: str) -> Findings:
    if kind not in SOURCE_KINDS or not name:
        yield FieldError(field, _("Choose the Secret or ConfigMap, or remove this row."))
    elif not is_dns1123_subdomain(name):
        yield FieldError(field, _('"%(name)s" is not the name of a Secret or ConfigMap: '
                                  'lowercase letters, digits, "-" and ".".')
                         % {"name": shown(name)})


def reserved_paths(spec: JobSpec) -> dict[str, str]:
    """The paths the MPI Operator mounts into the pods -> what it puts there."""
    ssh = get_path(spec.base, ["spec", "sshAuthMountPath"]) if isinstance(spec.base, dict) \
        else None
    return {MPI_CONFIG_PATH: _("the hostfile"),
            text(ssh) or DEFAULT_SSH_PATH: _("the SSH keys")}


def mount_path_findings(field: str, path: str, taken: set[str],
                        reserved: dict[str, str]) -> Findings:
    """What is wrong with a volume's mount path; `taken` (the paths of the volumes before
    it) gets this one."""
    clean = posixpath.normpath(path) if path.startswith("/") else path
    values = {"path": shown(path, 80)}
    if not path:
        yield FieldError(field, _('Enter where to mount the volume, for example "/data".'))
    elif not path.startswith("/"):
        yield FieldError(field, _('Mount path "%(path)s" is not absolute: start it with "/" '
                                  '(for example "/data").') % values)
    elif clean == "/":
        yield FieldError(field, _('Mounting at "/" would hide the whole image: choose a '
                                  'folder such as "/data".'))
    elif clean in reserved:
        values["what"] = reserved[clean]
        yield FieldError(field, _("%(path)s is where the MPI Operator puts %(what)s: choose "
                                  "another mount path.") % values)
    elif clean in taken:
        yield FieldError(field, _("Another volume is already mounted at %(path)s: give each "
                                  "volume its own mount path.") % values)
    taken.add(clean)


def check_sources(spec: JobSpec, context: ValidationContext) -> Findings:
    """Secrets and ConfigMaps whose keys become variables, or are mounted as files (after
    the claims: a path a claim has is taken)."""
    for index, source in enumerate(getattr(spec, "env_from", None) or []):
        yield from _check_source(f"env_from[{index}]", text(source.kind), text(source.name))
    taken = {posixpath.normpath(text(v.mount_path)) for v in spec.volumes
             if text(v.mount_path).startswith("/")}
    reserved = reserved_paths(spec)
    for index, volume in enumerate(getattr(spec, "source_volumes", None) or []):
        yield from _check_source(f"source_volumes[{index}]", text(volume.kind),
                                 text(volume.name))
        yield from mount_path_findings(f"source_volumes[{index}].mount_path",
                                       text(volume.mount_path), taken, reserved)
