"""The Kubernetes REST API over aiohttp: routing, verbs, watch, discovery.

Requests are parsed the way the API server's request-info resolver parses them, so the
same path yields the same RBAC attributes a real cluster would check.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

from simcluster import errors
from simcluster.access.auth import Attributes, UserInfo
from simcluster.apiserver import decoding, patch, tables
from simcluster.apiserver.discovery import OPENAPI_V2_PROTOBUF, openapi_v2_protobuf
from simcluster.apiserver.schemas import structural as schema
from simcluster.apiserver.selectors import parse_field_selector, parse_label_selector
from simcluster.apiserver.store import Watcher
from simcluster.monitoring import requestmetrics
from simcluster.placement.resources import ResourceType

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

log = logging.getLogger("simcluster.apiserver.api")

MAX_BODY = 3 * 1024 * 1024
Obj = dict[str, Any]

# Kinds whose registry returns the deleted object rather than a Status (ReturnDeletedObject).
RETURN_DELETED_OBJECT = {"pods", "namespaces", "services", "persistentvolumeclaims",
                         "resourcequotas", "serviceaccounts", "storageclasses"}

PUBLIC_PATHS = {"/version", "/healthz", "/livez", "/readyz",
                "/.well-known/oauth-authorization-server"}


@dataclass
class RequestInfo:
    verb: str
    rt: ResourceType | None = None
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    path: str = ""
    group: str = ""
    version: str = ""
    plural: str = ""

    def attributes(self) -> Attributes:
        if self.rt is None and not self.plural:
            return Attributes(verb=self.verb, path=self.path)
        ns = self.namespace
        # A request for a namespace object is in that namespace, so RoleBindings there
        # apply to it (as the real request-info resolver does; OpenShift's does the same
        # for projects).
        if self.rt is not None and self.rt.plural in ("namespaces", "projects") and self.name:
            ns = self.name
        return Attributes(verb=self.verb, group=self.group, resource=self.plural,
                          subresource=self.subresource, namespace=ns, name=self.name)


def json_response(body: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, text=json.dumps(body, separators=(",", ":")),
                        content_type="application/json")


def error_response(err: errors.ApiError) -> web.Response:
    return json_response(err.status, err.code)


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true")


class Api:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.registry = cluster.registry
        self.store = cluster.store

    # -- entry point -------------------------------------------------------------------------------
    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        info = self._resolve(request, path)
        labels = requestmetrics.labels_of(request.method, info)
        request[requestmetrics.LABELS_KEY] = labels  # counted when the answer starts
        long_running = requestmetrics.is_long_running(info)
        if long_running:
            self.cluster.request_metrics.started(labels)
        warnings: list[str] = []
        token = schema.WARNINGS.set(warnings)
        try:
            resp = await self._handle_errors(request, path, info)
        finally:
            schema.WARNINGS.reset(token)
            if long_running:
                self.cluster.request_metrics.ended(labels)
        if warnings and not resp.prepared:
            for text in warnings:
                resp.headers.add("Warning", "299 - " + json.dumps(text))
        return resp

    async def _handle_errors(self, request: web.Request, path: str,
                             info: RequestInfo) -> web.StreamResponse:
        try:
            return await self._handle(request, path, info)
        except errors.ApiError as e:
            return error_response(e)
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception:
            log.exception("internal error on %s %s", request.method, request.path)
            return error_response(errors.ApiError(500, "InternalError",
                                                  "Internal error occurred: see simcluster log"))

    async def _handle(self, request: web.Request, path: str,
                      info: RequestInfo) -> web.StreamResponse:
        if path in PUBLIC_PATHS:
            return await self._public(request, path)
        user = self.cluster.authn.authenticate(request.headers.get("Authorization"))
        if user is None:
            raise errors.unauthorized()
        if info.rt is None and not info.plural:
            return await self._non_resource(request, user, info)
        self._authorize(user, info)
        return await self._dispatch(request, user, info)

    async def _public(self, request: web.Request, path: str) -> web.Response:
        if path == "/version":
            return json_response(self.cluster.version_info())
        if path == "/.well-known/oauth-authorization-server":
            return json_response(self.cluster.oauth.discovery_document())
        return web.Response(text="ok")

    # -- path resolution ----------------------------------------------------------------------
    def _resolve(self, request: web.Request, path: str) -> RequestInfo:
        parts = [p for p in path.split("/") if p]
        method = request.method
        if len(parts) < 3 or parts[0] not in ("api", "apis"):
            return RequestInfo(verb=_non_resource_verb(method), path=path)
        if parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        else:
            if len(parts) < 4:
                return RequestInfo(verb=_non_resource_verb(method), path=path)
            group, version, rest = parts[1], parts[2], parts[3:]
        namespace = ""
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status", "finalize"):
            namespace, rest = rest[1], rest[2:]
        # else /api/v1/namespaces[/{name}[/status|/finalize]]: the namespace object itself,
        # whose requests RBAC sees in that namespace (RequestInfo.attributes)
        plural = rest[0]
        name = rest[1] if len(rest) > 1 else ""
        sub = "/".join(rest[2:]) if len(rest) > 2 else ""
        rt = self.registry.get(group, version, plural)
        q = request.query
        if method == "GET":
            verb = "get" if name else ("watch" if _truthy(q.get("watch")) else "list")
        elif method == "POST":
            verb = "create"
        elif method == "PUT":
            verb = "update"
        elif method == "PATCH":
            verb = "patch"
        elif method == "DELETE":
            verb = "delete" if name else "deletecollection"
        else:
            verb = method.lower()
        # /api/v1/namespaces/{ns}/pods/{name}/log style subresources
        return RequestInfo(verb=verb, rt=rt, namespace=namespace, name=name, subresource=sub,
                           path=path, group=group, version=version, plural=plural)

    def _authorize(self, user: UserInfo, info: RequestInfo) -> None:
        attrs = info.attributes()
        ok, why = self.cluster.authz.allowed(user, attrs)
        if ok:
            return
        rt = info.rt
        resource = info.plural if not info.subresource else f"{info.plural}/{info.subresource}"
        raise errors.forbidden(rt, info.name or None, user.name, info.verb, resource,
                               info.group, attrs.namespace or None, why)

    # -- non-resource URLs (discovery, openapi) --------------------------------------------
    async def _non_resource(self, request: web.Request, user: UserInfo,
                            info: RequestInfo) -> web.Response:
        path = info.path
        attrs = info.attributes()
        ok, _ = self.cluster.authz.allowed(user, attrs)
        if not ok:
            raise errors.ApiError(403, "Forbidden",
                                  f'forbidden: User "{user.name}" cannot {info.verb} path '
                                  f'"{path}"', {})
        if request.method != "GET":
            raise errors.method_not_allowed()
        if path == "/metrics":  # the API server's request metrics (requestmetrics.py)
            text = (self.cluster.request_metrics.render()
                    + self.cluster.mpi_operator_metrics.render())
            return web.Response(body=text.encode(),
                                headers={"Content-Type": requestmetrics.CONTENT_TYPE})
        doc = self.cluster.discovery.document(path)
        if doc is None:
            raise errors.page_not_found()
        if path == "/openapi/v2" and "protobuf" in request.headers.get("Accept", ""):
            return web.Response(body=openapi_v2_protobuf(),
                                headers={"Content-Type": OPENAPI_V2_PROTOBUF})
        return json_response(doc)

    # -- dispatch ------------------------------------------------------------------------------
    async def _dispatch(self, request: web.Request, user: UserInfo,
                        info: RequestInfo) -> web.StreamResponse:
        rt = info.rt
        if rt is None:
            raise errors.page_not_found()
        if rt.namespaced is False and info.namespace:
            raise errors.page_not_found()
        if info.verb == "create" and info.name and not info.subresource:
            raise errors.method_not_allowed()  # POST goes to the collection
        virtual = self.cluster.virtual.get(f"{rt.group}/{rt.plural}")
        if virtual is not None:
            return await virtual.handle(request, user, info)
        if info.subresource:
            return await self._subresource(request, user, info)
        if info.verb not in rt.verbs or (info.verb in ("update", "patch") and not info.name):
            raise errors.method_not_allowed()
        if info.verb == "get":
            return json_response(self._render(request, rt, self._get(info)))
        if info.verb == "list":
            return json_response(self._render(request, rt, self._list(request, info)))
        if info.verb == "watch":
            return await self._watch(request, info)
        if info.verb == "create":
            body = await self._body(request, kind=rt.kind)
            return json_response(self._create(request, user, info, body), 201)
        if info.verb == "update":
            body = await self._body(request, kind=rt.kind)
            return json_response(self._update(request, user, info, body))
        if info.verb == "patch":
            body = await self._body(request)
            return json_response(self._patch(request, user, info, body))
        if info.verb == "delete":
            body = await self._body(request, optional=True)
            return json_response(self._delete(request, user, info, body or {}))
        if info.verb == "deletecollection":
            return json_response(self._delete_collection(request, user, info))
        raise errors.method_not_allowed()

    async def _body(self, request: web.Request, optional: bool = False,
                    kind: str = "") -> Any:
        raw = await decoding.read_body(request.content, MAX_BODY, request.content_length)
        if not raw.strip():
            if optional:
                return None
            raise errors.bad_request("the request body is empty; send a JSON or YAML object")
        return decoding.decode(raw, (request.content_type or "").lower(), kind)

    # -- verbs ---------------------------------------------------------------------------
    def _get(self, info: RequestInfo) -> Obj:
        assert info.rt is not None
        obj = self.store.get_raw(info.rt, info.namespace, info.name)
        if obj is None:
            raise errors.not_found(info.rt, info.name)
        return obj

    def _render(self, request: web.Request, rt: ResourceType, body: Obj) -> Obj:
        """The object or list itself, or the Table kubectl asks for."""
        if not tables.wants_table(request.headers.get("Accept", "")):
            return body
        now = self.cluster.clock.now()
        if body.get("kind") == rt.list_kind and "items" in body:
            return tables.table(rt, body["items"], now, body["metadata"])
        return tables.table(rt, [body], now,
                            {"resourceVersion": body["metadata"].get("resourceVersion", "")})

    def _filters(self, request: web.Request, rt: ResourceType):
        q = request.query
        label = parse_label_selector(q.get("labelSelector"))
        field = parse_field_selector(q.get("fieldSelector"), rt)
        return lambda o: label(o) and field(o)

    def _list(self, request: web.Request, info: RequestInfo) -> Obj:
        rt = info.rt
        assert rt is not None
        match = self._filters(request, rt)
        ns = info.namespace or None
        rv = str(self.store.resource_version)
        meta: dict[str, Any] = {"resourceVersion": rv}
        q = request.query
        start = None
        cont = q.get("continue")
        if cont:
            try:
                state = json.loads(base64.urlsafe_b64decode(cont.encode() + b"=="))
                start = (str(state["start"][0]), str(state["start"][1]))
            except (ValueError, KeyError, TypeError, IndexError):
                raise errors.bad_request("continue key is not valid: illegal base64 data"
                                         ) from None
        limit = 0
        if q.get("limit"):
            try:
                limit = int(q["limit"])
            except ValueError:
                raise errors.bad_request(f'invalid value for limit: "{q["limit"]}"') from None
        # the page only: a continued list starts past its key, a limited one stops at
        # its limit (each page of a long list costs that page, as in a real API server)
        candidates = (o for o in self.store.iter_raw(rt, ns, after=start) if match(o))
        if limit <= 0:
            items = list(candidates)
        else:
            items = list(itertools.islice(candidates, limit))
            if next(candidates, None) is not None:
                last = _sort_key(items[-1])
                meta["continue"] = base64.urlsafe_b64encode(
                    json.dumps({"start": list(last), "rv": rv}).encode()).decode().rstrip("=")
                # as the API server: counted only when no selector filters the list
                if not (q.get("labelSelector") or q.get("fieldSelector")):
                    meta["remainingItemCount"] = self.store.count(rt, ns, after=last)
        if not rt.custom:
            items = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")}
                     for o in items]
        return {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta,
                "items": items}

    async def _watch(self, request: web.Request, info: RequestInfo) -> web.StreamResponse:
        rt = info.rt
        assert rt is not None
        q = request.query
        match = self._filters(request, rt)
        try:
            timeout = float(q.get("timeoutSeconds") or 1800)
        except ValueError:
            raise errors.bad_request("timeoutSeconds must be a number") from None
        # 0 (or less) means the server's default, as on the API server
        timeout = min(timeout, 3600.0) if timeout > 0 else 1800.0
        bookmarks = _truthy(q.get("allowWatchBookmarks"))
        rv_param = q.get("resourceVersion") or ""
        watcher = Watcher(rt, info.namespace or None, match)
        initial: list[tuple[str, Obj]] = []
        expired: str | None = None
        if rv_param in ("", "0"):
            initial = [("ADDED", o) for o in self.store.iter_raw(rt, info.namespace or None)
                       if match(o)]
        else:
            try:
                rv = int(rv_param)
            except ValueError:
                raise errors.bad_request(
                    f'invalid resource version "{rv_param}": strconv.ParseUint: parsing '
                    f'"{rv_param}": invalid syntax') from None
            history = self.store.changes_since(rt, rv)
            if history is None:
                expired = (f"too old resource version: {rv} "
                           f"({self.store.oldest_watchable() + 1})")
            else:
                replay = Watcher(rt, info.namespace or None, match)
                for change in history:
                    replay.offer(change)
                while not replay.queue.empty():
                    item = replay.queue.get_nowait()
                    if item is not None:
                        initial.append(item)
        self.store.add_watcher(watcher)
        self.cluster.open_watches += 1
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json",
                                                        "Cache-Control": "no-cache"})
        resp.enable_chunked_encoding()
        try:
            await resp.prepare(request)
            if expired:
                await _write_event(resp, "ERROR", errors.gone(expired).status)
                return resp
            as_table = tables.wants_table(request.headers.get("Accept", ""))
            headers = True

            def shown(obj: Obj) -> Obj:
                nonlocal headers
                if not as_table:
                    return obj
                # column definitions travel with the first event only
                out = tables.table(rt, [obj], self.cluster.clock.now(), {
                    "resourceVersion": obj["metadata"].get("resourceVersion", "")}, headers)
                headers = False
                return out

            for etype, obj in initial:
                await _write_event(resp, etype, shown(obj))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            interval = self.cluster.bookmark_interval
            while True:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    item = await asyncio.wait_for(watcher.queue.get(),
                                                  min(remaining, interval))
                except TimeoutError:
                    if bookmarks:
                        await _write_event(resp, "BOOKMARK", self._bookmark(rt))
                    continue
                if item is None:
                    break
                await _write_event(resp, item[0], shown(item[1]))
            if bookmarks:
                await _write_event(resp, "BOOKMARK", self._bookmark(rt))
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.store.remove_watcher(watcher)
            self.cluster.open_watches -= 1
        try:
            await resp.write_eof()
        except (ConnectionResetError, RuntimeError):
            pass
        return resp

    def _bookmark(self, rt: ResourceType) -> Obj:
        meta: Obj = {"resourceVersion": str(self.store.resource_version)}
        if not rt.custom:
            meta["creationTimestamp"] = None  # a typed ObjectMeta's zero time, as sent
        return {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}

    def _check_body(self, info: RequestInfo, body: Any) -> Obj:
        rt = info.rt
        assert rt is not None
        if not isinstance(body, dict):
            raise errors.bad_request(
                f"the object provided is unrecognized (must be of type {rt.kind}): "
                "couldn't get version/kind; the body is not a JSON object")
        decoding.check_type(rt, self.registry, body)
        meta = body.get("metadata")
        if meta is None:
            body["metadata"] = meta = {}
        if not isinstance(meta, dict):
            raise errors.bad_request("metadata must be an object")
        if rt.namespaced:
            if meta.get("namespace") and meta["namespace"] != info.namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent "
                    "on the request")
            meta["namespace"] = info.namespace
        return body

    def _dry_run(self, request: web.Request) -> bool:
        values = request.query.getall("dryRun", [])
        for v in values:
            if v != "All":
                raise errors.bad_request(f'unsupported dry run value "{v}"; only "All"')
        return bool(values)

    def _create(self, request: web.Request, user: UserInfo, info: RequestInfo,
                body: Any) -> Obj:
        rt = info.rt
        assert rt is not None
        obj = self._check_body(info, body)
        if info.name:
            raise errors.method_not_allowed()
        if rt.namespaced:
            self.cluster.admission.check_namespace(info.namespace)
        obj = self.cluster.admission.admit_create(rt, obj, user,
                                                  field_validation=_field_validation(request))
        if self._dry_run(request):
            return self.cluster.admission.dry_run_result(rt, obj)
        return self.store.create(rt, obj)

    def _update(self, request: web.Request, user: UserInfo, info: RequestInfo,
                body: Any, subresource: str = "") -> Obj:
        rt = info.rt
        assert rt is not None
        obj = self._check_body(info, body)
        name = obj["metadata"].get("name")
        if name and name != info.name:
            raise errors.bad_request(
                "the name of the object (" + str(name) + ") does not match the name on the "
                "URL (" + info.name + ")")
        obj["metadata"]["name"] = info.name
        current = self.store.get(rt, info.namespace, info.name)
        if current is None:
            raise errors.not_found(rt, info.name)
        new = self.cluster.admission.admit_update(rt, current, obj, user, subresource,
                                                  field_validation=_field_validation(request))
        if self._dry_run(request):
            return new
        return self.store.update(rt, new)

    def _patch(self, request: web.Request, user: UserInfo, info: RequestInfo,
               body: Any, subresource: str = "") -> Obj:
        rt = info.rt
        assert rt is not None
        current = self.store.get(rt, info.namespace, info.name)
        if current is None:
            raise errors.not_found(rt, info.name)
        patched = patch.apply(request.headers.get("Content-Type", ""), current, body, rt.custom)
        patched.setdefault("metadata", {})
        patched["metadata"]["name"] = info.name
        if rt.namespaced:
            patched["metadata"]["namespace"] = info.namespace
        # a patch carrying a resourceVersion is a precondition, like an update
        if (patched["metadata"].get("resourceVersion") !=
                current["metadata"]["resourceVersion"]) and \
                isinstance(body, dict) and "resourceVersion" in (body.get("metadata") or {}):
            raise errors.conflict(rt, info.name)
        patched["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        new = self.cluster.admission.admit_update(rt, current, patched, user, subresource,
                                                  field_validation=_field_validation(request))
        if self._dry_run(request):
            return new
        return self.store.update(rt, new)

    def _delete(self, request: web.Request, user: UserInfo, info: RequestInfo,
                options: Obj) -> Obj:
        rt = info.rt
        assert rt is not None
        current = self.store.get_raw(rt, info.namespace, info.name)
        if current is None:
            raise errors.not_found(rt, info.name)
        _check_delete_options(options)
        pre = options.get("preconditions") or {}
        for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            if pre.get(field) and pre[field] != current["metadata"][field]:
                raise errors.ApiError(
                    409, "Conflict", f'Operation cannot be fulfilled on {rt.qualified} '
                    f'"{info.name}": Precondition failed: {label} in precondition: '
                    f'{pre[field]}, {label} in object meta: {current["metadata"][field]}',
                    errors.status_details(rt, info.name))
        grace = options.get("gracePeriodSeconds")
        if grace is None and request.query.get("gracePeriodSeconds") is not None:
            try:
                grace = int(request.query["gracePeriodSeconds"])
            except ValueError:
                raise errors.bad_request("gracePeriodSeconds must be an integer") from None
        policy = options.get("propagationPolicy") or request.query.get("propagationPolicy") \
            or "Background"
        if options.get("orphanDependents") is True:
            policy = "Orphan"
        if policy not in ("Background", "Foreground", "Orphan"):
            raise errors.invalid(rt, rt.kind, info.name, [errors.field_cause(
                "propagationPolicy", f'Unsupported value: "{policy}": supported values: '
                '"Foreground", "Background", "Orphan"', "FieldValueNotSupported")])
        if self._dry_run(request):
            return current
        uid = current["metadata"]["uid"]
        result = self.cluster.deleter.delete(rt, info.namespace, info.name, grace, policy)
        if rt.custom or rt.plural in RETURN_DELETED_OBJECT or \
                self.store.get_raw(rt, info.namespace, info.name) is not None:
            return result
        # Most built-in kinds answer an immediate delete with a Status naming the object.
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "details": errors.status_details(rt, info.name, uid=uid)}

    def _delete_collection(self, request: web.Request, user: UserInfo,
                           info: RequestInfo) -> Obj:
        rt = info.rt
        assert rt is not None
        match = self._filters(request, rt)
        names = [(o["metadata"].get("namespace", ""), o["metadata"]["name"])
                 for o in self.store.iter_raw(rt, info.namespace or None) if match(o)]
        items = []
        for ns, name in names:
            try:
                items.append(self.cluster.deleter.delete(rt, ns, name, None, "Background"))
            except errors.ApiError:
                continue
        return {"kind": rt.list_kind, "apiVersion": rt.api_version,
                "metadata": {"resourceVersion": str(self.store.resource_version)},
                "items": items}

    # -- subresources ----------------------------------------------------------------------
    async def _subresource(self, request: web.Request, user: UserInfo,
                           info: RequestInfo) -> web.StreamResponse:
        rt = info.rt
        assert rt is not None
        sub = info.subresource
        if sub not in rt.subresources:
            raise errors.page_not_found()
        if sub == "status":
            if info.verb == "get":
                return json_response(self._get(info))
            if info.verb == "update":
                body = await self._body(request)
                return json_response(self._update(request, user, info, body, "status"))
            if info.verb == "patch":
                body = await self._body(request)
                return json_response(self._patch(request, user, info, body, "status"))
            raise errors.method_not_allowed()
        if sub == "log" and rt.plural == "pods":
            if info.verb != "get":
                raise errors.method_not_allowed()
            return await self.cluster.kubelet_logs.serve(request, info.namespace, info.name)
        if sub == "eviction" and rt.plural == "pods" and info.verb == "create":
            await self._body(request, optional=True)
            self.cluster.deleter.delete(rt, info.namespace, info.name, None, "Background")
            return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Success", "code": 201}, 201)
        raise errors.method_not_allowed()


def _non_resource_verb(method: str) -> str:
    return {"GET": "get", "POST": "post", "PUT": "put", "PATCH": "patch",
            "DELETE": "delete", "HEAD": "head"}.get(method, method.lower())


def _check_delete_options(options: Any) -> None:
    """DeleteOptions decode as their Go type: a wrong type is a 400."""
    def refuse(field: str, want: str) -> errors.ApiError:
        return errors.bad_request(
            'DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: '
            f"cannot unmarshal into Go struct field DeleteOptions.{field} of type {want}")
    if not isinstance(options, dict):
        raise refuse("", "v1.DeleteOptions")
    grace = options.get("gracePeriodSeconds")
    if grace is not None and (isinstance(grace, bool) or not isinstance(grace, int)):
        raise refuse("gracePeriodSeconds", "int64")
    for field in ("propagationPolicy", "kind", "apiVersion"):
        if options.get(field) is not None and not isinstance(options[field], str):
            raise refuse(field, "string")
    pre = options.get("preconditions")
    if pre is not None and (not isinstance(pre, dict) or not all(
            isinstance(pre.get(k), (str, type(None))) for k in ("uid", "resourceVersion"))):
        raise refuse("preconditions", "v1.Preconditions")
    if options.get("orphanDependents") is not None and \
            not isinstance(options["orphanDependents"], bool):
        raise refuse("orphanDependents", "bool")


def _field_validation(request: web.Request) -> str:
    value = request.query.get("fieldValidation", "")
    if value and value not in ("Strict", "Warn", "Ignore"):
        raise errors.bad_request(
            f'fieldValidation "{value}" is not valid: must be one of Ignore, Warn or Strict')
    return value or "Warn"


def _sort_key(obj: Obj) -> tuple[str, str]:
    m = obj["metadata"]
    return (m.get("namespace", ""), m["name"])


async def _write_event(resp: web.StreamResponse, etype: str, obj: Obj) -> None:
    line = json.dumps({"type": etype, "object": obj}, separators=(",", ":")) + "\n"
    await resp.write(line.encode())
