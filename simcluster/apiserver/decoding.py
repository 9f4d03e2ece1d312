"""Request bodies decoded as the API server decodes them, with its error wording.

A body that is not JSON (or YAML) is `the object provided is unrecognized (must be of type
ConfigMap): couldn't get version/kind; json parse error: ...`; a body of another kind or
version is `Secret in version "v1" cannot be handled as a ConfigMap: ...` (the API server's
transformDecodeError); both are 400 BadRequest.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from simcluster import errors
from simcluster.placement.resources import Registry, ResourceType

Obj = dict[str, Any]

_GO_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "bool"}
_TYPE_META = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
              'Kind string "json:\\"kind,omitempty\\"" }')


async def read_body(content: Any, limit: int, content_length: int | None = None) -> bytes:
    """All of a request's body, up to `limit` bytes (413 beyond). A stream's read(n)
    returns what has arrived, which for a large body is only its first part."""
    if content_length and content_length > limit:
        raise errors.too_large()
    chunks: list[bytes] = []
    size = 0
    while chunk := await content.read(limit + 1 - size):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise errors.too_large()
    return b"".join(chunks)


def summarize(data: bytes, max_length: int = 30) -> str:
    """How the API server quotes a body it could not read."""
    if not data:
        return "<empty>"
    if data[:1] == b"{":
        text = data.decode("utf-8", errors="replace")
        return text[:max_length] + " ..." if len(data) > max_length else text
    return data[:max_length].hex() + (" ..." if len(data) > max_length else "")


def _unrecognized(kind: str, problem: str, data: bytes) -> errors.ApiError:
    if not kind:
        return errors.bad_request(f"error decoding request body: {problem}")
    return errors.bad_request(f"the object provided is unrecognized (must be of type {kind}): "
                              f"couldn't get version/kind; json parse error: {problem} "
                              f"({summarize(data)})")


def decode(data: bytes, content_type: str, kind: str = "") -> Any:
    """Parse a JSON or YAML body; `kind` names the expected type in error messages."""
    if "yaml" in content_type:
        try:
            docs = [d for d in yaml.safe_load_all(data) if d is not None]
        except yaml.YAMLError as e:
            problem = str(e).replace("\n", " ")
            raise _unrecognized(kind, f"error converting YAML to JSON: yaml: {problem}",
                                data) from None
        if len(docs) != 1:
            raise _unrecognized(kind, "a YAML body holds exactly one document", data)
        value = docs[0]
    else:
        try:
            value = json.loads(data)
        except UnicodeDecodeError:
            raise _unrecognized(kind, "invalid character looking for beginning of value",
                                data) from None
        except ValueError as e:
            raise _unrecognized(kind, str(e), data) from None
    if kind and not isinstance(value, dict):
        go_type = _GO_TYPES.get(type(value), "null")
        raise _unrecognized(kind, f"json: cannot unmarshal {go_type} into Go value of type "
                            f"{_TYPE_META}", data)
    return value


def check_type(rt: ResourceType, registry: Registry, body: Obj) -> None:
    """The body's apiVersion/kind, when given, must be the endpoint's type."""
    api_version = body.get("apiVersion") or rt.api_version
    kind = body.get("kind") or rt.kind
    if not isinstance(api_version, str) or not isinstance(kind, str):
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type {rt.kind}): couldn't get "
            "version/kind; json parse error: json: cannot unmarshal into Go struct field "
            "TypeMeta of type string")
    if (api_version, kind) == (rt.api_version, rt.kind):
        return
    version = api_version.rsplit("/", 1)[-1]
    other = registry.by_kind(api_version, kind)
    if other is None:
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {rt.kind}: no kind '
            f'"{kind}" is registered for version "{api_version}" in scheme '
            '"pkg/runtime/scheme.go:100"')
    if kind == rt.kind:
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match "
                                 f"the expected API version ({rt.api_version})")
    group = rt.group or "core"
    raise errors.bad_request(f'{kind} in version "{version}" cannot be handled as a {rt.kind}: '
                             f"converting ({version}.{kind}) to ({group}.{rt.kind}): unknown "
                             "conversion")
