"""Objects from the API kept in memory for long: smaller, the same to read.

A watch cache holds tens of thousands of pods and Events (50,000 pods and 280,000 Events
with 10,000 jobs), each decoded from its own JSON text: every key ("metadata", "name",
"resourceVersion") and every repeated value (a namespace, a node's name, a reason, a
timestamp shared by a burst of Events, a pod's uid in its Events' `involvedObject`) is a
string object of its own, and strings are most of what such an object holds.
`compact()` gives back the same object with those strings shared (`sys.intern`: an
interned string is freed with its last user, so nothing accumulates as objects come and
go) and, where asked, without `metadata.managedFields` (server-side apply's bookkeeping,
often a third of an object, read by nothing that keeps pods or Events; client-go's
informers drop it the same way).

Long strings (a message, an annotation holding a manifest) are kept as they are: they
rarely repeat, and interning costs a table entry each.
"""

from __future__ import annotations

import sys
from typing import Any

Obj = dict[str, Any]
INTERN_MAX_LENGTH = 128


def compact(obj: Obj, keep_managed_fields: bool = False) -> Obj:
    """`obj` rebuilt with shared strings (and without managedFields unless kept)."""
    meta = obj.get("metadata")
    if not keep_managed_fields and isinstance(meta, dict) and "managedFields" in meta:
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return _compact(obj)


def _compact(value: Any) -> Any:
    if isinstance(value, str):
        return sys.intern(value) if len(value) <= INTERN_MAX_LENGTH else value
    if isinstance(value, dict):
        return {sys.intern(k) if isinstance(k, str) else k: _compact(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_compact(v) for v in value]
    return value
