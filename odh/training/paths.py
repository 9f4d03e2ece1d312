"""Reading and editing nested manifest dicts without tripping over missing or odd values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def is_empty(value: object) -> bool:
    # Zero and False are real settings (backoffLimit: 0); only absence counts as empty.
    return value is None or value == "" or value == [] or value == {}


def as_dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list:
    return value if isinstance(value, list) else []


def get_path(root: object, path: Sequence[str | int], default: Any = None) -> Any:
    node = root
    for key in path:
        if isinstance(key, int):
            if not isinstance(node, list) or not -len(node) <= key < len(node):
                return default
        elif not isinstance(node, dict) or key not in node:
            return default
        node = node[key]
    return node


def put_path(root: dict, path: Sequence[str], value: object) -> None:
    """Set root[path] = value, creating parents; an empty value removes the key instead,
    and with it any parent the removal leaves empty (up to, not including, root)."""
    if is_empty(value):
        remove_path(root, path)
        return
    node = root
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[path[-1]] = value


def remove_path(root: dict, path: Sequence[str]) -> None:
    chain = [root]
    for key in path[:-1]:
        child = chain[-1].get(key)
        if not isinstance(child, dict):
            return
        chain.append(child)
    chain[-1].pop(path[-1], None)
    for depth in range(len(chain) - 1, 0, -1):
        if chain[depth]:
            break
        del chain[depth - 1][path[depth - 1]]
