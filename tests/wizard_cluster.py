"""The cluster as its admin sees it, for the wizard's view and browser tests: MPIJobs to
look at and clean up, and the LimitRange default the wizard asks an administrator for."""

from __future__ import annotations


class ClusterJobs:
    """MPIJobs (or the jobs of another API: `group`, `version`, `plural`) as the cluster
    admin sees them; jobs `track`ed are deleted after the test."""

    def __init__(self, api, group: str = "kubeflow.org", version: str = "v2beta1",
                 plural: str = "mpijobs") -> None:
        from kubernetes import client as k8s

        self.api = (group, version, plural)
        self.custom = k8s.CustomObjectsApi(api)
        self.core = k8s.CoreV1Api(api)
        self.made: list[tuple[str, str]] = []

    def get(self, namespace: str, name: str) -> dict:
        group, version, plural = self.api
        return self.custom.get_namespaced_custom_object(group, version, namespace, plural,
                                                        name)

    def names(self, namespace: str) -> set[str]:
        group, version, plural = self.api
        items = self.custom.list_namespaced_custom_object(group, version, namespace,
                                                          plural)["items"]
        return {i["metadata"]["name"] for i in items}

    def track(self, namespace: str, name: str) -> None:
        self.made.append((namespace, name))

    def cleanup(self) -> None:
        from kubernetes.client.rest import ApiException

        for namespace, name in self.made:
            try:
                group, version, plural = self.api
                self.custom.delete_namespaced_custom_object(
                    group, version, namespace, plural, name,
                    body={"propagationPolicy": "Background"})
            except ApiException as e:
                if e.status != 404:
                    raise


def give_limit_range_a_gpu_default(api, namespace: str = "team-nlp"):
    """What the wizard asks an administrator to do when a LimitRange bounds nvidia.com/gpu
    without a default (the demo's team-nlp): a default of 0, so a Launcher without GPUs is
    admitted. Returns a function that puts the LimitRange back as it was."""
    import copy
    import json

    from kubernetes import client as k8s

    core = k8s.CoreV1Api(api)
    name = "container-defaults"
    original = json.loads(core.read_namespaced_limit_range(name, namespace,
                                                           _preload_content=False).data)
    changed = copy.deepcopy(original)
    touched = False
    for item in changed["spec"]["limits"]:
        if "nvidia.com/gpu" in (item.get("max") or {}) and \
                "nvidia.com/gpu" not in (item.get("default") or {}):
            item.setdefault("default", {})["nvidia.com/gpu"] = "0"
            touched = True
    if not touched:
        return lambda: None

    def put(body: dict) -> None:
        current = json.loads(core.read_namespaced_limit_range(name, namespace,
                                                              _preload_content=False).data)
        body = {"apiVersion": "v1", "kind": "LimitRange", "spec": body["spec"],
                "metadata": {"name": name, "namespace": namespace,
                             "resourceVersion": current["metadata"]["resourceVersion"]}}
        core.replace_namespaced_limit_range(name, namespace, body)

    put(changed)
    return lambda: put(original)
