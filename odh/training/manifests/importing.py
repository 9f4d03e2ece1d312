"""Importing an MPIJob manifest that a person pastes or uploads into the wizard.

`parse_manifest_text` reads YAML or JSON safely (size limit; aliases, expansion, depth and
duplicate keys bounded, see safeyaml), wants exactly one kubeflow.org/v2beta1 MPIJob, checks
the shape of the parts the wizard reads (structure), and returns the spec with the manifest
as its base, so fields the wizard does not show are kept. What the cluster wrote on an
exported job (status, uid, resourceVersion...) is dropped.

This is not the CRD's schema validation: the API server does that when the wizard submits
(first as a server-side dry run), and its answer is shown as it comes. One part of it the
create would not show: a field the schema does not declare (a misspelt `cleanPodPolice`)
is dropped by the API server without a word. `unknown_fields` asks the API server for
those (a dry run with fieldValidation=Strict), and `unknown_fields_message` tells the
person what to do about them.
"""

from __future__ import annotations

import copy
import math
import re
from typing import TYPE_CHECKING, Any

import yaml

from odh.training import errors
from odh.training.i18n import _, ngettext
from odh.training.kinds import KINDS, JobKind, creatable_kinds, kind_for_object
from odh.training.manifests.claims import is_claim_manifest
from odh.training.manifests.safeyaml import UnsafeYAMLError, load_json, load_yaml_documents
from odh.training.manifests.structure import structure_problems
from odh.training.spec import JobSpec, clone_spec, read_manifest

if TYPE_CHECKING:
    from odh.training.cluster.client import ClusterClient

MAX_BYTES = 256 * 1024
_SHOWN_PROBLEMS = 3


class ManifestImportError(ValueError):
    """A pasted or uploaded manifest the wizard cannot open; the message says how to fix it."""


def _too_big(size: int, limit: int) -> ManifestImportError:
    return ManifestImportError(_(
        "The file is %(size)d KiB, more than the %(limit)d KiB a manifest may be here: paste "
        "only the MPIJob (one is usually a few KiB).") % {"size": math.ceil(size / 1024),
                                                         "limit": limit // 1024})


def _decode(text: str | bytes, max_bytes: int) -> str:
    if isinstance(text, bytes):
        if len(text) > max_bytes:
            raise _too_big(len(text), max_bytes)
        encoding = "utf-16" if text[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
        try:
            return text.decode(encoding)
        except UnicodeDecodeError:
            raise ManifestImportError(_("The file is not UTF-8 text: save the manifest as "
                                        "UTF-8 YAML or JSON and upload it again.")) from None
    # A character is at least one byte: a text longer than the limit is over it.
    size = len(text) if len(text) > max_bytes else len(text.encode("utf-8", "replace"))
    if size > max_bytes:
        raise _too_big(size, max_bytes)
    return text.removeprefix("\ufeff")


def _syntax_error(exc: yaml.YAMLError) -> ManifestImportError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is None:
        return ManifestImportError(_("This is not valid YAML (%(problem)s): check the "
                                     "indentation and quoting.") % {"problem": problem[:120]})
    return ManifestImportError(_(
        "This is not valid YAML: %(problem)s at line %(line)d, column %(column)d. Check the "
        "indentation and quoting there.") % {"problem": problem[:120], "line": mark.line + 1,
                                             "column": mark.column + 1})


def _documents(text: str) -> list[object]:
    stripped = text.lstrip()
    if stripped.startswith("<"):
        raise ManifestImportError(_('This looks like an HTML or XML page, not a manifest: copy '
                                    'the YAML itself (on GitHub, open the file with "Raw") and '
                                    "paste that."))
    try:
        if stripped.startswith("{"):
            try:
                return [load_json(text)]
            except ValueError as exc:
                if isinstance(exc, UnsafeYAMLError):
                    raise
                # Not JSON after all; YAML (flow style) may still read it.
        return load_yaml_documents(text)
    except UnsafeYAMLError as exc:
        raise ManifestImportError(str(exc)) from None
    except yaml.YAMLError as exc:
        raise _syntax_error(exc) from None


def _what(value: object) -> str:
    if isinstance(value, list):
        return _("a list")
    if isinstance(value, str):
        return _("plain text")
    if value is None:
        return _("nothing")
    return _("a single value")


def _single_object(documents: list[object]) -> dict:
    if not documents:
        raise ManifestImportError(_("The file is empty: paste or upload an MPIJob manifest in "
                                    "YAML or JSON."))
    if len(documents) > 1:
        raise ManifestImportError(_("This file holds %(count)d documents: paste a single "
                                    "MPIJob.") % {"count": len(documents)})
    manifest = documents[0]
    if not isinstance(manifest, dict):
        raise ManifestImportError(_("This is not a manifest: expected an object with "
                                    "apiVersion, kind, metadata and spec, but the file holds "
                                    "%(what)s. Paste an MPIJob manifest.")
                                  % {"what": _what(manifest)})
    if manifest.get("kind") == "List" or (str(manifest.get("kind", "")).endswith("List")
                                          and isinstance(manifest.get("items"), list)):
        items = manifest.get("items")
        items = items if isinstance(items, list) else []
        if len(items) != 1 or not isinstance(items[0], dict):
            raise ManifestImportError(_("This is a list of %(count)d objects: paste a single "
                                        "MPIJob (kubectl get mpijob NAME -o yaml).")
                                      % {"count": len(items)})
        manifest = items[0]
    return manifest


def _check_kind(manifest: dict, accepted: list[JobKind]) -> None:
    kind, api_version = manifest.get("kind"), manifest.get("apiVersion")
    # the words name the kinds the wizard shows among those read (the SDK and the CLI
    # read every kind they create)
    named = [k for k in accepted if k.wizard_ready] or accepted
    values = {"kind": str(kind)[:60], "api_version": str(api_version)[:60],
              "expected": ", ".join(k.api_version for k in named),
              "kinds": ", ".join(f"{k.kind} ({k.api_version})" for k in named)}
    if len(named) > 1:
        _check_one_of(manifest, accepted, values)
        return
    if not kind or not isinstance(kind, str):
        raise ManifestImportError(_("The manifest has no kind: an MPIJob starts with "
                                    "apiVersion: %(expected)s and kind: MPIJob.") % values)
    if not any(k.kind == kind for k in accepted):
        if any(k.kind == kind for k in KINDS.values()):
            raise ManifestImportError(_(
                "This is a %(kind)s; the wizard creates MPIJobs: paste an MPIJob manifest "
                "(apiVersion: %(expected)s, kind: MPIJob), or create the %(kind)s with "
                "kubectl.") % values)
        raise ManifestImportError(_(
            "This is a %(kind)s, not an MPIJob: the wizard creates MPIJobs (apiVersion: "
            "%(expected)s, kind: MPIJob).") % values)
    found = kind_for_object(manifest)
    if found is None or found not in accepted:
        raise ManifestImportError(_(
            "This MPIJob is %(api_version)s; the wizard reads %(expected)s: change apiVersion "
            "to %(expected)s (moving any fields that changed between versions, such as "
            "cleanPodPolicy into runPolicy) and try again.") % values)


def _check_one_of(manifest: dict, accepted: list[JobKind], values: dict) -> None:
    """`_check_kind` where several kinds are read (the MPIJob and the TrainJob)."""
    kind = manifest.get("kind")
    if not kind or not isinstance(kind, str):
        raise ManifestImportError(_("The manifest has no kind: paste the manifest of one "
                                    "of %(kinds)s, with its apiVersion and kind.") % values)
    same = [k for k in accepted if k.kind == kind]
    if not same:
        if any(k.kind == kind for k in KINDS.values()):
            raise ManifestImportError(_(
                "This is a %(kind)s, which the wizard does not create: paste the manifest of "
                "one of %(kinds)s, or create the %(kind)s with kubectl.") % values)
        raise ManifestImportError(_(
            "This is a %(kind)s, not a training job the wizard creates: paste the manifest "
            "of one of %(kinds)s.") % values)
    found = kind_for_object(manifest)
    if found is None or found not in accepted:
        values["wanted"] = same[0].api_version
        if same[0].replica_specs_field:  # the MPIJob: what moved between its versions
            values["expected"] = values["wanted"]
            raise ManifestImportError(_(
                "This MPIJob is %(api_version)s; the wizard reads %(expected)s: change "
                "apiVersion to %(expected)s (moving any fields that changed between versions, "
                "such as cleanPodPolicy into runPolicy) and try again.") % values)
        raise ManifestImportError(_(
            "This %(kind)s is %(api_version)s; the wizard reads %(wanted)s: change apiVersion "
            "to %(wanted)s and try again.") % values)


def parse_manifest_text(text: str | bytes, max_bytes: int = MAX_BYTES,
                        kinds: list[JobKind] | None = None) -> JobSpec:
    """The JobSpec a pasted manifest describes, of one of `kinds` (default: every kind
    the dashboard creates; the wizard passes the kinds its steps show);
    ManifestImportError says what to fix."""
    return _spec_of(_single_object(_documents(_decode(text, max_bytes))), kinds)


def parse_manifest_with_claims(text: str | bytes, max_bytes: int = MAX_BYTES,
                               kinds: list[JobKind] | None = None
                               ) -> tuple[JobSpec, list[dict]]:
    """A job's manifest followed by the new PersistentVolumeClaims made with it (the
    wizard's YAML mode: odh.training.manifests.claims), as one YAML stream: the job's spec
    (as `parse_manifest_text` reads it) and the claims' manifests."""
    documents = _documents(_decode(text, max_bytes))
    claims = [d for d in documents if is_claim_manifest(d)]
    rest = [d for d in documents if not is_claim_manifest(d)]
    return _spec_of(_single_object(rest), kinds), claims


def _spec_of(manifest: dict, kinds: list[JobKind] | None) -> JobSpec:
    _check_kind(manifest, creatable_kinds() if kinds is None else kinds)
    found = kind_for_object(manifest)
    # the replica specs' shape is checked where a kind has them (the MPIJob's); another
    # kind's manifest is read as its reader reads it, and the API server checks the rest
    problems = structure_problems(manifest) if found and found.replica_specs_field else []
    if problems:
        shown = problems[:_SHOWN_PROBLEMS]
        if len(problems) > _SHOWN_PROBLEMS:
            shown.append(_("(and %(count)d more)") % {"count": len(problems) - _SHOWN_PROBLEMS})
        raise ManifestImportError(" ".join(shown))
    spec = read_manifest(manifest)
    return clone_spec(spec, spec.name)


# -- fields the cluster's schema does not declare ---------------------------------------------
# The API server's answer to fieldValidation=Strict: `MPIJob in version "v2beta1" cannot be
# handled as a MPIJob: strict decoding error: unknown field "spec.bogus", unknown field ...`
_STRICT_ERROR = "strict decoding error"
_UNKNOWN_FIELD = re.compile(r'unknown field "([^"]+)"')
_SHOWN_FIELDS = 10


def unknown_fields(client: ClusterClient, namespace: str, manifest: dict) -> list[str]:
    """The fields of `manifest` that the cluster's MPIJob schema does not declare, as the
    API server names them ("spec.runPolicy.cleanPodPolice",
    "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resource").

    Asked with a dry run (nothing is created) and fieldValidation=Strict, which refuses
    such a manifest naming every unknown field; the real create does not ask for it, so
    the API server would drop them silently. [] when the dry run accepts the manifest, and
    when it refuses it for another reason or the cluster cannot be reached: then nothing
    can be said about the fields, and the create's own dry run reports the refusal.
    `errors.Unauthorized` is raised (the person signs in again).
    """
    if not namespace:
        return []
    # a manifest the wizard built or read is of a kind it creates
    kind = kind_for_object(manifest) or creatable_kinds()[0]
    try:
        client.create_job(kind, namespace, manifest, dry_run=True, field_validation="Strict")
    except errors.Unauthorized:
        raise
    except errors.ClusterError as e:
        if e.status == 400 and _STRICT_ERROR in e.message:
            return list(dict.fromkeys(_UNKNOWN_FIELD.findall(e.message)))
        return []
    return []


def unknown_fields_message(fields: list[str]) -> str:
    """What to do about the fields `unknown_fields` found (at least one)."""
    shown = ", ".join(f"“{f}”" for f in fields[:_SHOWN_FIELDS])
    if len(fields) > _SHOWN_FIELDS:
        shown += " " + _("(and %(count)d more)") % {"count": len(fields) - _SHOWN_FIELDS}
    text = ngettext(
        "The cluster's MPIJob API has no field %(fields)s: the cluster would drop it and "
        "create the job without it. If it is misspelt, correct it in the manifest (check "
        "the spelling against the MPIJob API: kubectl explain mpijobs.spec --recursive) and "
        "import the manifest again; if the job does not need it, remove it from the "
        "manifest, or create the job without it.",
        "The cluster's MPIJob API has no fields %(fields)s: the cluster would drop them and "
        "create the job without them. If they are misspelt, correct them in the manifest "
        "(check the spelling against the MPIJob API: kubectl explain mpijobs.spec "
        "--recursive) and import the manifest again; if the job does not need them, remove "
        "them from the manifest, or create the job without them.", len(fields))
    return text % {"fields": shown}


_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def without_fields(manifest: dict, fields: list[str]) -> dict:
    """A copy of `manifest` without `fields` (paths as `unknown_fields` names them); a path
    that names nothing in it is passed over."""
    result = copy.deepcopy(manifest)
    for path in fields:
        parts: list[Any] = [int(index) if index else key
                            for key, index in _PATH_PART.findall(path)]
        parent: Any = result
        for part in parts[:-1]:
            try:
                parent = parent[part]
            except (KeyError, IndexError, TypeError):
                parent = None
                break
        last = parts[-1] if parts else None
        if isinstance(parent, dict) and isinstance(last, str):
            parent.pop(last, None)
    return result
