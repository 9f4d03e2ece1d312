"""Discovery documents (/api, /apis, group versions) and a minimal OpenAPI v3 index.

kubectl reads these to map `mpijobs` to a URL; kubectl 1.27+ reads /openapi/v3 to learn
that the server validates fields itself (`fieldValidation`), so `kubectl apply` works
without a client-side schema.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from simcluster.apiserver.schemas.structural import CRD_SCHEMAS
from simcluster.placement.resources import Registry, ResourceType

Obj = dict[str, Any]

KUBE_VERSION = {"major": "1", "minor": "31", "gitVersion": "v1.31.6",
                "gitCommit": "6b7e0ee47b6c0e7b8c30fa9f0fcd6c9c0d1a3b3e",
                "gitTreeState": "clean", "buildDate": "2026-10-01T00:00:00Z",
                "goVersion": "go1.22.12", "compiler": "gc", "platform": "linux/amd64"}


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16].upper()


class Discovery:
    def __init__(self, registry: Registry, server_address: str) -> None:
        self.registry = registry
        self.server_address = server_address

    def document(self, path: str) -> Obj | None:
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": self.server_address}]}
        if path == "/apis":
            return self._group_list()
        if path == "/api/v1":
            return self._resource_list("", "v1")
        parts = [p for p in path.split("/") if p]
        if len(parts) == 2 and parts[0] == "apis":
            g = self._group(parts[1])
            return g
        if len(parts) == 3 and parts[0] == "apis":
            if not self.registry.in_group_version(parts[1], parts[2]):
                return None
            return self._resource_list(parts[1], parts[2])
        if path == "/openapi/v3":
            return self._openapi_v3_index()
        if path == "/openapi/v2":
            return {"swagger": "2.0", "info": {"title": "Kubernetes",
                                               "version": KUBE_VERSION["gitVersion"]},
                    "paths": {}, "definitions": {}}
        if len(parts) >= 3 and parts[0] == "openapi" and parts[1] == "v3":
            return self._openapi_v3_group(parts[2:])
        return None

    def _group(self, name: str) -> Obj | None:
        versions = self.registry.group_versions().get(name)
        if not versions:
            return None
        gvs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
        return {"kind": "APIGroup", "apiVersion": "v1", "name": name, "versions": gvs,
                "preferredVersion": gvs[0]}

    def _group_list(self) -> Obj:
        groups = []
        for name in self.registry.group_versions():
            g = self._group(name)
            assert g is not None
            g.pop("kind")
            g.pop("apiVersion")
            groups.append(g)
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def _resource_list(self, group: str, version: str) -> Obj:
        resources = []
        for rt in self.registry.in_group_version(group, version):
            resources.append(_resource_entry(rt))
            for sub in rt.subresources:
                verbs = {"status": ["get", "patch", "update"], "log": ["get"],
                         "eviction": ["create"]}.get(sub, ["get"])
                kind = {"eviction": "Eviction"}.get(sub, rt.kind if sub == "status" else "Pod")
                entry = {"name": f"{rt.plural}/{sub}", "singularName": "",
                         "namespaced": rt.namespaced, "kind": kind, "verbs": verbs}
                if sub == "eviction":
                    entry["group"] = "policy"
                    entry["version"] = "v1"
                resources.append(entry)
        gv = f"{group}/{version}" if group else version
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                "resources": resources}

    # -- OpenAPI v3: enough for kubectl's field-validation support check -----------------
    def _openapi_v3_index(self) -> Obj:
        paths: dict[str, Obj] = {}
        for key in self._gv_keys():
            paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={_hash(key)}"}
        return {"paths": paths}

    def _gv_keys(self) -> list[str]:
        keys = ["api/v1"]
        for group, versions in self.registry.group_versions().items():
            keys.extend(f"apis/{group}/{v}" for v in versions)
        return keys

    def _openapi_v3_group(self, parts: list[str]) -> Obj | None:
        key = "/".join(parts)
        if key not in self._gv_keys():
            return None
        if parts[0] == "api":
            group, version = "", parts[1]
        else:
            group, version = parts[1], parts[2]
        paths: dict[str, Obj] = {}
        schemas: dict[str, Obj] = {}
        for rt in self.registry.in_group_version(group, version):
            prefix = f"/api/{version}" if not group else f"/apis/{group}/{version}"
            ns = "/namespaces/{namespace}" if rt.namespaced else ""
            gvk = {"group": group, "version": version, "kind": rt.kind}
            params = [
                {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
                {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
                {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
            ]
            op = {"x-kubernetes-group-version-kind": gvk, "parameters": params,
                  "responses": {"200": {"description": "OK"}}}
            paths[f"{prefix}{ns}/{rt.plural}"] = {"post": dict(op, operationId=f"create{rt.kind}")}
            paths[f"{prefix}{ns}/{rt.plural}/{{name}}"] = {
                "put": dict(op, operationId=f"replace{rt.kind}"),
                "patch": dict(op, operationId=f"patch{rt.kind}"),
            }
            schema_name = f"{group or 'core'}.{version}.{rt.kind}"
            crd_schema = CRD_SCHEMAS.get(f"{group}/{rt.plural}") if rt.custom else None
            if crd_schema is not None:
                # the structural schema, as a CRD publishes it (`kubectl explain mpijobs.spec`)
                schemas[schema_name] = dict(copy.deepcopy(crd_schema), **{
                    "x-kubernetes-group-version-kind": [gvk]})
                continue
            schemas[schema_name] = {
                "type": "object",
                "x-kubernetes-group-version-kind": [gvk],
                "x-kubernetes-preserve-unknown-fields": True,
            }
        return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.31.6"},
                "paths": paths, "components": {"schemas": schemas}}


# the type kube-openapi answers with (the Accept form has "@v1.0", which is no valid MIME)
OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def _proto_string(field: int, value: bytes) -> bytes:
    """One length-delimited protobuf field (lengths here stay below 128)."""
    return bytes([field << 3 | 2, len(value)]) + value


def openapi_v2_protobuf() -> bytes:
    """/openapi/v2 as the gnostic `Document` protobuf that kubectl up to 1.26 downloads
    before `apply`: swagger "2.0" and an Info, no definitions, so kubectl finds no schema
    for any kind and leaves validation to the server (as for a CRD without one)."""
    info = _proto_string(1, b"Kubernetes") + _proto_string(
        2, KUBE_VERSION["gitVersion"].encode())
    return _proto_string(1, b"2.0") + _proto_string(2, info)


def _storage_version_hash(rt: ResourceType) -> str:
    """base64(sha256("group/version/Kind")[:8]), as the API server computes it."""
    import base64

    digest = hashlib.sha256(f"{rt.group}/{rt.version}/{rt.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def _resource_entry(rt: ResourceType) -> Obj:
    entry: Obj = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": sorted(rt.verbs),
        "storageVersionHash": _storage_version_hash(rt),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    return entry
