"""The resource types simcluster serves, as discovery documents describe them.

One table drives routing, discovery, RBAC names, error messages and watch
routing, so adding a type is one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
READ_VERBS = ["get", "list", "watch"]

# Fields every type may be selected on; the API server adds these to each type.
COMMON_FIELDS = ("metadata.name", "metadata.namespace")


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True
    verbs: tuple[str, ...] = tuple(ALL_VERBS)
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    # field selectors beyond metadata.name/namespace, as the real server allows them
    field_labels: tuple[str, ...] = ()
    # True for types whose objects the real server returns with kind/apiVersion in
    # list items (custom resources); built-in list items carry neither.
    custom: bool = False
    # Only whole-document creation (SelfSubjectAccessReview and friends).
    virtual: bool = False
    singular_override: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def singular(self) -> str:
        return self.singular_override or self.kind.lower()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """`mpijobs.kubeflow.org`, `pods`: the name used in error messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    def allowed_fields(self) -> tuple[str, ...]:
        return COMMON_FIELDS + self.field_labels


def _core(plural: str, kind: str, **kw) -> ResourceType:
    return ResourceType("", "v1", plural, kind, **kw)


POD_FIELDS = (
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
)
EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)

RESOURCE_TYPES: list[ResourceType] = [
    _core("namespaces", "Namespace", namespaced=False, short_names=("ns",),
          subresources=("status",), field_labels=("status.phase",)),
    _core("nodes", "Node", namespaced=False, short_names=("no",), subresources=("status",),
          field_labels=("spec.unschedulable",)),
    _core("pods", "Pod", short_names=("po",), categories=("all",),
          subresources=("status", "log", "eviction"), field_labels=POD_FIELDS),
    _core("events", "Event", short_names=("ev",), field_labels=EVENT_FIELDS),
    _core("services", "Service", short_names=("svc",), categories=("all",),
          subresources=("status",)),
    _core("configmaps", "ConfigMap", short_names=("cm",)),
    _core("secrets", "Secret", field_labels=("type",)),
    _core("serviceaccounts", "ServiceAccount", short_names=("sa",)),
    _core("persistentvolumeclaims", "PersistentVolumeClaim", short_names=("pvc",),
          subresources=("status",)),
    _core("resourcequotas", "ResourceQuota", short_names=("quota",), subresources=("status",)),
    _core("limitranges", "LimitRange", short_names=("limits",)),
    ResourceType("batch", "v1", "jobs", "Job", categories=("all",), subresources=("status",)),
    ResourceType("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy",
                 short_names=("netpol",)),
    ResourceType("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass",
                 namespaced=False, short_names=("pc",)),
    ResourceType("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False,
                 short_names=("sc",)),
    # leader election of controllers (and of the dashboard's runwatcher replicas)
    ResourceType("coordination.k8s.io", "v1", "leases", "Lease"),
    ResourceType("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    ResourceType("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    ResourceType("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole",
                 namespaced=False),
    ResourceType("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding",
                 namespaced=False),
    ResourceType("authorization.k8s.io", "v1", "selfsubjectaccessreviews",
                 "SelfSubjectAccessReview", namespaced=False, verbs=("create",), virtual=True),
    ResourceType("authorization.k8s.io", "v1", "subjectaccessreviews",
                 "SubjectAccessReview", namespaced=False, verbs=("create",), virtual=True),
    ResourceType("authorization.k8s.io", "v1", "selfsubjectrulesreviews",
                 "SelfSubjectRulesReview", namespaced=False, verbs=("create",), virtual=True),
    ResourceType("authentication.k8s.io", "v1", "selfsubjectreviews",
                 "SelfSubjectReview", namespaced=False, verbs=("create",), virtual=True),
    ResourceType("kubeflow.org", "v2beta1", "mpijobs", "MPIJob", subresources=("status",),
                 custom=True),
    ResourceType("kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", subresources=("status",),
                 custom=True),
    ResourceType("kubeflow.org", "v1", "tfjobs", "TFJob", subresources=("status",), custom=True),
    # OpenShift
    ResourceType("user.openshift.io", "v1", "users", "User", namespaced=False,
                 verbs=("get", "list", "watch"), virtual=True),
    ResourceType("user.openshift.io", "v1", "groups", "Group", namespaced=False,
                 verbs=tuple(ALL_VERBS)),
    ResourceType("project.openshift.io", "v1", "projects", "Project", namespaced=False,
                 verbs=("get", "list", "watch"), virtual=True),
    ResourceType("oauth.openshift.io", "v1", "oauthclients", "OAuthClient", namespaced=False),
    ResourceType("oauth.openshift.io", "v1", "oauthaccesstokens", "OAuthAccessToken",
                 namespaced=False, verbs=("delete", "get", "list", "watch")),
    ResourceType("oauth.openshift.io", "v1", "useroauthaccesstokens", "UserOAuthAccessToken",
                 namespaced=False, verbs=("delete", "get", "list", "watch"), virtual=True),
]

# Optional APIs a scenario may switch on (`apis:` in the scenario file), as a real
# cluster has them only when the add-on is installed.
OPTIONAL_RESOURCE_TYPES: dict[str, list[ResourceType]] = {
    "kueue": [
        ResourceType("kueue.x-k8s.io", "v1beta1", "localqueues", "LocalQueue",
                     short_names=("queue", "queues", "lq"), subresources=("status",), custom=True),
        ResourceType("kueue.x-k8s.io", "v1beta1", "clusterqueues", "ClusterQueue",
                     namespaced=False, short_names=("cq",), subresources=("status",), custom=True),
        ResourceType("kueue.x-k8s.io", "v1beta1", "resourceflavors", "ResourceFlavor",
                     namespaced=False, short_names=("flavor", "flavors", "rf"), custom=True),
        ResourceType("kueue.x-k8s.io", "v1beta1", "workloads", "Workload",
                     short_names=("wl",), subresources=("status",), custom=True),
        ResourceType("kueue.x-k8s.io", "v1beta1", "workloadpriorityclasses",
                     "WorkloadPriorityClass", namespaced=False, custom=True),
        # the visibility API's pending workloads (simcluster/placement/kueue_visibility.py)
        ResourceType("visibility.kueue.x-k8s.io", "v1beta1", "clusterqueues", "ClusterQueue",
                     namespaced=False, verbs=("get",), subresources=("pendingworkloads",),
                     virtual=True),
        ResourceType("visibility.kueue.x-k8s.io", "v1beta1", "localqueues", "LocalQueue",
                     verbs=("get",), subresources=("pendingworkloads",), virtual=True),
    ],
    "trainer": [
        ResourceType("trainer.kubeflow.org", "v1alpha1", "trainjobs", "TrainJob",
                     subresources=("status",), custom=True),
        ResourceType("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes",
                     "ClusterTrainingRuntime", namespaced=False, custom=True),
        ResourceType("trainer.kubeflow.org", "v1alpha1", "trainingruntimes",
                     "TrainingRuntime", custom=True),
    ],
    # what the Trainer builds a TrainJob's pods through (kubernetes-sigs/jobset)
    "jobset": [
        ResourceType("jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet",
                     subresources=("status",), custom=True),
    ],
}


class Registry:
    """Lookup of the resource types a running cluster serves."""

    def __init__(self, optional_apis: list[str] | tuple[str, ...] = ()) -> None:
        types = list(RESOURCE_TYPES)
        for name in optional_apis:
            if name not in OPTIONAL_RESOURCE_TYPES:
                known = ", ".join(sorted(OPTIONAL_RESOURCE_TYPES))
                raise ValueError(f"unknown optional API {name!r}; known: {known}")
            types.extend(OPTIONAL_RESOURCE_TYPES[name])
        self.types = types
        self._by_path = {(t.group, t.version, t.plural): t for t in types}
        self._by_kind: dict[tuple[str, str], ResourceType] = {}
        for t in types:
            self._by_kind[(t.api_version, t.kind)] = t

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_path.get((group, version, plural))

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        return self._by_kind.get((api_version, kind))

    def group_versions(self) -> dict[str, list[str]]:
        """Group name -> its versions, preferred first, core group excluded."""
        out: dict[str, list[str]] = {}
        for t in self.types:
            if t.group and t.version not in out.setdefault(t.group, []):
                out[t.group].append(t.version)
        # kubeflow.org serves v2beta1 (MPIJob) and v1 (PyTorchJob, TFJob); like a real
        # cluster with both operators installed, v1 is preferred for the group.
        for versions in out.values():
            versions.sort(key=_version_priority)
        return out

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [t for t in self.types if t.group == group and t.version == version]


def _version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes version ordering: GA before beta before alpha, higher first."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (3, 0, 0)
    major, stage, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -major, -minor)
