"""Reading YAML and JSON that strangers paste, without letting it hurt the server.

PyYAML's safe loader builds only plain types, but anchors and aliases can still make a
small text stand for an enormous tree ("billion laughs"), and deep nesting can exhaust
the stack. This loader refuses more than a few aliases, trees that would expand past a
node budget, nesting past a depth budget and duplicate keys, and reads timestamps as the
strings Kubernetes keeps them as. JSON is parsed by the json module with the same checks.
"""

from __future__ import annotations

import json
import math
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from odh.training.i18n import _

MAX_ALIASES = 20
MAX_NODES = 20_000
MAX_DEPTH = 64
_MERGE_TAG = "tag:yaml.org,2002:merge"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class UnsafeYAMLError(ValueError):
    """Text that is YAML or JSON, but not one to read: the message says what to do."""


def _budget_error(kind: str) -> UnsafeYAMLError:
    values = {"max": {"aliases": MAX_ALIASES, "nodes": MAX_NODES, "depth": MAX_DEPTH}[kind]}
    if kind == "aliases":
        return UnsafeYAMLError(_(
            "The YAML uses more than %(max)d aliases (*name): write the values out, or paste "
            "the manifest as kubectl prints it (kubectl get mpijob NAME -o yaml).") % values)
    if kind == "nodes":
        return UnsafeYAMLError(_(
            "The YAML's aliases expand to more than %(max)d values, far more than any MPIJob "
            "has: paste the manifest as kubectl prints it (kubectl get mpijob NAME -o yaml).")
            % values)
    return UnsafeYAMLError(_(
        "The manifest is nested more than %(max)d levels deep, far more than any MPIJob is: "
        "paste the manifest as kubectl prints it (kubectl get mpijob NAME -o yaml).") % values)


def _duplicate(key: str, line: int | None = None) -> UnsafeYAMLError:
    values = {"key": key[:60], "line": line}
    if line is None:
        return UnsafeYAMLError(_('The key "%(key)s" appears twice: keep one.') % values)
    return UnsafeYAMLError(_('The key "%(key)s" appears twice (line %(line)d): keep one.')
                           % values)


class _Loader(yaml.SafeLoader):
    """SafeLoader with budgets (pure Python: the C loader cannot be hooked)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0

    def compose_node(self, parent: Node | None, index: object) -> Node | None:
        if self.check_event(AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise _budget_error("aliases")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _budget_error("depth")
            return Composer.compose_node(self, parent, index)
        finally:
            self._depth -= 1

    def compose_document(self) -> Node | None:
        node = super().compose_document()
        if node is not None:
            _expanded_size(node, {})
        return node

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict:
        seen: set[str] = set()
        for key_node, _value in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag != _MERGE_TAG:
                if key_node.value in seen:
                    raise _duplicate(key_node.value, key_node.start_mark.line + 1)
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


# Kubernetes reads YAML through JSON, where a timestamp is just a string.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _expanded_size(node: Node, sizes: dict[int, int]) -> int:
    """How many nodes the tree has once every alias is expanded (memoised, so linear)."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    size = 1
    if isinstance(node, SequenceNode):
        size += sum(_expanded_size(child, sizes) for child in node.value)
    elif isinstance(node, MappingNode):
        size += sum(_expanded_size(k, sizes) + _expanded_size(v, sizes) for k, v in node.value)
    if size > MAX_NODES:
        raise _budget_error("nodes")
    sizes[id(node)] = size
    return size


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict:
    result: dict = {}
    for key, value in pairs:
        if key in result:
            raise _duplicate(key)
        result[key] = value
    return result


def _json_depth(value: Any, depth: int = 1) -> None:
    if depth > MAX_DEPTH:
        raise _budget_error("depth")
    children = value.values() if isinstance(value, dict) else value if isinstance(
        value, list) else ()
    for child in children:
        _json_depth(child, depth + 1)


def load_json(text: str) -> Any:
    """json.loads with duplicate keys and deep nesting refused."""
    try:
        value = json.loads(text, object_pairs_hook=_json_pairs)
    except RecursionError:
        raise _budget_error("depth") from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        if isinstance(exc, UnsafeYAMLError):
            raise
        raise _too_long_number() from None
    _json_depth(value)
    _json_like(value)
    return value


def _json_like(value: Any) -> None:
    """Refuse what JSON (and so the API server) has no place for: sets, bytes, NaN..."""
    if isinstance(value, dict):
        for key, child in value.items():
            _json_like(key)
            _json_like(child)
    elif isinstance(value, list):
        for child in value:
            _json_like(child)
    elif isinstance(value, float) and not math.isfinite(value):
        raise UnsafeYAMLError(_("The file holds .nan or .inf, which a manifest cannot: write a "
                                "number instead."))
    elif value is not None and not isinstance(value, str | int | float | bool):
        raise UnsafeYAMLError(_("The YAML uses a type a manifest cannot hold (such as !!binary "
                                "or !!set): write plain text, numbers, lists and mappings."))


def _too_long_number() -> UnsafeYAMLError:
    return UnsafeYAMLError(_("The file holds a number with thousands of digits, far more than "
                             "any setting takes: shorten it."))


def load_yaml_documents(text: str) -> list[Any]:
    """Every non-empty document of a YAML stream, read within the budgets."""
    loader = _Loader(text)
    documents = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None and not (isinstance(node, ScalarNode) and node.value == ""
                                         and node.tag == "tag:yaml.org,2002:null"):
                document = loader.construct_document(node)
                _json_like(document)
                documents.append(document)
    except RecursionError:
        raise _budget_error("depth") from None
    except ValueError as exc:
        # int() refuses numbers of more than 4300 digits (CPython's guard against slow parsing)
        if isinstance(exc, UnsafeYAMLError):
            raise
        raise _too_long_number() from None
    finally:
        loader.dispose()
    return documents
