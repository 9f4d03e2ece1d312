"""What changes a draft besides typing: a diagnosis' fix written into it (and marked, so
the wizard shows which fields it changed), and the Workers marked as chosen."""

from __future__ import annotations

import copy

from odh.training.checks.affinity import node_affinity_text
from odh.training.checks.syntax import command_text, pairs_text
from training.wizard.formfields import CONFIGURATION_FIELDS, GPU_PRODUCT_LABEL, RESOURCE_FIELDS


def apply_changes(data: dict, changes: dict) -> dict:
    """A fix's changes ({spec attribute: value}) written into the draft's text."""
    merged = copy.deepcopy(data)
    for name, value in changes.items():
        if name == "command" and isinstance(value, list):
            merged[name] = command_text([str(v) for v in value])
        elif name == "node_selector" and isinstance(value, dict):
            selector = {str(k): str(v) for k, v in value.items()}
            merged["gpu_product"] = selector.pop(GPU_PRODUCT_LABEL, "")
            merged[name] = pairs_text(selector)
        elif name == "node_affinity" and isinstance(value, list):
            merged[name] = node_affinity_text([r for r in value if hasattr(r, "operator")])
        elif name == "env" and isinstance(value, list):
            merged[name] = [{"name": str(row.get("name", "")), "value": str(row.get("value", "")),
                             "value_from": row.get("value_from")
                             if isinstance(row.get("value_from"), dict) else None}
                            for row in value if isinstance(row, dict)]
        elif name not in RESOURCE_FIELDS and name not in CONFIGURATION_FIELDS:
            continue
        elif isinstance(value, bool):
            merged[name] = "on" if value else ""
        else:
            merged[name] = "" if value is None else str(value)
    return merged


FIXED_KEY = "fixed"  # what a diagnosis' fix changed: {"label", "fields", "note"}
# The Workers and slots were chosen on the Resources step (typed, changed by a fix, or the
# step left with Next or Back): until then a value there is the default or the copy's, and
# the -np check waits.
WORKERS_CHOSEN_KEY = "_workers_chosen"
_WORKER_COUNT = ("workers", "slots_per_worker")


def with_workers_chosen(data: dict, before: dict | None = None) -> dict:
    """`data` marked as having its Workers chosen: always without `before`, else when its
    Workers or slots differ from those of `before`."""
    if before is not None and all(str(data.get(n, "")) == str(before.get(n, ""))
                                  for n in _WORKER_COUNT):
        return data
    return {**data, WORKERS_CHOSEN_KEY: True}


def apply_fix(data: dict, changes: dict, label: str, fields: list[str], note: str = "") -> dict:
    """A diagnosis' fix applied to a clone's draft, and marked: the wizard shows which
    fields it changed (or which one to correct, for a fix that only opens a field)."""
    merged = apply_changes(data, changes)
    merged[FIXED_KEY] = {"label": str(label)[:500], "note": str(note)[:500],
                         "fields": [str(f) for f in fields][:20]}
    return merged

