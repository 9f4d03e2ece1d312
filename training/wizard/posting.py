"""A wizard step's posted form written into its draft: the step's fields over the draft's
text, its rows (environment variables, volumes, Secrets and ConfigMaps as variables or as
files, new volume claims) rebuilt, a row added or removed."""

from __future__ import annotations

import copy

from odh.training.manifests.claims import DEFAULT_ACCESS_MODE
from training.wizard.envsources import value_from_for
from training.wizard.formfields import (
    CHECKBOX_FIELDS,
    MAX_ROWS,
    ROW_FIELDS,
    ROW_PREFIX,
    SIMPLE_KEY,
    SIMPLE_RESOURCE_FIELDS,
    STEP_FIELDS,
    form_text,
)


def merge_post(data: dict, post, step: str) -> dict:
    """The draft's data with one step's posted fields written over it.

    `post` is a QueryDict (or dict) of what the step's form sent. Checkboxes missing from a
    posted step form are off; row lists are rebuilt from their `env-<i>-name` style fields.
    """
    merged = copy.deepcopy(data)
    names = STEP_FIELDS.get(step, ())
    if step == "configuration" and data.get(SIMPLE_KEY):  # the simple mode's one step
        names = (*names, *SIMPLE_RESOURCE_FIELDS)
    for name in names:
        if name in CHECKBOX_FIELDS:
            merged[name] = "on" if post.get(name) else ""
        elif name in post:
            merged[name] = form_text(post.get(name))
    if step == "resources":
        for rows in ROW_FIELDS:
            merged[rows] = _merge_rows(post, rows, merged.get(rows))
    return merged


def _merge_rows(post, rows: str, before: object) -> list[dict]:
    prefix = ROW_PREFIX[rows]
    old = before if isinstance(before, list) else []
    result = []
    for i in range(MAX_ROWS):
        keys = [f"{prefix}-{i}-{f}" for f in (*ROW_FIELDS[rows], "source")]
        if not any(k in post for k in keys):
            continue
        row = {f: form_text(post.get(f"{prefix}-{i}-{f}", "")).strip() if f != "value"
               else form_text(post.get(f"{prefix}-{i}-{f}", "")) for f in ROW_FIELDS[rows]}
        previous = old[i] if i < len(old) and isinstance(old[i], dict) else {}
        if rows == "env":
            source = post.get(f"{prefix}-{i}-source")
            if source is not None:  # the select: the value typed, or a Secret's/ConfigMap's
                row["value_from"] = value_from_for(form_text(source), previous.get("value_from"))
            else:
                row["value_from"] = previous.get("value_from") \
                    if post.get(f"{prefix}-{i}-from") else None
            if row["value_from"]:
                row["value"] = ""
            if not row["name"] and not row["value"] and not row["value_from"]:
                continue
        elif rows != "volumes":  # a Secret or ConfigMap: its volume keeps its name
            if rows == "source_volumes":
                row["volume"] = form_text(previous.get("volume")) \
                    if previous.get("source") == row["source"] else ""
            if not any(row.get(f) for f in ROW_FIELDS[rows]):
                continue
        else:
            row["read_only"] = bool(post.get(f"{prefix}-{i}-read_only"))
            row["name"] = form_text(previous.get("name")) \
                if previous.get("claim_name") == row["claim_name"] else ""
            if not row["claim_name"] and not row["mount_path"]:
                continue
        result.append(row)
    return result


def add_row(data: dict, rows: str) -> dict:
    merged = copy.deepcopy(data)
    current = merged.get(rows) if isinstance(merged.get(rows), list) else []
    if len(current) < MAX_ROWS:
        blank = {"name": "", "value": "", "value_from": None} if rows == "env" else \
            {"claim_name": "", "mount_path": "", "read_only": False, "sub_path": "", "name": ""} \
            if rows == "volumes" else {f: "" for f in ROW_FIELDS[rows]}
        if rows == "claims":  # an MPIJob's Workers run on several nodes
            blank["access_mode"] = DEFAULT_ACCESS_MODE
        current.append(blank)
    merged[rows] = current
    return merged


def remove_row(data: dict, rows: str, index: int) -> dict:
    merged = copy.deepcopy(data)
    current = merged.get(rows) if isinstance(merged.get(rows), list) else []
    if 0 <= index < len(current):
        del current[index]
    merged[rows] = current
    return merged

