"""The three patch formats kubectl and the Python client send.

- JSON merge patch (RFC 7386), `application/merge-patch+json`: custom resources.
- JSON patch (RFC 6902), `application/json-patch+json`.
- Strategic merge patch, `application/strategic-merge-patch+json`: built-in kinds; lists
  with a merge key (containers by name, ...) merge element-wise and the `$patch`,
  `$retainKeys`, `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`
  directives kubectl writes are honoured. Custom resources refuse it, as a real server does.
"""

from __future__ import annotations

import copy
from typing import Any

from simcluster import errors

# Merge keys of the lists that strategic merge patch merges element-wise.
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "conditions": "type",
    "ownerReferences": "uid",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "finalizers": "",  # primitive list merged as a set
}


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# -- JSON patch --------------------------------------------------------------------------------
def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _walk(doc: Any, pointer: str) -> tuple[Any, str]:
    if not isinstance(pointer, str) or not pointer.startswith("/"):
        raise _path_missing(str(pointer))
    tokens = [_unescape(t) for t in pointer.split("/")[1:]]
    cur = doc
    for t in tokens[:-1]:
        if isinstance(cur, list):
            try:
                cur = cur[int(t)]
            except (ValueError, IndexError):
                raise _path_missing(pointer) from None
        elif isinstance(cur, dict) and t in cur:
            cur = cur[t]
        else:
            raise _path_missing(pointer)
    return cur, tokens[-1]


def rejected(server_message: str) -> errors.ApiError:
    """How the API server reports a patch that does not apply (a generic 422)."""
    return errors.ApiError(422, "Invalid",
                           "the server rejected our request due to an error in our request",
                           {"causes": [{"reason": "UnexpectedServerResponse",
                                        "message": server_message}]})


def _path_missing(pointer: str) -> errors.ApiError:
    return rejected(f'doc is missing path: "{pointer}": missing value')


def _get(doc: Any, pointer: str) -> Any:
    if pointer == "":
        return doc
    parent, last = _walk(doc, pointer)
    try:
        if isinstance(parent, list):
            return parent[int(last)]
        return parent[last]
    except (KeyError, ValueError, IndexError, TypeError):
        raise _path_missing(pointer) from None


def _add(doc: Any, pointer: str, value: Any) -> Any:
    if pointer == "":
        return value
    parent, last = _walk(doc, pointer)
    if isinstance(parent, list):
        if last == "-":
            parent.append(value)
        else:
            try:
                idx = int(last)
            except ValueError:
                raise _path_missing(pointer) from None
            if idx > len(parent):
                raise _path_missing(pointer)
            parent.insert(idx, value)
    elif isinstance(parent, dict):
        parent[last] = value
    else:
        raise _path_missing(pointer)
    return doc


def _remove(doc: Any, pointer: str) -> Any:
    parent, last = _walk(doc, pointer)
    try:
        if isinstance(parent, list):
            del parent[int(last)]
        else:
            del parent[last]
    except (KeyError, ValueError, IndexError, TypeError):
        raise rejected(f"Unable to remove nonexistent key: {last}: missing value") from None
    return doc


def _from(op: dict) -> str:
    source = op.get("from")
    if not isinstance(source, str):
        raise rejected(f"{op['op']} operation does not apply: doc is missing from path: "
                       f"\"{source or ''}\": missing value")
    return source


def json_patch(doc: Any, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise errors.bad_request("json: cannot unmarshal object into Go value of type "
                                 "jsonpatch.Patch")
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict):
            raise errors.bad_request("json: cannot unmarshal into Go value of type "
                                     "jsonpatch.Operation")
        kind, path = op.get("op", ""), op.get("path")
        if kind in ("add", "remove", "replace", "move", "copy", "test") and \
                not isinstance(path, str):
            raise rejected(f"{kind} operation does not apply: doc is missing path: "
                           "\"\": missing value" if path is None else
                           f"operation {kind} has a path that is not a string")
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            doc = _remove(doc, path)
        elif kind == "replace":
            _get(doc, path)
            doc = _remove(doc, path) if path else doc
            doc = _add(doc, path, copy.deepcopy(op.get("value")))
        elif kind == "move":
            value = _get(doc, _from(op))
            doc = _remove(doc, _from(op))
            doc = _add(doc, path, value)
        elif kind == "copy":
            doc = _add(doc, path, copy.deepcopy(_get(doc, _from(op))))
        elif kind == "test":
            if _get(doc, path) != op.get("value"):
                raise rejected(f"testing value {path} failed: test failed")
        else:
            raise rejected(f"Unexpected kind: {kind}")
    return doc


# -- strategic merge patch ------------------------------------------------------------------
def strategic_merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key in ("$retainKeys", "$patch"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            name = key.split("/", 1)[1]
            if isinstance(result.get(name), list):
                result[name] = [x for x in result[name] if x not in value]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list) and key in MERGE_KEYS:
            result[key] = _merge_list(result.get(key), value, _merge_key(key, value))
        elif isinstance(value, dict):
            merged = strategic_merge_patch(result.get(key), value)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        else:
            result[key] = copy.deepcopy(value)
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _merge_key(field: str, items: list) -> str:
    """A Service's ports merge on `port`, a container's on `containerPort`."""
    if field == "ports" and any(isinstance(i, dict) and "port" in i and "containerPort" not in i
                                for i in items):
        return "port"
    return MERGE_KEYS[field]


def _merge_list(current: Any, patch: list, merge_key: str) -> list:
    current = copy.deepcopy(current) if isinstance(current, list) else []
    if not merge_key:  # set of primitives
        for v in patch:
            if v not in current:
                current.append(v)
        return current
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [p for p in patch if not (isinstance(p, dict) and "$patch" in p)]
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            current.append(copy.deepcopy(item))
            continue
        idx = next((i for i, c in enumerate(current)
                    if isinstance(c, dict) and c.get(merge_key) == item[merge_key]), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                current.pop(idx)
            continue
        if idx is None:
            current.append(strategic_merge_patch({}, item))
        else:
            current[idx] = strategic_merge_patch(current[idx], item)
    return current


def apply(content_type: str, target: dict, patch: Any, custom: bool) -> dict:
    ct = content_type.split(";")[0].strip()
    if ct == "application/merge-patch+json":
        result = merge_patch(target, patch)
    elif ct == "application/json-patch+json":
        result = json_patch(target, patch)
    elif ct == "application/strategic-merge-patch+json":
        if custom:
            raise errors.unsupported_media_type(ct)
        result = strategic_merge_patch(target, patch)
    else:
        raise errors.unsupported_media_type(ct)
    if not isinstance(result, dict):
        raise errors.bad_request("the patch result is not an object")
    return result
