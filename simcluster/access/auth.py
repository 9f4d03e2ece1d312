"""Who is asking (bearer tokens) and may they (RBAC, narrowed by OpenShift token scopes).

Authorization reads the Role/ClusterRole/RoleBinding/ClusterRoleBinding objects in the
store, so `kubectl apply` of RBAC changes access at once, as on a real cluster.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from simcluster.apiserver.selectors import parse_label_selector
from simcluster.apiserver.store import Store
from simcluster.placement.resources import Registry

Obj = dict[str, Any]

SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class UserInfo:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    # OpenShift OAuth scopes of the token; () means an unscoped token (static or SA).
    scopes: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def is_service_account(self) -> bool:
        return self.name.startswith(SA_PREFIX)


@dataclass(frozen=True)
class Attributes:
    """What a request does, in the terms RBAC speaks."""

    verb: str
    group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""  # for non-resource requests (/version, /healthz)

    @property
    def is_resource(self) -> bool:
        return bool(self.resource)

    @property
    def resource_with_sub(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def hash_oauth_token(token: str) -> str:
    """OAuthAccessToken object name for a `sha256~` token, as OpenShift derives it."""
    secret = token[len("sha256~"):]
    digest = hashlib.sha256(secret.encode()).digest()
    return "sha256~" + base64.urlsafe_b64encode(digest).decode().rstrip("=")


class Authenticator:
    def __init__(self, store: Store, registry: Registry) -> None:
        self.store = store
        self.registry = registry
        self.static_tokens: dict[str, UserInfo] = {}
        self.user_groups: dict[str, tuple[str, ...]] = {}
        self.user_uids: dict[str, str] = {}

    def add_static_token(self, token: str, user: UserInfo) -> None:
        self.static_tokens[token] = user

    def authenticate(self, authorization: str | None) -> UserInfo | None:
        if not authorization or not authorization.startswith("Bearer "):
            return None
        token = authorization[len("Bearer "):].strip()
        if token in self.static_tokens:
            return self.static_tokens[token]
        if token.startswith("sha256~"):
            return self._oauth_user(token)
        return None

    def _oauth_user(self, token: str) -> UserInfo | None:
        rt = self.registry.get("oauth.openshift.io", "v1", "oauthaccesstokens")
        assert rt is not None
        obj = self.store.get_raw(rt, "", hash_oauth_token(token))
        if obj is None:
            return None
        expires_in = int(obj.get("expiresIn") or 0)
        if expires_in > 0:
            created = _parse_time(obj["metadata"]["creationTimestamp"])
            if self.store.clock.now() >= created + expires_in:
                return None
        name = obj.get("userName", "")
        groups = self.user_groups.get(name, ())
        return UserInfo(name, groups + ("system:authenticated:oauth", "system:authenticated"),
                        uid=obj.get("userUID", ""), scopes=tuple(obj.get("scopes") or ()))


def _parse_time(ts: str) -> float:
    from datetime import datetime

    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


# -- RBAC ------------------------------------------------------------------------------------
def _rule_matches(rule: Obj, attrs: Attributes) -> bool:
    verbs = rule.get("verbs") or []
    if "*" not in verbs and attrs.verb not in verbs:
        return False
    if not attrs.is_resource:
        urls = rule.get("nonResourceURLs") or []
        return any(u == "*" or u == attrs.path or
                   (u.endswith("*") and attrs.path.startswith(u[:-1])) for u in urls)
    groups = rule.get("apiGroups")
    if groups is None or ("*" not in groups and attrs.group not in groups):
        return False
    resources = rule.get("resources") or []
    wanted = attrs.resource_with_sub
    ok = False
    for r in resources:
        if r == "*" or r == wanted:
            ok = True
        elif attrs.subresource and r == f"{attrs.resource}/*":
            ok = True
        elif attrs.subresource and r == f"*/{attrs.subresource}":
            ok = True
        if ok:
            break
    if not ok:
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


class Authorizer:
    def __init__(self, store: Store, registry: Registry) -> None:
        self.store = store
        self.registry = registry
        self._rt = {p: registry.get("rbac.authorization.k8s.io", "v1", p)
                    for p in ("roles", "rolebindings", "clusterroles", "clusterrolebindings")}

    # subjects
    @staticmethod
    def _subject_matches(subject: Obj, user: UserInfo, binding_ns: str) -> bool:
        kind = subject.get("kind")
        name = subject.get("name")
        if kind == "User":
            return name == user.name
        if kind == "Group":
            return name in user.groups
        if kind == "ServiceAccount":
            ns = subject.get("namespace") or binding_ns
            return user.name == f"{SA_PREFIX}{ns}:{name}"
        return False

    def cluster_role_rules(self, name: str, _seen: frozenset[str] = frozenset()) -> list[Obj]:
        """A ClusterRole's rules, with aggregated roles folded in (recursively, as the
        aggregation controller fills `edit` from `view` and friends)."""
        role = self.store.get_raw(self._rt["clusterroles"], "", name)
        if role is None or name in _seen:
            return []
        seen = _seen | {name}
        rules = list(role.get("rules") or [])
        agg = role.get("aggregationRule")
        if agg:
            selectors = agg.get("clusterRoleSelectors") or []
            for other in self.store.iter_raw(self._rt["clusterroles"]):
                other_name = other["metadata"]["name"]
                if other_name in seen:
                    continue
                if any(_selector_matches(sel, other) for sel in selectors):
                    rules.extend(self.cluster_role_rules(other_name, seen))
        return rules

    def _role_rules(self, ref: Obj, binding_ns: str) -> list[Obj]:
        if ref.get("kind") == "ClusterRole":
            return self.cluster_role_rules(ref.get("name", ""))
        role = self.store.get_raw(self._rt["roles"], binding_ns, ref.get("name", ""))
        return list(role.get("rules") or []) if role else []

    def rbac_decision(self, user: UserInfo, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason) from RBAC alone, with the real authorizer's reason text."""
        for crb in self.store.iter_raw(self._rt["clusterrolebindings"]):
            if not any(self._subject_matches(s, user, "") for s in crb.get("subjects") or []):
                continue
            ref = crb.get("roleRef") or {}
            if any(_rule_matches(r, attrs) for r in self._role_rules(ref, "")):
                return True, (f'RBAC: allowed by ClusterRoleBinding "{crb["metadata"]["name"]}" '
                              f'of ClusterRole "{ref.get("name")}" to {_subject_word(user)}')
        if attrs.namespace:
            for rb in self.store.iter_raw(self._rt["rolebindings"], attrs.namespace):
                if not any(self._subject_matches(s, user, attrs.namespace)
                           for s in rb.get("subjects") or []):
                    continue
                ref = rb.get("roleRef") or {}
                if any(_rule_matches(r, attrs) for r in self._role_rules(ref, attrs.namespace)):
                    return True, (f'RBAC: allowed by RoleBinding "{rb["metadata"]["name"]}/'
                                  f'{attrs.namespace}" of {ref.get("kind")} '
                                  f'"{ref.get("name")}" to {_subject_word(user)}')
        return False, ""

    def allowed(self, user: UserInfo, attrs: Attributes) -> tuple[bool, str]:
        if "system:masters" in user.groups:
            return True, ""
        if user.scopes:
            ok, why = self.scope_allows(user, attrs)
            if not ok:
                return False, why
        return self.rbac_decision(user, attrs)

    # -- OpenShift scopes -------------------------------------------------------------
    def scope_allows(self, user: UserInfo, attrs: Attributes) -> tuple[bool, str]:
        for scope in user.scopes:
            if scope == "user:full":
                return True, ""
            if scope == "user:info" and attrs.group == "user.openshift.io" and \
                    attrs.resource == "users" and attrs.name == "~" and attrs.verb == "get":
                return True, ""
            if scope == "user:check-access" and attrs.verb == "create" and \
                    attrs.group in ("authorization.k8s.io", "authorization.openshift.io") and \
                    attrs.resource in ("selfsubjectaccessreviews", "selfsubjectrulesreviews"):
                return True, ""
            if scope in ("user:list-projects", "user:list-scoped-projects") and \
                    attrs.group in ("project.openshift.io", "") and \
                    attrs.resource == "projects" and attrs.verb in ("list", "watch", "get"):
                return True, ""
            if scope.startswith("role:"):
                parts = scope.split(":")
                if len(parts) >= 3:
                    role, ns = parts[1], parts[2]
                    if ns in ("*", attrs.namespace) and any(
                            _rule_matches(r, attrs) for r in self.cluster_role_rules(role)):
                        return True, ""
        if not attrs.is_resource and attrs.verb == "get":
            # discovery and version are readable by any scoped token
            if attrs.path in ("/api", "/apis", "/version", "/healthz") or \
                    attrs.path.startswith(("/api/", "/apis/")):
                return True, ""
        # Go's %v of a []string: [user:info user:check-access]
        return False, f"scopes [{' '.join(user.scopes)}] prevent this action"


def _subject_word(user: UserInfo) -> str:
    if user.is_service_account:
        ns, name = user.name[len(SA_PREFIX):].split(":", 1)
        return f'ServiceAccount "{name}/{ns}"'
    return f'User "{user.name}"'


def _selector_matches(selector: Obj, obj: Obj) -> bool:
    parts = [f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        op = expr.get("operator")
        key = expr.get("key")
        values = ",".join(expr.get("values") or [])
        if op == "In":
            parts.append(f"{key} in ({values})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({values})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    if not parts:
        return False
    return parse_label_selector(",".join(parts))(obj)
