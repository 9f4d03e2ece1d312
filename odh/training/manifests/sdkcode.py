"""The Python program that creates the same job through the SDK (the wizard's "SDK code").

Only settings that differ from the spec class's defaults are written. A spec that carries a
manifest with fields the model does not name (a clone, an import, some templates) also
gets that manifest as `base`, so the program creates exactly what the wizard would.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from odh.training import spec as specs
from odh.training.manifests.claims import NewClaim
from odh.training.manifests.export import exportable
from odh.training.manifests.trainjobcode import CONSTRUCTORS, class_code
from odh.training.spec import JobSpec, PVCVolume, SourceVolume, build_manifest
from odh.training.spec import volume_name_for as _volume_name_for

WIDTH = 99
INDENT = "    "
_NESTED = (specs.EnvVar, PVCVolume, specs.Toleration, specs.EnvSource, SourceVolume,
           specs.NodeRequirement)


def _string(value: str) -> str:
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def _flat(value: Any) -> str:
    """A Python literal on one line."""
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flat(k)}: {_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, _NESTED):
        return f"{type(value).__name__}(" + ", ".join(
            f"{k}={_flat(v)}" for k, v in _changed(value).items()) + ")"
    return repr(value)


def literal(value: Any, indent: int = 0, prefix: str = "") -> str:
    """A Python literal, on one line when it fits after `prefix`, else one item a line."""
    flat = _flat(value)
    pad = INDENT * indent
    if len(pad) + len(prefix) + len(flat) + 1 <= WIDTH:
        return flat
    inner = INDENT * (indent + 1)
    if isinstance(value, list) and value:
        items = [inner + literal(v, indent + 1) + "," for v in value]
        return "[\n" + "\n".join(items) + "\n" + pad + "]"
    if isinstance(value, dict) and value:
        items = []
        for key, item in value.items():
            head = f"{_flat(key)}: "
            items.append(inner + head + literal(item, indent + 1, head) + ",")
        return "{\n" + "\n".join(items) + "\n" + pad + "}"
    if isinstance(value, _NESTED):
        items = []
        for key, item in _changed(value).items():
            head = f"{key}="
            items.append(inner + head + literal(item, indent + 1, head) + ",")
        return f"{type(value).__name__}(\n" + "\n".join(items) + "\n" + pad + ")"
    return flat


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _changed(obj: Any) -> dict[str, Any]:
    """The fields of a dataclass that differ from their defaults (required ones always)."""
    changed = {}
    for f in dataclasses.fields(obj):
        if f.name == "base":
            continue
        value = getattr(obj, f.name)
        if isinstance(obj, PVCVolume) and f.name == "name" \
                and value == _volume_name_for(obj.claim_name):
            continue
        if isinstance(obj, SourceVolume) and f.name == "volume" \
                and value == SourceVolume(obj.kind, obj.name, "").volume:
            continue
        default = _default(f)
        if default is dataclasses.MISSING or value != default:
            changed[f.name] = value
    return changed


def _base_needed(spec: JobSpec) -> dict | None:
    """The manifest to pass as base, when the spec's fields alone would build less."""
    if spec.base is None:
        return None
    built = exportable(build_manifest(spec))
    if build_manifest(dataclasses.replace(spec, base=None)) == built:
        return None
    return built


def sdk_code(spec: JobSpec, claims: Sequence[NewClaim] = ()) -> str:
    """A runnable program that creates this job: with the SDK's class of its kind where
    it has one (`JobKind.sdk_class`: the TrainJob, trainjobcode.py), else with
    TrainingClient. `claims`: the new volume claims it mounts, made first."""
    settings = _changed(spec)
    base = _base_needed(spec)
    if spec.kind.sdk_class in CONSTRUCTORS:
        code = class_code(spec, settings, base is not None, literal,
                          lambda: _spec_code(spec, settings, base, made_by_class=True))
    else:
        code = _spec_code(spec, settings, base)
    return _with_claims(code, spec.namespace, claims) if claims else code


def _with_claims(code: str, namespace: str, claims: Sequence[NewClaim]) -> str:
    """The program with the new claims made before the job (and TrainingClient imported)."""
    lines = code.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("job = ")), len(lines))
    made = ["# the new volume claims the job mounts, made first (as the wizard does)"]
    for claim in claims:
        args = [literal(claim.name, 1, ""), literal(claim.size, 1, "")]
        if namespace:
            args.append(f"namespace={literal(namespace, 1, '')}")
        args.append(f"access_mode={literal(claim.access_mode, 1, '')}")
        if claim.storage_class:
            args.append(f"storage_class={literal(claim.storage_class, 1, '')}")
        made.append(f"TrainingClient().create_volume_claim({', '.join(args)})")
    lines[at:at] = [*made, ""]
    for i, line in enumerate(lines):
        if line.startswith("from odh.training import ") and "TrainingClient" not in line:
            names = sorted([*line.removeprefix("from odh.training import ").split(", "),
                            "TrainingClient"])
            lines[i] = "from odh.training import " + ", ".join(names)
            break
    return "\n".join(lines)


def _spec_code(spec: JobSpec, settings: dict[str, Any], base: dict | None,
               made_by_class: bool = False) -> str:
    """The program that writes the spec itself and creates it (with the SDK's class of the
    kind, `made_by_class`, else with TrainingClient)."""
    spec_class, kind = type(spec).__name__, spec.kind.label
    nested = sorted({type(item).__name__ for value in settings.values()
                     if isinstance(value, list) for item in value if isinstance(item, _NESTED)})
    maker = spec.kind.sdk_class if made_by_class else "TrainingClient"
    names = ", ".join(sorted(nested + [spec_class, maker]))
    title = f"{spec.namespace}/{spec.name}" if spec.namespace else spec.name
    lines = [f'"""Create the {kind} {_safe_docstring(title)} with the training SDK."""',
             "", f"from odh.training import {names}", ""]
    if base is not None:
        lines += ["# The manifest this job started from; settings it has that "
                  f"{spec_class} does not",
                  "# name are kept as they are.",
                  f"BASE = {literal(base, 0, 'BASE = ')}", ""]
    lines.append(f"spec = {spec_class}(")
    for key, value in settings.items():
        head = f"{key}="
        lines.append(f"{INDENT}{head}{literal(value, 1, head)},")
    if base is not None:
        lines.append(f"{INDENT}base=BASE,")
    if made_by_class:
        lines += [")", "", f"job = {maker}.from_spec(spec).create()",
                  f'print("Created {kind}", job.namespace + "/" + job.name)', ""]
    else:
        lines += [")", "", f"job = TrainingClient().create_{spec.kind.slug}(spec)",
                  f'print("Created {kind}", job["metadata"]["namespace"] + "/" + '
                  'job["metadata"]["name"])', ""]
    return "\n".join(lines)


def _safe_docstring(text: str) -> str:
    cleaned = "".join(ch for ch in text if ch.isprintable() and ch not in '"\\')
    return cleaned[:60] or "job"
