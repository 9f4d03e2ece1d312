"""Talking to the cluster about training jobs, with one person's credentials.

A thin layer over the official `kubernetes` client: every call returns plain dicts shaped
exactly like the API's JSON (what `odh.training.status.summarize` reads), and every failure is one
of `odh.training.errors`. The dashboard makes one `ClusterClient` per request with the
signed-in person's token, so the API server's RBAC decides what they see and do.

Its parts: the calls they all make (`api`, the refusals translated by `apierrors`), the
jobs and their pods (`jobcalls`), pods' logs (`logstreams`), Kueue (`kueue`); what
remains here: who you are and what you may do, projects, the API's discovery, leases,
events, quotas, nodes and what the create-job wizard offers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubernetes import client as k8s

from odh.training import errors
from odh.training.cluster.api import Obj, require_names
from odh.training.cluster.jobcalls import JobCalls
from odh.training.cluster.kueue import KueueReads
from odh.training.cluster.logstreams import PodLogs
from odh.training.kinds import KINDS, JobKind


@dataclass(frozen=True)
class Project:
    name: str
    display_name: str
    description: str = ""
    # what tells this project from an earlier one of the same name (deleted, made again)
    uid: str = ""

    @property
    def label(self) -> str:
        return self.display_name or self.name


class ClusterClient(JobCalls, PodLogs, KueueReads):
    """Training jobs, their pods, logs and queues, and what the dashboard reads besides, with
    one person's credentials (`ApiCalls`: `shared`, `close()`, a context manager)."""

    # -- leases (leader election: odh.training.cluster.election) ------------------------
    def get_lease(self, namespace: str, name: str) -> Obj:
        return self._call(k8s.CoordinationV1Api(self.api_client).read_namespaced_lease, name,
                          namespace, namespace=namespace)

    def create_lease(self, namespace: str, body: Obj) -> Obj:
        return self._call(k8s.CoordinationV1Api(self.api_client).create_namespaced_lease,
                          namespace, body, namespace=namespace)

    def replace_lease(self, namespace: str, name: str, body: Obj) -> Obj:
        """A write that carries the resourceVersion read: 409 (errors.Conflict) when the
        Lease changed since."""
        return self._call(k8s.CoordinationV1Api(self.api_client).replace_namespaced_lease,
                          name, namespace, body, namespace=namespace)

    # -- the prices the dashboard publishes (odh.training.cost) ---------------------------
    def get_config_map(self, namespace: str, name: str) -> Obj:
        require_names(namespace, name, "ConfigMap")
        return self._call(self.core.read_namespaced_config_map, name, namespace,
                          namespace=namespace)

    def put_config_map(self, namespace: str, name: str, data: dict[str, str],
                       labels: dict[str, str] | None = None) -> Obj:
        """Create the ConfigMap, or replace its data if it is there."""
        require_names(namespace, name, "ConfigMap")
        body = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
                "data": data}
        try:
            return self._call(self.core.replace_namespaced_config_map, name, namespace, body,
                              namespace=namespace)
        except errors.NotFound:
            return self._call(self.core.create_namespaced_config_map, namespace, body,
                              namespace=namespace)

    # -- who am I, what may I do -----------------------------------------------------------------
    def whoami(self) -> Obj:
        return self._call(self.custom.get_cluster_custom_object, "user.openshift.io", "v1",
                          "users", "~")

    def can_i(self, verb: str, resource: str, group: str = "", namespace: str = "",
              name: str = "", subresource: str = "") -> bool:
        attrs = {"verb": verb, "resource": resource, "group": group}
        if namespace:
            attrs["namespace"] = namespace
        if name:
            attrs["name"] = name
        if subresource:
            attrs["subresource"] = subresource
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": attrs}}
        review = self._call(self.authz.create_self_subject_access_review, body,
                            namespace=namespace)
        return bool((review.get("status") or {}).get("allowed"))

    def subject_may(self, user: str, groups: list[str], verb: str, resource: str,
                    group: str = "", namespace: str = "", name: str = "") -> bool:
        """May `user` (in `groups`) do this? A SubjectAccessReview, asked with this client's
        identity (the dashboard's account, for a person who is not signed in now)."""
        attrs = {"verb": verb, "resource": resource, "group": group}
        if namespace:
            attrs["namespace"] = namespace
        if name:
            attrs["name"] = name
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                "spec": {"resourceAttributes": attrs, "user": user, "groups": list(groups)}}
        review = self._call(self.authz.create_subject_access_review, body,
                            namespace=namespace)
        return bool((review.get("status") or {}).get("allowed"))

    def delete_own_token(self, token: str) -> None:
        """Log out: delete this OAuth access token (OpenShift `sha256~` tokens)."""
        import base64
        import hashlib

        if not token.startswith("sha256~"):
            return
        digest = hashlib.sha256(token[len("sha256~"):].encode()).digest()
        name = "sha256~" + base64.urlsafe_b64encode(digest).decode().rstrip("=")
        self._call(self.custom.delete_cluster_custom_object, "oauth.openshift.io", "v1",
                   "useroauthaccesstokens", name)

    # -- projects --------------------------------------------------------------------------------
    def list_projects(self) -> list[Project]:
        projects = []
        for item in self._items(self.custom.list_cluster_custom_object, "project.openshift.io",
                                "v1", "projects"):
            meta = item.get("metadata") or {}
            ann = meta.get("annotations") or {}
            projects.append(Project(meta.get("name", ""), ann.get("openshift.io/display-name", ""),
                                    ann.get("openshift.io/description", ""),
                                    str(meta.get("uid") or "")))
        return sorted(projects, key=lambda p: p.name)

    # -- discovery ------------------------------------------------------------------------------
    def served_kinds(self) -> list[JobKind]:
        """The training job kinds this cluster has APIs for."""
        groups = self._call(k8s.ApisApi(self.api_client).get_api_versions)
        served = {(g.get("name"), v.get("version")) for g in groups.get("groups") or []
                  for v in g.get("versions") or []}
        return [k for k in KINDS.values() if (k.group, k.version) in served]

    def serves(self, group: str, version: str) -> bool:
        """Whether the cluster has that API group at that version (discovery)."""
        groups = self._call(k8s.ApisApi(self.api_client).get_api_versions)
        return any(g.get("name") == group and any(v.get("version") == version
                                                  for v in g.get("versions") or [])
                   for g in groups.get("groups") or [])

    # -- other custom resources (a kind's own: the Trainer's runtimes) ----------------------
    def list_custom(self, group: str, version: str, plural: str, namespace: str = ""
                    ) -> list[Obj]:
        """The objects of a custom resource, of one namespace or ("") cluster-scoped."""
        if namespace:
            return self._items(self.custom.list_namespaced_custom_object, group, version,
                               namespace, plural, namespace=namespace)
        return self._items(self.custom.list_cluster_custom_object, group, version, plural)

    def get_custom(self, group: str, version: str, plural: str, name: str,
                   namespace: str = "") -> Obj:
        """One object of a custom resource, namespaced or ("") cluster-scoped."""
        if namespace:
            return self._call(self.custom.get_namespaced_custom_object, group, version,
                              namespace, plural, name, namespace=namespace)
        return self._call(self.custom.get_cluster_custom_object, group, version, plural, name)

    # -- events, pods, quotas --------------------------------------------------------------------
    def list_events(self, namespace: str, uids: Iterable[str] | None = None) -> list[Obj]:
        items = self._items(self.core.list_namespaced_event, namespace, namespace=namespace)
        if uids is not None:
            wanted = set(uids)
            items = [e for e in items if (e.get("involvedObject") or {}).get("uid") in wanted]
        return items

    def get_pod(self, namespace: str, name: str) -> Obj:
        require_names(namespace, name, "pods")
        return self._call(self.core.read_namespaced_pod, name, namespace, namespace=namespace)

    def create_pod(self, namespace: str, body: Obj) -> Obj:
        """Create a pod (the artifacts' short-lived lister: odh.training.artifacts.lister)."""
        require_names(namespace)
        return self._call(self.core.create_namespaced_pod, namespace, body, namespace=namespace)

    def delete_pod(self, namespace: str, name: str, grace_seconds: int = 0) -> None:
        require_names(namespace, name, "pods")
        body = {"apiVersion": "v1", "kind": "DeleteOptions",
                "gracePeriodSeconds": grace_seconds}
        self._call(self.core.delete_namespaced_pod, name, namespace, body=body,
                   namespace=namespace)

    def create_service(self, namespace: str, body: Obj) -> Obj:
        """Create a Service (a job's TensorBoard pod's: odh.training.artifacts.tensorboard)."""
        require_names(namespace)
        return self._call(self.core.create_namespaced_service, namespace, body,
                          namespace=namespace)

    def delete_service(self, namespace: str, name: str) -> None:
        require_names(namespace, name, "services")
        self._call(self.core.delete_namespaced_service, name, namespace, namespace=namespace)

    def list_quotas(self, namespace: str) -> list[Obj]:
        return self._items(self.core.list_namespaced_resource_quota, namespace,
                           namespace=namespace)

    def get_quota(self, namespace: str, name: str) -> Obj:
        require_names(namespace, name, "ResourceQuota")
        return self._call(self.core.read_namespaced_resource_quota, name, namespace,
                          namespace=namespace)

    def patch_quota(self, namespace: str, name: str, patch: Obj) -> Obj:
        """A JSON merge patch of a ResourceQuota (odh.training.capacity.quota_edit): 409
        (errors.Conflict) when it carries a resourceVersion that is no longer current."""
        require_names(namespace, name, "ResourceQuota")
        return self._call(self.core.patch_namespaced_resource_quota, name, namespace, patch,
                          namespace=namespace, _content_type="application/merge-patch+json")

    # -- what the create-job wizard offers ------------------------------------------------------
    def list_limit_ranges(self, namespace: str) -> list[Obj]:
        return self._items(self.core.list_namespaced_limit_range, namespace, namespace=namespace)

    def list_pvcs(self, namespace: str) -> list[Obj]:
        return self._items(self.core.list_namespaced_persistent_volume_claim, namespace,
                           namespace=namespace)

    def pvc_exists(self, namespace: str, name: str) -> bool:
        require_names(namespace, name, "PersistentVolumeClaim")
        try:
            self._call(self.core.read_namespaced_persistent_volume_claim, name, namespace,
                       namespace=namespace)
        except errors.NotFound:
            return False
        return True

    def create_pvc(self, namespace: str, body: Obj) -> Obj:
        """Create a PersistentVolumeClaim (the wizard's new volume claim)."""
        require_names(namespace)
        return self._call(self.core.create_namespaced_persistent_volume_claim, namespace, body,
                          namespace=namespace)

    def list_storage_classes(self) -> list[Obj]:
        return self._items(k8s.StorageV1Api(self.api_client).list_storage_class)

    def list_network_policies(self, namespace: str) -> list[Obj]:
        return self._items(self.custom.list_namespaced_custom_object, "networking.k8s.io", "v1",
                           namespace, "networkpolicies", namespace=namespace)

    def list_secret_names(self, namespace: str, secret_type: str) -> list[str]:
        """Names of the project's Secrets of one type (`kubernetes.io/dockerconfigjson`);
        what they hold is not kept."""
        items = self._items(self.core.list_namespaced_secret, namespace, namespace=namespace,
                            field_selector=f"type={secret_type}")
        return [str((item.get("metadata") or {}).get("name", "")) for item in items]

    def list_secret_keys(self, namespace: str) -> dict[str, list[str]]:
        """The project's Secrets and the names of their keys; the values are dropped as
        soon as they are read, never kept nor shown."""
        items = self._items(self.core.list_namespaced_secret, namespace, namespace=namespace)
        return {str((item.get("metadata") or {}).get("name", "")):
                sorted(str(k) for k in (item.get("data") or {}))
                for item in items}

    def list_configmap_keys(self, namespace: str) -> dict[str, list[str]]:
        """The project's ConfigMaps and the names of their keys (text and binary)."""
        items = self._items(self.core.list_namespaced_config_map, namespace,
                            namespace=namespace)
        return {str((item.get("metadata") or {}).get("name", "")):
                sorted({str(k) for k in (item.get("data") or {})}
                       | {str(k) for k in (item.get("binaryData") or {})})
                for item in items}

    def namespace_uid(self, name: str) -> str:
        """The uid of a namespace ("" when it has none)."""
        require_names(name)
        return str((self._call(self.core.read_namespace, name).get("metadata") or {})
                   .get("uid") or "")

    def list_nodes(self) -> list[Obj]:
        return self._items(self.core.list_node)

    def list_priority_classes(self) -> list[Obj]:
        return self._items(self.custom.list_cluster_custom_object, "scheduling.k8s.io", "v1",
                           "priorityclasses")

    # -- the cluster overview (administrators: cluster-wide reads) -------------------------------
    def list_quotas_everywhere(self) -> list[Obj]:
        """The ResourceQuotas of every namespace."""
        return self._items(self.core.list_resource_quota_for_all_namespaces)
