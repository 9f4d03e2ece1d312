"""What happens to an object between the request and the store.

Order follows the API server: name checks, defaulting and validation for the kind
(`strategies`), the custom resources' structural schema (`schema`), then the admission
plugins that matter here: NamespaceLifecycle, LimitRanger and ResourceQuota.
"""

from __future__ import annotations

import copy
import re
import uuid
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from simcluster import errors, quantity, timestamps
from simcluster.access.auth import UserInfo
from simcluster.apiserver import strategies
from simcluster.apiserver.schemas import structural as schema
from simcluster.placement import kueue_jobs
from simcluster.placement.resources import ResourceType

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

Obj = dict[str, Any]
LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"

DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

# Kinds whose names are DNS-1123 labels rather than subdomains.
LABEL_NAMED = {"namespaces", "services"}
# Kinds whose names the real server accepts loosely (path segment names).
LOOSE_NAMED = {"clusterroles", "clusterrolebindings", "roles", "rolebindings",
               "oauthaccesstokens", "users", "groups", "events"}


def validate_name(rt: ResourceType, name: str, generated: bool) -> list[dict[str, str]]:
    path = "metadata.generateName" if generated else "metadata.name"
    if rt.plural in LOOSE_NAMED:
        if "/" in name or name in (".", ".."):
            return [errors.field_cause(path, f'Invalid value: "{name}": may not contain \'/\'')]
        return []
    if rt.plural in LABEL_NAMED:
        if len(name) > 63 or not DNS1123_LABEL.match(name):
            return [errors.field_cause(
                path, f'Invalid value: "{name}": a lowercase RFC 1123 label must consist of '
                "lower case alphanumeric characters or '-', and must start and end with an "
                "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")]
        return []
    if len(name) > 253 or not DNS1123_SUBDOMAIN.match(name):
        return [errors.field_cause(
            path, f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of '
            "lower case alphanumeric characters, '-' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]
    return []


class Admission:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        # the kinds Kueue's webhook suspends when queued (none without Kueue)
        self._queued_kinds = kueue_jobs.kinds(cluster) if cluster.registry.by_kind(
            "kueue.x-k8s.io/v1beta1", "Workload") is not None else {}

    # -- namespace lifecycle -------------------------------------------------------------
    def check_namespace(self, namespace: str) -> None:
        ns_rt = self.cluster.rt("namespaces")
        ns = self.store.get_raw(ns_rt, "", namespace)
        if ns is None:
            raise errors.namespace_not_found(namespace)
        if (ns.get("status") or {}).get("phase") == "Terminating":
            raise errors.ApiError(
                403, "Forbidden",
                f"unable to create new content in namespace {namespace} because it is being "
                "terminated", {"kind": "namespaces", "name": namespace})

    # -- create ------------------------------------------------------------------------------
    def admit_create(self, rt: ResourceType, obj: Obj, user: UserInfo,
                     field_validation: str = "Warn") -> Obj:
        # decoding first: an object of the wrong shape never reaches a strategy
        obj = timestamps.normalise(schema.decode(rt, obj, field_validation))
        meta = obj["metadata"]
        for k in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                  "generation", "managedFields", "selfLink"):
            meta.pop(k, None)
        name = meta.get("name") or ""
        generate = meta.get("generateName") or ""
        if not name and not generate:
            raise errors.invalid(rt, rt.kind, "", [errors.field_cause(
                "metadata.name", "Required value: name or generateName is required",
                "FieldValueRequired")])
        causes = validate_name(rt, name or generate.rstrip("-") or "x", not name)
        if causes:
            raise errors.invalid(rt, rt.kind, name or generate, causes)
        meta["uid"] = str(uuid.uuid4())
        obj.pop("status", None) if rt.has_status and rt.custom else None
        obj = schema.admit(rt, obj, field_validation)
        obj = strategies.prepare_create(self.cluster, rt, obj, user)
        if rt.custom:  # Kueue's webhook: queued, suspended
            kueue_jobs.suspend_if_queued(self._queued_kinds, rt.group, rt.kind, obj)
        if rt.plural == "pods":  # API defaulting (requests from limits), then LimitRanger
            strategies.default_pod_requests(obj.get("spec") or {})
            self._limit_ranges(obj)
        if rt.namespaced:
            self._quota(rt, obj)
        return obj

    def dry_run_result(self, rt: ResourceType, obj: Obj) -> Obj:
        obj = copy.deepcopy(obj)
        meta = obj["metadata"]
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "dryrun"
        meta.setdefault("creationTimestamp", self.cluster.clock.timestamp())
        meta["generation"] = 1
        obj["apiVersion"] = rt.api_version
        obj["kind"] = rt.kind
        return obj

    # -- update ------------------------------------------------------------------------------
    def admit_update(self, rt: ResourceType, current: Obj, new: Obj, user: UserInfo,
                     subresource: str, field_validation: str = "Warn") -> Obj:
        new = timestamps.normalise(schema.decode(rt, new, field_validation))
        if subresource == "status":
            result = copy.deepcopy(current)
            if "status" in new:
                result["status"] = new["status"]
            else:
                result.pop("status", None)
            result["metadata"]["resourceVersion"] = new["metadata"].get(
                "resourceVersion") or current["metadata"]["resourceVersion"]
            if rt.custom:  # the status must fit the CRD's schema too
                result = schema.admit(rt, result, field_validation)
            return result
        if rt.has_status:
            if "status" in current:
                new["status"] = current["status"]
            else:
                new.pop("status", None)
        new = schema.admit(rt, new, field_validation)
        return strategies.prepare_update(self.cluster, rt, current, new, user)

    # -- LimitRanger ------------------------------------------------------------------------
    def _limit_ranges(self, pod: Obj) -> None:
        """Each LimitRange's Container defaults fill what a container leaves out (noted in
        the `kubernetes.io/limit-ranger` annotation, as the plugin words it); then, as
        the plugin's validation runs after every mutation, the max/min are checked."""
        ns = pod["metadata"].get("namespace", "")
        containers = (pod.get("spec") or {}).get("containers") or []
        ranges = list(self.store.iter_raw(self.cluster.rt("limitranges"), ns))
        for lr in ranges:
            items = [limit for limit in (lr.get("spec") or {}).get("limits") or []
                     if limit.get("type") == "Container"]
            defaults: dict[str, Obj] = {"limits": {}, "requests": {}}
            for limit in items:
                defaults["limits"].update(limit.get("default") or {})
                defaults["requests"].update(limit.get("defaultRequest") or {})
            notes: list[str] = []
            for c in containers:
                res = c.setdefault("resources", {})
                set_by: dict[str, list[str]] = {"requests": [], "limits": []}
                for target in ("requests", "limits"):
                    for rname, value in defaults[target].items():
                        if rname not in (res.get(target) or {}):
                            res.setdefault(target, {})[rname] = value
                            set_by[target].append(rname)
                for target, word in (("requests", "request"), ("limits", "limit")):
                    if set_by[target]:
                        notes.append(f"{', '.join(sorted(set_by[target]))} {word} for "
                                     f"container {c.get('name', '')}")
            if notes:
                pod["metadata"].setdefault("annotations", {})[LIMIT_RANGER_ANNOTATION] = (
                    "LimitRanger plugin set: " + "; ".join(notes))
        for lr in ranges:
            for limit in (lr.get("spec") or {}).get("limits") or []:
                if limit.get("type") == "Container":
                    for c in containers:
                        self._check_limit_range(pod, c, limit, lr["metadata"]["name"])

    def _check_limit_range(self, pod: Obj, container: Obj, limit: Obj, lr_name: str) -> None:
        res = container.get("resources") or {}
        name = pod["metadata"].get("name") or pod["metadata"].get("generateName", "")
        for rname, maxv in (limit.get("max") or {}).items():
            value = (res.get("limits") or {}).get(rname)
            if value is None:
                # LimitRanger: a maximum means every container must state a limit
                raise errors.forbidden_message(
                    self.cluster.rt("pods"), name,
                    f"maximum {rname} usage per Container is {maxv}.  No limit is specified")
            if quantity.parse(value) > quantity.parse(maxv):
                raise errors.forbidden_message(
                    self.cluster.rt("pods"), name,
                    f"maximum {rname} usage per Container is {maxv}, but limit is {value}")
        for rname, minv in (limit.get("min") or {}).items():
            value = (res.get("requests") or {}).get(rname)
            if value is None:
                raise errors.forbidden_message(
                    self.cluster.rt("pods"), name,
                    f"minimum {rname} usage per Container is {minv}.  No request is specified")
            if quantity.parse(value) < quantity.parse(minv):
                raise errors.forbidden_message(
                    self.cluster.rt("pods"), pod["metadata"].get("name") or "",
                    f"minimum {rname} usage per Container is {minv}, but request is {value}")

    # -- ResourceQuota ---------------------------------------------------------------------
    def _quota(self, rt: ResourceType, obj: Obj) -> None:
        ns = obj["metadata"].get("namespace", "")
        quotas = list(self.store.iter_raw(self.cluster.rt("resourcequotas"), ns))
        if not quotas:
            return
        requested = self.cluster.quota_usage.object_usage(rt, obj)
        if not requested:
            return
        used = self.cluster.quota_usage.namespace_usage(ns)
        name = obj["metadata"].get("name") or obj["metadata"].get("generateName", "")
        for q in quotas:
            hard: dict[str, str] = (q.get("spec") or {}).get("hard") or {}
            missing = [r for r in hard if r.startswith(("requests.", "limits.", "cpu", "memory"))
                       and rt.plural == "pods" and r not in requested
                       and _tracks_compute(r)]
            if missing:
                raise errors.forbidden_message(
                    rt, name, f"failed quota: {q['metadata']['name']}: must specify "
                    + ",".join(sorted(missing)))
            over = []
            for rname, limit in hard.items():
                if rname not in requested:
                    continue
                want = requested[rname]
                if want == 0:
                    continue
                have = used.get(rname, Fraction(0))
                if have + want > quantity.parse(limit):
                    over.append(rname)
            if over:
                over.sort()
                def fmt(values: dict[str, Fraction], names: list[str] = over) -> str:
                    return ",".join(f"{r}={quantity.format_for(r, values.get(r, Fraction(0)))}"
                                    for r in names)
                limits = {r: quantity.parse(hard[r]) for r in over}
                raise errors.forbidden_message(
                    rt, name, f"exceeded quota: {q['metadata']['name']}, requested: "
                    f"{fmt(requested)}, used: {fmt(used)}, limited: {fmt(limits)}")


def _tracks_compute(resource: str) -> bool:
    return resource in ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu",
                        "limits.memory")
