"""A job as a manifest to keep or re-apply: what the cluster added is left out."""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml

Obj = dict[str, Any]

SERVER_METADATA = ("uid", "resourceVersion", "generation", "creationTimestamp",
                   "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields",
                   "selfLink", "ownerReferences")
SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


FIRST_KEYS = ("apiVersion", "kind", "metadata", "spec", "status")


def conventional_order(obj: Obj) -> Obj:
    """apiVersion, kind, metadata, spec, status first, as kubectl shows objects."""
    first = {k: obj[k] for k in FIRST_KEYS if k in obj}
    return first | {k: v for k, v in obj.items() if k not in first}


def exportable(obj: Obj) -> Obj:
    """The object without status and server-set metadata (`kubectl apply`-able)."""
    out = conventional_order(copy.deepcopy(obj))
    out.pop("status", None)
    meta = out.get("metadata") or {}
    for key in SERVER_METADATA:
        meta.pop(key, None)
    annotations = meta.get("annotations") or {}
    for key in SERVER_ANNOTATIONS:
        annotations.pop(key, None)
    if "annotations" in meta and not annotations:
        meta.pop("annotations")
    return out


def without_managed_fields(obj: Obj) -> Obj:
    """The live object as shown on the Configuration tab (managedFields are noise)."""
    out = conventional_order(copy.deepcopy(obj))
    (out.get("metadata") or {}).pop("managedFields", None)
    return out


def to_yaml(obj: Obj) -> str:
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, allow_unicode=True)


def to_json(obj: Obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"
