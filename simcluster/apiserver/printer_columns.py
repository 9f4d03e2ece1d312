"""The `additionalPrinterColumns` of the custom resources whose upstream CRDs declare them,
and the cells the API server makes of them (apiextensions-apiserver's tableconvertor):
each column's JSONPath is evaluated against the object; no result is an empty cell (kubectl
prints `<none>`), several are joined with commas, a `date` is printed as an age, and the
others as the JSONPath printer writes them (`true`, `3`, `Complete`).

The JSONPath here is the subset those columns use: `.field.field`, `[n]`, `[-1:]` (the
last element, as a slice) and filters `[?(@.field=="value")]`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]
Column = tuple[str, str, int, str]  # name, type, priority, format
Printer = tuple[str, str, str]  # name, type, JSONPath

# from the CRDs upstream publishes (kubeflow/trainer manifests/base/crds,
# kubernetes-sigs/jobset config/components/crd/bases); runtimes declare none
PRINTER_COLUMNS: dict[str, list[Printer]] = {
    "trainer.kubeflow.org/trainjobs": [
        ("State", "string", ".status.conditions[-1:].type"),
        ("Age", "date", ".metadata.creationTimestamp"),
    ],
    "jobset.x-k8s.io/jobsets": [
        ("TerminalState", "string", ".status.terminalState"),
        ("Restarts", "string", ".status.restarts"),
        ("Completed", "string", '.status.conditions[?(@.type=="Completed")].status'),
        ("Suspended", "string", ".spec.suspend"),
        ("Age", "date", ".metadata.creationTimestamp"),
    ],
}

_STEP = re.compile(r"""\.([A-Za-z0-9_-]+)|\[(-?\d+)(:)?\]"""
                   r"""|\[\?\(@\.([A-Za-z0-9_]+)\s*==\s*["']([^"']*)["']\)\]""")


def evaluate(path: str, obj: Any) -> list[Any]:
    """The values `path` finds in `obj` (none when a step finds nothing)."""
    found = [obj]
    pos = 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            raise ValueError(f"unsupported JSONPath {path!r} at {pos}")
        pos = m.end()
        field, index, sliced, key, value = m.groups()
        step: list[Any] = []
        for item in found:
            if field is not None:
                if isinstance(item, dict) and field in item:
                    step.append(item[field])
            elif index is not None:
                if isinstance(item, list) and item:
                    i = int(index)
                    if sliced:  # [n:]: the elements from n
                        step += item[i:]
                    elif -len(item) <= i < len(item):
                        step.append(item[i])
            elif isinstance(item, list):
                step += [e for e in item if isinstance(e, dict) and str(e.get(key)) == value]
        found = step
    return found


def _text(value: Any) -> str:
    """As the JSONPath printer writes a value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def printer(key: str, age: Callable[[Any, float], str]
            ) -> tuple[list[Column], Callable[[Obj, float], list]] | None:
    """(columns, row) of a custom resource with printer columns; `age` prints a date."""
    declared = PRINTER_COLUMNS.get(key)
    if declared is None:
        return None
    columns: list[Column] = [("Name", "string", 0, "name")] + [
        (name, type_, 0, "") for name, type_, _path in declared]

    def row(o: Obj, now: float) -> list:
        cells: list[Any] = [o["metadata"]["name"]]
        for _name, type_, path in declared:
            values = [v for v in evaluate(path, o) if v is not None]
            if not values:
                cells.append(None)
            elif len(values) > 1:
                cells.append(",".join(_text(v) for v in values))
            elif type_ == "date":
                cells.append(age(values[0], now))
            else:
                cells.append(_text(values[0]))
        return cells
    return columns, row
