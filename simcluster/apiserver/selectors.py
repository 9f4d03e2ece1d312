"""Label and field selectors, parsed as the API server parses them.

Label selectors: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, joined by
commas. Field selectors: `path=value`, `path==value`, `path!=value` on the fields each type
allows (resources.ResourceType.allowed_fields).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from simcluster import errors
from simcluster.apiserver import labelparse
from simcluster.placement.resources import ResourceType

Obj = dict[str, Any]
Predicate = Callable[[Obj], bool]


def parse_label_selector(selector: str | None) -> Predicate:
    """A predicate for a label selector; 400 with apimachinery's parse error otherwise."""
    try:
        return labelparse.matcher(selector)
    except labelparse.SelectorError as e:
        raise errors.bad_request(str(e)) from None


def field_value(obj: Obj, path: str) -> str:
    """The string form of a selectable field ("" when absent), as the server compares it."""
    if path == "source":  # events: source.component
        return str((obj.get("source") or {}).get("component", ""))
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def parse_field_selector(selector: str | None, rt: ResourceType) -> Predicate:
    if not selector or not selector.strip():
        return lambda obj: True
    reqs: list[Predicate] = []
    allowed = rt.allowed_fields()
    for part in selector.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"([^=!]+?)\s*(==|=|!=)\s*(.*)", part)
        if not m:
            raise errors.bad_request(f'invalid selector: \'{selector}\'; can\'t understand '
                                     f"'{part}'")
        path, op, value = m.group(1).strip(), m.group(2), m.group(3).strip()
        if path not in allowed:
            raise errors.bad_request(f'field label not supported: {path}')
        if op == "!=":
            reqs.append(lambda o, p=path, v=value: field_value(o, p) != v)
        else:
            reqs.append(lambda o, p=path, v=value: field_value(o, p) == v)
    return lambda obj: all(r(obj) for r in reqs)
