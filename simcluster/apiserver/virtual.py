"""Resources computed per request rather than stored: access reviews, users/~, projects,
and a person's own OAuth tokens."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from aiohttp import web

from simcluster import errors
from simcluster.access.auth import Attributes, UserInfo
from simcluster.apiserver.api import RequestInfo, json_response
from simcluster.apiserver.decoding import read_body

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

Obj = dict[str, Any]


async def _read_json(request: web.Request) -> Obj:
    raw = await read_body(request.content, 1024 * 1024, request.content_length)
    try:
        body = json.loads(raw or b"{}")
    except ValueError as e:
        raise errors.bad_request(f"error decoding request body: {e}") from None
    if not isinstance(body, dict):
        raise errors.bad_request("the request body must be a JSON object")
    return body


def _spec(body: Obj, info: RequestInfo) -> Obj:
    """A review's spec, refused as the decoder of its Go type would refuse it."""
    spec = body.get("spec") or {}
    kind = info.rt.kind if info.rt else "Review"
    if not isinstance(spec, dict):
        raise errors.bad_request(
            f'{kind} in version "v1" cannot be handled as a {kind}: json: cannot unmarshal '
            f"{type(spec).__name__} into Go struct field {kind}.spec of type v1.{kind}Spec")
    for key in ("groups", "resourceAttributes", "nonResourceAttributes", "extra"):
        want = list if key == "groups" else dict
        if key in spec and spec[key] is not None and not isinstance(spec[key], want):
            raise errors.bad_request(
                f'{kind} in version "v1" cannot be handled as a {kind}: json: cannot '
                f"unmarshal into Go struct field {kind}Spec.spec.{key}")
    return spec


class VirtualResource:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    async def handle(self, request: web.Request, user: UserInfo,
                     info: RequestInfo) -> web.StreamResponse:
        raise errors.method_not_allowed()

    def _list(self, kind: str, api_version: str, items: list[Obj]) -> web.StreamResponse:
        """A list answer, at the store's current resourceVersion."""
        return json_response({"kind": kind, "apiVersion": api_version, "metadata": {
            "resourceVersion": str(self.cluster.store.resource_version)}, "items": items})


def _attrs_from_spec(spec: Obj) -> Attributes:
    ra = spec.get("resourceAttributes")
    if isinstance(ra, dict):
        return Attributes(verb=str(ra.get("verb") or ""), group=str(ra.get("group") or ""),
                          resource=str(ra.get("resource") or ""),
                          subresource=str(ra.get("subresource") or ""),
                          namespace=str(ra.get("namespace") or ""),
                          name=str(ra.get("name") or ""))
    nra = spec.get("nonResourceAttributes")
    if isinstance(nra, dict):
        return Attributes(verb=str(nra.get("verb") or ""), path=str(nra.get("path") or ""))
    raise errors.ApiError(422, "Invalid",
                          'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: '
                          "spec.resourceAttributes: Invalid value: \"null\": exactly one of "
                          "nonResourceAttributes or resourceAttributes must be specified")


class _Review(VirtualResource, ABC):
    """A create-only review: the posted object comes back (201) with its status filled in."""

    kind = ""
    api_version = "authorization.k8s.io/v1"

    async def handle(self, request: web.Request, user: UserInfo,
                     info: RequestInfo) -> web.StreamResponse:
        if info.verb != "create":
            raise errors.method_not_allowed()
        body = await _read_json(request)
        return json_response({"kind": self.kind, "apiVersion": self.api_version,
                              "metadata": {"creationTimestamp": None},
                              **self.review(body, user, info)}, 201)

    @abstractmethod
    def review(self, body: Obj, user: UserInfo, info: RequestInfo) -> Obj:
        """The answer's spec (when it has one) and status."""


def _decision(allowed: bool, reason: str) -> Obj:
    status: Obj = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return status


class SelfSubjectAccessReviews(_Review):
    kind = "SelfSubjectAccessReview"

    def review(self, body: Obj, user: UserInfo, info: RequestInfo) -> Obj:
        spec = _spec(body, info)
        allowed, reason = self.cluster.authz.allowed(user, _attrs_from_spec(spec))
        status = _decision(allowed, reason)
        if not allowed and user.scopes and reason.startswith("scopes"):
            status["denied"] = True
        return {"spec": spec, "status": status}


class SubjectAccessReviews(_Review):
    kind = "SubjectAccessReview"

    def review(self, body: Obj, user: UserInfo, info: RequestInfo) -> Obj:
        spec = _spec(body, info)
        subject = UserInfo(str(spec.get("user") or ""), tuple(spec.get("groups") or ()))
        allowed, reason = self.cluster.authz.rbac_decision(subject, _attrs_from_spec(spec))
        return {"spec": spec, "status": _decision(allowed, reason)}


class SelfSubjectRulesReviews(_Review):
    kind = "SelfSubjectRulesReview"

    def review(self, body: Obj, user: UserInfo, info: RequestInfo) -> Obj:
        spec = _spec(body, info)
        rules = self.cluster.authz_rules(user, str(spec.get("namespace") or ""))
        return {"spec": spec,
                "status": {"resourceRules": [r for r in rules if "nonResourceURLs" not in r],
                           "nonResourceRules": [r for r in rules if "nonResourceURLs" in r],
                           "incomplete": False}}


class SelfSubjectReviews(_Review):
    kind = "SelfSubjectReview"
    api_version = "authentication.k8s.io/v1"

    def review(self, body: Obj, user: UserInfo, info: RequestInfo) -> Obj:
        ui: Obj = {"username": user.name, "groups": list(user.groups)}
        if user.uid:
            ui["uid"] = user.uid
        return {"status": {"userInfo": ui}}


class Users(VirtualResource):
    """user.openshift.io/v1 users: `~` is the caller; others need RBAC on users."""

    async def handle(self, request: web.Request, user: UserInfo,
                     info: RequestInfo) -> web.StreamResponse:
        rt = info.rt
        assert rt is not None
        if info.verb == "get":
            name = user.name if info.name == "~" else info.name
            if info.name == "~" and user.is_service_account:
                return json_response(self._user_obj(name, user.groups, {}))
            record = self.cluster.users.get(name)
            if record is None:
                raise errors.not_found(rt, name)
            groups = user.groups if info.name == "~" else record.get("groups", ())
            return json_response(self._user_obj(name, groups, record))
        if info.verb == "list":
            items = [self._user_obj(n, r.get("groups", ()), r)
                     for n, r in sorted(self.cluster.users.items())]
            return self._list("UserList", "user.openshift.io/v1", items)
        raise errors.method_not_allowed()

    def _user_obj(self, name: str, groups: Any, record: Obj) -> Obj:
        obj: Obj = {"kind": "User", "apiVersion": "user.openshift.io/v1",
                    "metadata": {"name": name, "uid": record.get("uid", ""),
                                 "creationTimestamp": record.get("created")}}
        if record.get("fullName"):
            obj["fullName"] = record["fullName"]
        if record:
            obj["identities"] = [f"htpasswd:{name}"]
        obj["groups"] = sorted(set(groups))
        return obj


class Projects(VirtualResource):
    """project.openshift.io/v1 projects: the namespaces the caller may get."""

    def _visible(self, user: UserInfo) -> list[Obj]:
        ns_rt = self.cluster.rt("namespaces")
        out = []
        for ns in self.cluster.store.iter_raw(ns_rt):
            name = ns["metadata"]["name"]
            ok, _ = self.cluster.authz.allowed(user, Attributes(
                verb="get", group="project.openshift.io", resource="projects",
                namespace=name, name=name))
            if ok:
                out.append(_project(ns))
        return out

    async def handle(self, request: web.Request, user: UserInfo,
                     info: RequestInfo) -> web.StreamResponse:
        rt = info.rt
        assert rt is not None
        if info.verb == "list":
            return self._list("ProjectList", "project.openshift.io/v1", self._visible(user))
        if info.verb == "get":
            ns = self.cluster.store.get_raw(self.cluster.rt("namespaces"), "", info.name)
            if ns is None:
                raise errors.not_found(rt, info.name)
            return json_response(_project(ns) | {"kind": "Project",
                                                 "apiVersion": "project.openshift.io/v1"})
        raise errors.method_not_allowed()


def _project(ns: Obj) -> Obj:
    return {"metadata": ns["metadata"], "spec": ns.get("spec", {"finalizers": ["kubernetes"]}),
            "status": ns.get("status", {"phase": "Active"})}


class UserOAuthAccessTokens(VirtualResource):
    """A person's own tokens, by their hashed names; delete is how a person logs out."""

    def _own(self, user: UserInfo) -> list[Obj]:
        rt = self.cluster.rt("oauthaccesstokens")
        return [t for t in self.cluster.store.iter_raw(rt) if t.get("userName") == user.name]

    @staticmethod
    def _as_user_token(obj: Obj) -> Obj:
        return dict(obj, kind="UserOAuthAccessToken", apiVersion="oauth.openshift.io/v1")

    async def handle(self, request: web.Request, user: UserInfo,
                     info: RequestInfo) -> web.StreamResponse:
        rt = info.rt
        assert rt is not None
        tokens_rt = self.cluster.rt("oauthaccesstokens")
        if info.verb == "list":
            return self._list("UserOAuthAccessTokenList", "oauth.openshift.io/v1",
                              [self._as_user_token(t) for t in self._own(user)])
        token = self.cluster.store.get_raw(tokens_rt, "", info.name) if info.name else None
        if token is None or token.get("userName") != user.name:
            raise errors.not_found(rt, info.name)
        if info.verb == "get":
            return json_response(self._as_user_token(token))
        if info.verb == "delete":
            self.cluster.store.delete(tokens_rt, "", info.name)
            return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Success",
                                  "details": {"name": info.name, "group": rt.group,
                                              "kind": rt.plural, "uid": token["metadata"]["uid"]}})
        raise errors.method_not_allowed()


def virtual_handlers(cluster: Cluster) -> dict[str, VirtualResource]:
    from simcluster.placement.kueue_visibility import PendingWorkloads

    return {
        "visibility.kueue.x-k8s.io/clusterqueues": PendingWorkloads(cluster),
        "visibility.kueue.x-k8s.io/localqueues": PendingWorkloads(cluster),
        "authorization.k8s.io/selfsubjectaccessreviews": SelfSubjectAccessReviews(cluster),
        "authorization.k8s.io/subjectaccessreviews": SubjectAccessReviews(cluster),
        "authorization.k8s.io/selfsubjectrulesreviews": SelfSubjectRulesReviews(cluster),
        "authentication.k8s.io/selfsubjectreviews": SelfSubjectReviews(cluster),
        "user.openshift.io/users": Users(cluster),
        "project.openshift.io/projects": Projects(cluster),
        "oauth.openshift.io/useroauthaccesstokens": UserOAuthAccessTokens(cluster),
    }
