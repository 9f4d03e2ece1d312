"""The cluster: store, clock, API machinery, OAuth and controllers in one object."""

from __future__ import annotations

import logging
from typing import Any

from simcluster import errors
from simcluster.access.auth import Attributes, Authenticator, Authorizer, UserInfo
from simcluster.access.oauth import OAuthServer
from simcluster.access.rbac_aggregation import ClusterRoleAggregator
from simcluster.apiserver.admission import Admission
from simcluster.apiserver.discovery import KUBE_VERSION, Discovery
from simcluster.apiserver.store import Store
from simcluster.apiserver.virtual import virtual_handlers
from simcluster.clock import Clock
from simcluster.controllers import all_controllers
from simcluster.controllers.base import SLICE_SECONDS, Manager
from simcluster.events import EventRecorder
from simcluster.gc import Deleter, GarbageCollector, NamespaceController
from simcluster.monitoring.requestmetrics import MPIOperatorMetrics, RequestMetrics
from simcluster.node.logs import LogServer
from simcluster.placement.quota import QuotaController, QuotaUsage
from simcluster.placement.resources import Registry, ResourceType

log = logging.getLogger("simcluster")

Obj = dict[str, Any]

SYSTEM_USER = UserInfo("system:admin", ("system:masters", "system:authenticated"))


class Cluster:
    def __init__(self, *, speed: float = 1.0, optional_apis: list[str] | None = None,
                 api_url: str = "https://127.0.0.1:6443",
                 oauth_browser_url: str = "http://127.0.0.1:6080",
                 history_size: int = 10000, bookmark_interval: float = 5.0) -> None:
        self.registry = Registry(optional_apis or [])
        self.clock = Clock(speed)
        self.store = Store(self.registry, self.clock, history_size)
        self.api_url = api_url
        self.oauth_browser_url = oauth_browser_url
        self.bookmark_interval = bookmark_interval
        self.open_watches = 0
        self.request_metrics = RequestMetrics()  # /metrics on the API port
        self.mpi_operator_metrics = MPIOperatorMetrics()  # appended to /metrics
        self.events = EventRecorder(self.store)
        self.authn = Authenticator(self.store, self.registry)
        self.authz = Authorizer(self.store, self.registry)
        self.admission = Admission(self)
        self.discovery = Discovery(self.registry, api_url.split("://", 1)[-1])
        self.virtual = virtual_handlers(self)
        self.oauth = OAuthServer(self)
        self.kubelet_logs = LogServer(self)
        self.quota_usage = QuotaUsage(self)
        self.deleter = Deleter(self)
        # name -> {password, fullName, groups, uid, created}
        self.users: dict[str, Obj] = {}
        self.service_account_tokens: dict[tuple[str, str], str] = {}
        self.manager = Manager(self)
        self.gc = GarbageCollector(self)
        self.namespace_controller = NamespaceController(self)
        self.manager.add(self.gc)
        self.manager.add(self.namespace_controller)
        self.manager.add(QuotaController(self))
        self.manager.add(ClusterRoleAggregator(self))
        for controller in all_controllers(self):
            self.manager.add(controller)
        self.clock.after_each = self.manager.pump  # the warp: every reaction at its time
        self.clock.after_slice = lambda: self.manager.pump(seconds=SLICE_SECONDS)

    # -- lookups ---------------------------------------------------------------------------------
    def rt(self, plural: str, group: str | None = None) -> ResourceType:
        for t in self.registry.types:
            if t.plural == plural and (group is None or t.group == group):
                return t
        raise KeyError(plural)

    def version_info(self) -> Obj:
        return dict(KUBE_VERSION)

    def service_account_token(self, namespace: str, name: str) -> str:
        return self.service_account_tokens.get((namespace, name), "")

    def authz_rules(self, user: UserInfo, namespace: str) -> list[Obj]:
        """Rules that apply to `user` in `namespace` (SelfSubjectRulesReview)."""
        rules: list[Obj] = []
        for crb in self.store.iter_raw(self.rt("clusterrolebindings")):
            if any(self.authz._subject_matches(s, user, "") for s in crb.get("subjects") or []):
                rules += self.authz._role_rules(crb.get("roleRef") or {}, "")
        if namespace:
            for rb in self.store.iter_raw(self.rt("rolebindings"), namespace):
                if any(self.authz._subject_matches(s, user, namespace)
                       for s in rb.get("subjects") or []):
                    rules += self.authz._role_rules(rb.get("roleRef") or {}, namespace)
        return rules

    def can(self, user: UserInfo, verb: str, resource: str, group: str = "",
            namespace: str = "", name: str = "") -> bool:
        return self.authz.allowed(user, Attributes(verb=verb, group=group, resource=resource,
                                                   namespace=namespace, name=name))[0]

    # -- writes on behalf of someone (scenario loading, controllers) --------------------------
    def create_as(self, user: UserInfo, obj: Obj) -> Obj:
        """Create an object through admission as `user` would (quota, defaults, schema)."""
        rt = self.registry.by_kind(obj.get("apiVersion", ""), obj.get("kind", ""))
        if rt is None:
            raise errors.bad_request(
                f'no matches for kind "{obj.get("kind")}" in version "{obj.get("apiVersion")}"')
        meta = obj.setdefault("metadata", {})
        if rt.namespaced:
            meta.setdefault("namespace", "default")
            self.admission.check_namespace(meta["namespace"])
        else:
            meta.pop("namespace", None)
        admitted = self.admission.admit_create(rt, obj, user)
        return self.store.create(rt, admitted)

    def apply_system(self, obj: Obj) -> Obj:
        """Create or replace an object as the cluster itself."""
        rt = self.registry.by_kind(obj.get("apiVersion", ""), obj.get("kind", ""))
        if rt is None:
            raise ValueError(f"unknown kind {obj.get('apiVersion')}/{obj.get('kind')}")
        meta = obj.get("metadata") or {}
        existing = self.store.get(rt, meta.get("namespace", ""), meta.get("name", ""))
        if existing is None:
            return self.create_as(SYSTEM_USER, obj)
        merged = dict(existing)
        for k, v in obj.items():
            if k != "metadata":
                merged[k] = v
        merged["metadata"] = {**existing["metadata"], **{k: v for k, v in meta.items()}}
        return self.store.update(rt, merged, check_version=False)
