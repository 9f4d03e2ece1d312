"""Kueue as `ClusterClient` reads it: a project's LocalQueues, the Workloads of queued jobs,
the ClusterQueues and their pending Workloads in queue order (the visibility API), and
the WorkloadPriorityClasses; what a cluster without Kueue answers is "none"."""

from __future__ import annotations

from typing import Any

from odh.training import errors
from odh.training.cluster.api import ApiCalls, Obj


class KueueReads(ApiCalls):
    """Kueue's objects (odh/training/queues/ reads them)."""

    def list_local_queues(self, namespace: str) -> list[Obj]:
        """Kueue LocalQueues in a namespace; none when the cluster has no Kueue."""
        try:
            return self._items(self.custom.list_namespaced_custom_object, "kueue.x-k8s.io",
                               "v1beta1", namespace, "localqueues", namespace=namespace)
        except errors.NotFound:
            return []

    # -- a queued job's Workload and where it stands (odh/training/queues/standing.py) ----
    def get_workload(self, namespace: str, name: str) -> Obj:
        return self._call(self.custom.get_namespaced_custom_object, "kueue.x-k8s.io",
                          "v1beta1", namespace, "workloads", name, namespace=namespace)

    def list_workloads(self, namespace: str | None = None) -> list[Obj]:
        """Kueue Workloads of a namespace, or of every namespace (None)."""
        if namespace:
            return self._items(self.custom.list_namespaced_custom_object, "kueue.x-k8s.io",
                               "v1beta1", namespace, "workloads", namespace=namespace)
        return self._items(self.custom.list_cluster_custom_object, "kueue.x-k8s.io",
                           "v1beta1", "workloads")

    def get_local_queue(self, namespace: str, name: str) -> Obj:
        return self._call(self.custom.get_namespaced_custom_object, "kueue.x-k8s.io",
                          "v1beta1", namespace, "localqueues", name, namespace=namespace)

    def get_cluster_queue(self, name: str) -> Obj:
        return self._call(self.custom.get_cluster_custom_object, "kueue.x-k8s.io",
                          "v1beta1", "clusterqueues", name)

    def patch_cluster_queue(self, name: str, patch: Obj) -> Obj:
        """A JSON merge patch of a ClusterQueue (its nominal quota: a cluster
        administrator's); 409 when its resourceVersion is no longer current."""
        return self._call(self.custom.patch_cluster_custom_object, "kueue.x-k8s.io",
                          "v1beta1", "clusterqueues", name, patch,
                          _content_type="application/merge-patch+json")

    def patch_workload(self, namespace: str, name: str, patch: Obj) -> Obj:
        """A JSON merge patch of a Workload (its priority); 409 as above."""
        return self._call(self.custom.patch_namespaced_custom_object, "kueue.x-k8s.io",
                          "v1beta1", namespace, "workloads", name, patch,
                          namespace=namespace, _content_type="application/merge-patch+json")

    def pending_workloads(self, cluster_queue: str = "", namespace: str = "",
                          local_queue: str = "", limit: int = 1000) -> list[Obj]:
        """Kueue's visibility API: the pending Workloads of a ClusterQueue, or of a
        LocalQueue (`namespace`, `local_queue`), in queue order with their positions."""
        if local_queue:
            path = ("/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/{namespace}/"
                    "localqueues/{name}/pendingworkloads")
            params = {"namespace": namespace, "name": local_queue}
        else:
            path = ("/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/{name}/"
                    "pendingworkloads")
            params = {"name": cluster_queue}

        def fetch(_request_timeout: Any = None, _preload_content: bool = False) -> Any:
            request = self.api_client.param_serialize(
                method="GET", resource_path=path, path_params=params,
                query_params=[("limit", str(limit))],
                header_params={"Accept": "application/json"}, auth_settings=["BearerToken"])
            return self.api_client._call_with_legacy_options(
                request, {"200": "object"}, None, False, _request_timeout, True)
        return self._items(fetch, namespace=namespace)

    def list_workload_priority_classes(self) -> list[Obj] | None:
        """Kueue WorkloadPriorityClasses; None when the cluster has no Kueue."""
        try:
            return self._items(self.custom.list_cluster_custom_object, "kueue.x-k8s.io",
                               "v1beta1", "workloadpriorityclasses")
        except errors.NotFound:
            return None

    def list_cluster_queues(self) -> list[Obj] | None:
        """Kueue ClusterQueues; None when the cluster has no Kueue."""
        try:
            return self._items(self.custom.list_cluster_custom_object, "kueue.x-k8s.io",
                               "v1beta1", "clusterqueues")
        except errors.NotFound:
            return None
