"""Structural schemas of the custom resources, enforced at admission like the API server.

What the API server does with a custom resource, in its order:
1. prunes fields the schema does not declare (`fieldValidation=Strict` refuses them with
   400 instead; `Warn`, kubectl's default before 1.27, answers with a `Warning` header);
2. drops `null` values the schema does not allow (unless a default replaces them);
3. applies `default`s;
4. validates types, required keys, enums and patterns (kube-openapi's messages, with the
   full dotted path: `spec.slotsPerWorker in body must be of type integer: "string"`);
5. checks that `x-kubernetes-list-type: map` lists have unique keys.

The schemas themselves are in schema_types.py and schema_trainer.py.
"""

from __future__ import annotations

import contextvars
import copy
import json
import re
from typing import Any

from simcluster import errors, quantity
from simcluster.apiserver import labelparse
from simcluster.apiserver.schemas.builtin import BUILTIN_SCHEMAS, CUSTOM_RESOURCE, QUANTITY_KEY
from simcluster.apiserver.schemas.kubeflow import INT_OR_STRING, PRESERVE, SCHEMAS, UNMODELLED
from simcluster.apiserver.schemas.trainer import TRAINER_SCHEMAS
from simcluster.placement.resources import ResourceType

Obj = dict[str, Any]

# Warnings for the response of the request being handled (`Warning: 299 - "..."`).
WARNINGS: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "simcluster_warnings", default=None)

# every modelled custom resource by "<group>/<plural>": Kubeflow's training operators
# (schema_types.py), the Trainer v2 and JobSet (schema_trainer.py)
CRD_SCHEMAS: dict[str, Obj] = {**SCHEMAS, **TRAINER_SCHEMAS}


def schema_for(rt: ResourceType) -> Obj | None:
    if not rt.custom:
        return None
    return CRD_SCHEMAS.get(f"{rt.group}/{rt.plural}", UNMODELLED)


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _sub_schema(schema: Obj | None, key: str) -> Obj | None:
    """The schema of `key` in an object, or None when the key is not declared."""
    if schema is None:
        return None
    props = schema.get("properties") or {}
    if key in props:
        return props[key]
    addl = schema.get("additionalProperties")
    if isinstance(addl, dict):
        return addl
    return None


# -- 1. pruning ---------------------------------------------------------------------------------
def prune(value: Any, schema: Obj | None, path: str, pruned: list[str]) -> Any:
    """Remove undeclared fields, recording their paths."""
    if schema is None:
        return value
    if isinstance(value, dict):
        preserve = bool(schema.get(PRESERVE))
        out: Obj = {}
        for key, sub in value.items():
            sub_schema = _sub_schema(schema, key)
            if sub_schema is None:
                if preserve:
                    out[key] = sub
                else:
                    pruned.append(_child(path, key))
                continue
            out[key] = prune(sub, sub_schema, _child(path, key), pruned)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [prune(v, schema["items"], f"{path}[{i}]", pruned) for i, v in enumerate(value)]
    return value


# -- 2./3. nulls and defaults -----------------------------------------------------------------
def prune_nulls(value: Any, schema: Obj | None) -> None:
    if isinstance(value, dict):
        for key in list(value):
            sub = _sub_schema(schema, key)
            if value[key] is None and sub is not None and not sub.get("nullable") \
                    and "default" not in sub:
                del value[key]
            else:
                prune_nulls(value[key], sub)
    elif isinstance(value, list):
        items = schema.get("items") if schema else None
        for v in value:
            prune_nulls(v, items if isinstance(items, dict) else None)


def apply_defaults(value: Any, schema: Obj | None) -> None:
    if schema is None:
        return
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if "default" in sub and (key not in value or
                                     (value[key] is None and not sub.get("nullable"))):
                value[key] = copy.deepcopy(sub["default"])
        for key, sub_value in value.items():
            apply_defaults(sub_value, _sub_schema(schema, key))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for v in value:
            apply_defaults(v, schema["items"])


# -- 4. validation ------------------------------------------------------------------------------
def json_type(value: Any) -> str:
    """The JSON type name kube-openapi reports for a decoded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _types(schema: Obj) -> list[str]:
    if schema.get(INT_OR_STRING):
        return ["integer", "string"]
    t = schema.get("type")
    return [t] if t else []


def _type_ok(value: Any, types: list[str]) -> bool:
    got = json_type(value)
    if got in types:
        return True
    if got == "number" and "integer" in types and float(value).is_integer():
        return True
    return got == "integer" and "number" in types


def go_value(value: Any) -> str:
    """A bad value as the API server's field errors print it."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(k)}:{go_value(v)}" for k, v in sorted(value.items()))
        return "map[string]interface {}{" + inner + "}"
    return "[]interface {}{" + ", ".join(go_value(v) for v in value) + "}"


def _go_regex(pattern: str) -> str:
    """RE2's `$` matches only at the end of the text; Python's also before a final newline."""
    return pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") \
        else pattern


def _type_cause(path: str, want: str, got: str) -> Obj:
    return errors.field_cause(
        path, f'Invalid value: "{got}": {path} in body must be of type {want}: "{got}"',
        "FieldValueTypeInvalid")


TypeErrors = list[tuple[str, Obj, Any]]  # (path, expected schema, value)


def validate(value: Any, schema: Obj, path: str, causes: list[Obj],
             type_errors: TypeErrors | None = None) -> None:
    """kube-openapi's schema validation, appending field causes in the API server's words.

    With `type_errors`, values of the wrong JSON type are collected there instead, as a
    decoder into Go types would refuse them."""
    types = _types(schema)
    if value is None:
        if types and not schema.get("nullable"):
            if type_errors is not None:
                type_errors.append((path, schema, value))
            else:
                causes.append(_type_cause(path, ",".join(types), "null"))
        return
    if schema.get(QUANTITY_KEY):
        if isinstance(value, str):
            try:
                quantity.parse(value)
            except quantity.QuantityError:
                (type_errors if type_errors is not None else []).append((path, schema, value))
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            (type_errors if type_errors is not None else []).append((path, schema, value))
        return
    if types and not _type_ok(value, types):
        if type_errors is not None:
            type_errors.append((path, schema, value))
            return
        causes.append(_type_cause(path, ",".join(types), json_type(value)))
    if "enum" in schema and value not in schema["enum"]:
        supported = ", ".join(go_value(v) for v in schema["enum"])
        causes.append(errors.field_cause(
            path, f"Unsupported value: {go_value(value)}: supported values: {supported}",
            "FieldValueNotSupported"))
    if isinstance(value, str) and "pattern" in schema and \
            not re.search(_go_regex(schema["pattern"]), value):
        causes.append(errors.field_cause(
            path, f"Invalid value: {go_value(value)}: {path} in body should match "
            f"'{schema['pattern']}'"))
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        addl = schema.get("additionalProperties")
        for key, sub in value.items():
            if key in props:
                validate(sub, props[key], _child(path, key), causes, type_errors)
            elif isinstance(addl, dict):
                validate(sub, addl, _child(path, key), causes, type_errors)
        for key in schema.get("required") or []:
            if key not in value:
                causes.append(errors.field_cause(_child(path, key), "Required value",
                                                 "FieldValueRequired"))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            validate(v, schema["items"], f"{path}[{i}]", causes, type_errors)


# -- 5. list-type map keys ---------------------------------------------------------------------
def unique_list_keys(value: Any, schema: Obj | None, path: str, causes: list[Obj]) -> None:
    """Duplicate keys in `x-kubernetes-list-type: map` lists (paths as field.Path prints)."""
    if schema is None:
        return
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        addl = schema.get("additionalProperties")
        for key, sub in value.items():
            if key in props:
                unique_list_keys(sub, props[key], _child(path, key), causes)
            elif isinstance(addl, dict):
                unique_list_keys(sub, addl, f"{path}[{key}]", causes)
    elif isinstance(value, list):
        keys = schema.get("x-kubernetes-list-map-keys")
        if keys and all(isinstance(v, dict) or v is None for v in value):
            seen: dict[str, int] = {}
            for i, item in enumerate(value):
                key = {k: item[k] for k in keys if k in item} if isinstance(item, dict) else {}
                marker = json.dumps(key, sort_keys=True)
                seen[marker] = seen.get(marker, 0) + 1
                if seen[marker] == 2:
                    causes.append(errors.field_cause(
                        f"{path}[{i}]", f"Duplicate value: {go_value(key)}",
                        "FieldValueDuplicate"))
        items = schema.get("items")
        if isinstance(items, dict):
            for i, v in enumerate(value):
                unique_list_keys(v, items, f"{path}[{i}]", causes)


# -- decoding (all kinds) --------------------------------------------------------------------
QUANTITY_MESSAGE = ("quantities must match the regular expression "
                    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def go_type(schema: Obj) -> str:
    """The Go type a schema stands for, as encoding/json names it in errors."""
    if schema.get(QUANTITY_KEY):
        return "resource.Quantity"
    if schema.get(INT_OR_STRING):
        return "intstr.IntOrString"
    t = schema.get("type")
    if t == "integer":
        return {"int32": "int32", "int64": "int64"}.get(schema.get("format", ""), "int")
    if t == "array":
        return "[]" + go_type(schema.get("items") or {})
    if t == "object":
        addl = schema.get("additionalProperties")
        if isinstance(addl, dict):
            return "map[string]" + go_type(addl)
        return "struct"
    return {"boolean": "bool", "number": "float64", "string": "string"}.get(t or "",
                                                                          "interface {}")


def _decode_error(rt: ResourceType, path: str, schema: Obj, value: Any) -> errors.ApiError:
    prefix = f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
    if schema.get(QUANTITY_KEY) and isinstance(value, str):
        return errors.bad_request(prefix + QUANTITY_MESSAGE)
    got = {"integer": "number", "boolean": "bool"}.get(json_type(value), json_type(value))
    if isinstance(value, float) and not value.is_integer():
        got = f"number {value:g}"
    return errors.bad_request(prefix + f"json: cannot unmarshal {got} into Go struct field "
                              f"{rt.kind}.{path} of type {go_type(schema)}")


def _unknown_fields(rt: ResourceType, unknown: list[str], field_validation: str) -> None:
    if unknown and field_validation == "Strict":
        raise errors.ApiError(
            400, "BadRequest", f'{rt.kind} in version "{rt.version}" cannot be handled as a '
            f"{rt.kind}: strict decoding error: "
            + ", ".join(f'unknown field "{u}"' for u in unknown))
    if unknown and field_validation == "Warn":
        warnings = WARNINGS.get()
        if warnings is not None:
            warnings.extend(f'unknown field "{u}"' for u in unknown)


def decode(rt: ResourceType, obj: Obj, field_validation: str = "Warn") -> Obj:
    """Type-check and prune an object as decoding it into Go types would: 400 for a value
    of the wrong type, dropped (or, Strict, refused) unknown fields, nulls as zero values."""
    if rt.custom:
        schema: Obj | None = CUSTOM_RESOURCE
    else:
        schema = BUILTIN_SCHEMAS.get(f"{rt.group}/{rt.plural}")
    if schema is None:
        return copy.deepcopy(obj)
    unknown: list[str] = []
    body = prune(copy.deepcopy(obj), schema, "", unknown)
    _unknown_fields(rt, unknown, field_validation)
    prune_nulls(body, schema)
    causes: list[Obj] = []
    type_errors: TypeErrors = []
    validate(body, schema, "", causes, type_errors)
    if type_errors:
        raise _decode_error(rt, *type_errors[0])
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    causes += metadata_causes(meta)
    if causes:
        raise errors.invalid(rt, rt.kind, meta.get("name") or meta.get("generateName") or "",
                             causes)
    return body


def metadata_causes(meta: Obj) -> list[Obj]:
    """ObjectMeta validation of labels and annotation keys (ValidateObjectMeta)."""
    causes: list[Obj] = []
    for key, value in (meta.get("labels") or {}).items():
        for problem in labelparse.qualified_name_errors(key):
            causes.append(errors.field_cause(
                "metadata.labels", f"Invalid value: {go_value(key)}: {problem}"))
        for problem in labelparse.label_value_errors(value):
            causes.append(errors.field_cause(
                "metadata.labels", f"Invalid value: {go_value(value)}: {problem}"))
    for key in meta.get("annotations") or {}:
        for problem in labelparse.qualified_name_errors(key.lower()):
            causes.append(errors.field_cause(
                "metadata.annotations", f"Invalid value: {go_value(key)}: {problem}"))
    return causes


# -- admission (custom resources) ------------------------------------------------------------
def admit(rt: ResourceType, obj: Obj, field_validation: str = "Warn") -> Obj:
    """Prune, default and validate a custom resource; raise 400/422 as the API server does."""
    schema = schema_for(rt)
    if schema is None:
        return obj
    metadata = obj.get("metadata")
    body = {k: copy.deepcopy(v) for k, v in obj.items() if k != "metadata"}
    unknown: list[str] = []
    body = prune(body, schema, "", unknown)
    _unknown_fields(rt, unknown, field_validation)
    prune_nulls(body, schema)
    apply_defaults(body, schema)
    causes: list[Obj] = []
    validate(body, schema, "", causes)
    unique_list_keys(body, schema, "", causes)
    if causes:
        meta = metadata if isinstance(metadata, dict) else {}
        name = meta.get("name") or meta.get("generateName") or ""
        raise errors.invalid(rt, rt.kind, name, causes)
    body["metadata"] = metadata
    return body
