"""Fields a job's manifest keeps from the manifest it started from, which the wizard does
not show.

A spec read from a manifest (an import, a clone, a template saved by someone) remembers it
as its base, and `build_manifest` keeps everything the wizard's model does not know:
`serviceAccountName`, a `hostPath` volume, a `securityContext`, another container... A
person creating from a template a colleague shared would not see those in the wizard's
steps. `kept_fields` names them: every path of the manifest to be created that the same
settings, built without a base, do not have.
"""

from __future__ import annotations

import dataclasses

from odh.training.spec import JobSpec, build_manifest

_REPLICAS = ("spec", "mpiReplicaSpecs")


def kept_fields(spec: JobSpec) -> list[str]:
    """Where the manifest of `spec` carries what the wizard does not show, as readable
    paths ("Worker: spec.serviceAccountName", "spec.runPolicy.schedulingPolicy"), in the
    manifest's order; [] without a base."""
    if spec.base is None:
        return []
    created = build_manifest(spec)
    shown = build_manifest(dataclasses.replace(spec, base=None))
    found: list[tuple[str, ...]] = []
    _missing(created, shown, (), found)
    return [_readable(path) for path in found]


def _missing(created: object, shown: object, path: tuple[str, ...],
             found: list[tuple[str, ...]]) -> None:
    """Paths of `created` that `shown` lacks (a value both have, spelt or set differently,
    is a setting the wizard shows: not listed)."""
    if isinstance(created, dict) and isinstance(shown, dict):
        for key, value in created.items():
            if key not in shown:
                if isinstance(value, list) and value and all(_name(i) for i in value):
                    _missing(value, [], (*path, str(key)), found)  # each by name
                elif value not in (None, {}, []):
                    found.append((*path, str(key)))
            else:
                _missing(value, shown[key], (*path, str(key)), found)
    elif isinstance(created, list) and isinstance(shown, list):
        names = {_name(item) for item in shown if _name(item)}
        by_name = {_name(item): item for item in shown if _name(item)}
        for index, item in enumerate(created):
            name = _name(item)
            label = f"[{name}]" if name else f"[{index}]"
            if name and name not in names:
                found.append((*path[:-1], path[-1] + label) if path else (label,))
            elif name:
                _missing(item, by_name[name], (*path[:-1], path[-1] + label), found)
            elif index >= len(shown):
                found.append((*path[:-1], path[-1] + label) if path else (label,))
            else:
                _missing(item, shown[index], (*path[:-1], path[-1] + label), found)


def _name(item: object) -> str:
    return str(item.get("name") or "") if isinstance(item, dict) else ""


def _readable(path: tuple[str, ...]) -> str:
    """"spec.mpiReplicaSpecs.Worker.template.spec.x" reads "Worker: spec.x"."""
    if path[:2] == _REPLICAS and len(path) > 3 and path[3] == "template":
        return f"{path[2]}: " + ".".join(path[4:])
    return ".".join(path)
