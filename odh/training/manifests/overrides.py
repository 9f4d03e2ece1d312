"""`--set PATH=VALUE` (the CLI's create, as Helm's `--set`): a change to any field of the
manifest a job is made from (a file, a template or the flags), applied before the checks,
so what it sets is checked like anything else.

PATH walks the manifest: `spec.runPolicy.backoffLimit=3`, `metadata.labels.team=nlp`,
`spec.mpiReplicaSpecs.Worker.template.spec.containers[0].image=quay.io/x:2`, a key with
dots escaped as Helm's: `metadata.annotations.opendatahub\\.io/retries=2`; a missing
map on the way is made, a list index must exist (or be the next one). VALUE is read as
YAML reads a scalar (`3` a number, `true` a boolean, `"3"` a string); `PATH=` sets "".
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from odh.training.i18n import _

_STEP = re.compile(r"((?:[^.\[\]\\]|\\.)+)|\[(\d+)\]")  # `\.`: a dot in a key


class OverrideError(ValueError):
    pass


def _steps(path: str) -> list[str | int]:
    steps: list[str | int] = []
    at = 0
    for match in _STEP.finditer(path):
        gap = path[at:match.start()]
        if gap not in ("", "."):
            break
        steps.append(re.sub(r"\\(.)", r"\1", match[1]) if match[1] is not None
                     else int(match[2]))
        at = match.end()
    if not steps or at != len(path) or not isinstance(steps[0], str):
        raise OverrideError(_("--set “%(path)s”: write a path of fields, such as "
                              "spec.runPolicy.backoffLimit=3 or "
                              "spec.mpiReplicaSpecs.Worker.replicas=4.") % {"path": path[:80]})
    return steps


def parse_value(text: str) -> Any:
    try:
        value = yaml.safe_load(text) if text else ""
    except yaml.YAMLError:
        return text
    return text if isinstance(value, (dict, list)) or (value is None and text) else value


def apply_set(manifest: dict, item: str) -> None:
    """Apply one `PATH=VALUE` to `manifest` (in place)."""
    path, sep, text = item.partition("=")
    if not sep or not path.strip():
        raise OverrideError(_("--set “%(item)s”: write PATH=VALUE, such as "
                              "spec.runPolicy.backoffLimit=3.") % {"item": item[:80]})
    steps = _steps(path.strip())
    here: Any = manifest
    for at, (step, after) in enumerate(zip(steps, [*steps[1:], None], strict=True)):
        last = after is None
        made: Any = [] if isinstance(after, int) else {}
        if isinstance(step, int):
            if not isinstance(here, list) or step > len(here):
                raise OverrideError(_("--set “%(path)s”: %(where)s has no item %(index)d.")
                                    % {"path": path, "where": _shown(steps[:at]) or "-",
                                       "index": step})
            if step == len(here):
                here.append(made)
            if last:
                here[step] = parse_value(text)
            elif not isinstance(here[step], (dict, list)):
                here[step] = made
            here = here[step]
            continue
        if not isinstance(here, dict):
            raise OverrideError(_("--set “%(path)s”: %(where)s is not a map of fields.")
                                % {"path": path, "where": _shown(steps[:at])})
        if last:
            here[step] = parse_value(text)
        else:
            if not isinstance(here.get(step), (dict, list)):
                here[step] = made
            here = here[step]


def _shown(steps: list[str | int]) -> str:
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else ("." if text else "") + step
    return text
