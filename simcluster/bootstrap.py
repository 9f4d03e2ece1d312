"""Objects every cluster starts with: system namespaces and the standard roles.

`view`, `edit` and `admin` are aggregated ClusterRoles as on a real cluster; the MPI and
training operators' roles aggregate into them (`rbac.authorization.k8s.io/aggregate-to-*`
labels), so `edit` in a project lets a person create MPIJobs there. OpenShift's
`basic-user` lets any signed-in person read `users/~`, list their projects and ask access
reviews; `system:discovery` opens the discovery documents.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "deletecollection", "patch", "update"]
KUBEFLOW = ["mpijobs", "mpijobs/status", "pytorchjobs", "pytorchjobs/status", "tfjobs",
            "tfjobs/status"]


def _cluster_role(name: str, rules: list[Obj], aggregate_to: list[str] | None = None,
                  aggregation: list[str] | None = None) -> Obj:
    obj: Obj = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": name, "labels": {
                    "kubernetes.io/bootstrapping": "rbac-defaults"}}}
    for target in aggregate_to or []:
        obj["metadata"]["labels"][f"rbac.authorization.k8s.io/aggregate-to-{target}"] = "true"
    if aggregation:
        obj["aggregationRule"] = {"clusterRoleSelectors": [
            {"matchLabels": {f"rbac.authorization.k8s.io/aggregate-to-{a}": "true"}}
            for a in aggregation]}
        obj["rules"] = []
    else:
        obj["rules"] = rules
    return obj


def _binding(name: str, role: str, group: str) -> Obj:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": {
                "kubernetes.io/bootstrapping": "rbac-defaults"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                          "name": group}]}


def bootstrap_objects() -> list[Obj]:
    objects: list[Obj] = []
    for ns in ("default", "kube-system", "kube-public", "openshift-monitoring"):
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    objects += [
        _cluster_role("cluster-admin", [
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
            {"nonResourceURLs": ["*"], "verbs": ["*"]},
        ]),
        _cluster_role("admin", [], aggregation=["admin"]),
        _cluster_role("edit", [], aggregate_to=["admin"], aggregation=["edit"]),
        _cluster_role("view", [], aggregate_to=["edit"], aggregation=["view"]),
        _cluster_role("system:aggregate-to-view", [
            {"apiGroups": [""], "resources": [
                "configmaps", "endpoints", "persistentvolumeclaims",
                "persistentvolumeclaims/status", "pods", "pods/log", "pods/status",
                "replicationcontrollers", "services", "services/status", "serviceaccounts",
                "events", "limitranges", "resourcequotas", "resourcequotas/status",
                "namespaces", "namespaces/status"], "verbs": READ},
            {"apiGroups": ["batch"], "resources": ["jobs", "jobs/status", "cronjobs"],
             "verbs": READ},
            {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"],
             "verbs": READ},
            {"apiGroups": ["project.openshift.io"], "resources": ["projects"],
             "verbs": ["get"]},
        ], aggregate_to=["view"]),
        _cluster_role("system:aggregate-to-edit", [
            {"apiGroups": [""], "resources": [
                "pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy",
                "pods/eviction", "configmaps", "endpoints", "persistentvolumeclaims",
                "replicationcontrollers", "secrets", "serviceaccounts", "services"],
             "verbs": WRITE},
            {"apiGroups": [""], "resources": ["secrets"], "verbs": READ},
            {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": WRITE},
            {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"],
             "verbs": WRITE},
        ], aggregate_to=["edit"]),
        _cluster_role("system:aggregate-to-admin", [
            {"apiGroups": ["rbac.authorization.k8s.io"],
             "resources": ["roles", "rolebindings"], "verbs": READ + WRITE},
            {"apiGroups": ["authorization.k8s.io"], "resources": ["localsubjectaccessreviews"],
             "verbs": ["create"]},
        ], aggregate_to=["admin"]),
        # What the Kubeflow MPI and training operators install.
        _cluster_role("kubeflow-training-view", [
            {"apiGroups": ["kubeflow.org"], "resources": KUBEFLOW, "verbs": READ},
        ], aggregate_to=["view"]),
        _cluster_role("kubeflow-training-edit", [
            {"apiGroups": ["kubeflow.org"], "resources": KUBEFLOW, "verbs": WRITE},
        ], aggregate_to=["edit"]),
        _cluster_role("kueue-batch-user-role", [
            {"apiGroups": ["kueue.x-k8s.io"], "resources": ["localqueues", "localqueues/status"],
             "verbs": READ},
            # upstream's workload-viewer-role (label rbac.kueue.x-k8s.io/batch-user)
            {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads", "workloads/status"],
             "verbs": READ},
            # upstream's pending-workloads-lq-viewer-role, aggregated into it
            {"apiGroups": ["visibility.kueue.x-k8s.io"],
             "resources": ["localqueues/pendingworkloads"], "verbs": READ},
        ], aggregate_to=["view"]),
        _cluster_role("basic-user", [
            {"apiGroups": ["user.openshift.io", ""], "resources": ["users"],
             "resourceNames": ["~"], "verbs": ["get"]},
            {"apiGroups": ["project.openshift.io", ""], "resources": ["projects"],
             "verbs": ["list", "watch"]},
            {"apiGroups": ["authorization.k8s.io"],
             "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
             "verbs": ["create"]},
            {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"],
             "verbs": ["create"]},
            {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"],
             "verbs": READ},
        ]),
        _cluster_role("system:discovery", [
            {"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                 "/openapi", "/openapi/*", "/readyz", "/version",
                                 "/version/"], "verbs": ["get"]},
        ]),
        _cluster_role("system:oauth-token-deleter", [
            {"apiGroups": ["oauth.openshift.io"], "resources": ["useroauthaccesstokens"],
             "verbs": ["get", "list", "watch", "delete"]},
        ]),
        _binding("basic-users", "basic-user", "system:authenticated"),
        _binding("system:discovery", "system:discovery", "system:authenticated"),
        _binding("system:oauth-token-deleters", "system:oauth-token-deleter",
                 "system:authenticated:oauth"),
        {"apiVersion": "oauth.openshift.io/v1", "kind": "OAuthClient",
         "metadata": {"name": "openshift-challenging-client"},
         "redirectURIs": ["/oauth/token/implicit"], "grantMethod": "auto",
         "respondWithChallenges": True},
        # `oc login --web`'s public client: no secret (PKCE binds the code), loopback
        # redirect URIs on any port (RFC 8252)
        {"apiVersion": "oauth.openshift.io/v1", "kind": "OAuthClient",
         "metadata": {"name": "openshift-cli-client"},
         "redirectURIs": ["http://127.0.0.1/callback", "http://[::1]/callback"],
         "grantMethod": "auto"},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "system-cluster-critical"}, "value": 2000000000,
         "globalDefault": False, "preemptionPolicy": "PreemptLowerPriority",
         "description": "Used for system critical pods that must run in the cluster."},
    ]
    return objects
