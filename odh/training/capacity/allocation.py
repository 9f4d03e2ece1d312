"""The cluster's capacity and use: what the nodes can allocate against what the pods bound
to them request (pods not yet finished; requests as the scheduler counts them), in all and
per GPU model (the node label `nvidia.com/gpu.product`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from odh.training.capacity.nodes import NodeSize, free_sizes, node_sizes
from odh.training.capacity.shares import Share
from odh.training.i18n import _
from odh.training.manifests.totals import ZERO, amount, number
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import GPU_RESOURCE, container_requests

Obj = dict[str, Any]

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
TERMINAL_PHASES = ("Succeeded", "Failed")
COMPUTE = ("cpu", "memory", GPU_RESOURCE)


# -- pods ---------------------------------------------------------------------------------------
# A pod's requests by (uid, resourceVersion): the overview adds up every pod of the cluster
# at each visit, and parsing their quantities was most of its time (a changed pod has
# another resourceVersion). Bounded: emptied when full.
_REQUESTS: dict[tuple[str, str], dict[str, Decimal]] = {}
_REQUESTS_MAX = 200_000


def pod_requests(pod: Obj) -> dict[str, Decimal]:
    """What a pod holds on its node, as the scheduler counts it: the containers' requests
    (falling back to limits) added up, an init container's where it is larger (they run one
    at a time, before the others), plus the pod overhead. Do not change the answer."""
    meta = as_dict(pod.get("metadata"))
    key = (str(meta.get("uid") or ""), str(meta.get("resourceVersion") or ""))
    if not all(key):
        return _pod_requests(pod)
    found = _REQUESTS.get(key)
    if found is None:
        if len(_REQUESTS) >= _REQUESTS_MAX:
            _REQUESTS.clear()
        found = _REQUESTS[key] = _pod_requests(pod)
    return found


def _pod_requests(pod: Obj) -> dict[str, Decimal]:
    spec = as_dict(pod.get("spec"))
    total: dict[str, Decimal] = {}
    for container in as_list(spec.get("containers")):
        for name, value in container_requests(as_dict(container)).items():
            total[name] = total.get(name, ZERO) + value
    for container in as_list(spec.get("initContainers")):
        for name, value in container_requests(as_dict(container)).items():
            total[name] = max(total.get(name, ZERO), value)
    for name, raw in as_dict(spec.get("overhead")).items():
        if name in COMPUTE:
            total[name] = total.get(name, ZERO) + amount(raw)
    return total


def held_part(pod: Obj) -> Obj:
    """Only what `Holdings` reads of a pod (its uid, namespace and resourceVersion; node;
    containers' resources; overhead; phase): what the watch hub keeps of the pods of no
    training job, which the admin overview adds up and nothing else reads."""
    meta, spec = as_dict(pod.get("metadata")), as_dict(pod.get("spec"))

    def resources(containers: Any) -> list[Obj]:
        return [{"resources": as_dict(c).get("resources") or {}} for c in as_list(containers)]

    return {"metadata": {k: meta[k] for k in ("uid", "name", "namespace", "resourceVersion")
                         if k in meta},
            "spec": {"nodeName": spec.get("nodeName"),
                     "containers": resources(spec.get("containers")),
                     "initContainers": resources(spec.get("initContainers")),
                     "overhead": spec.get("overhead") or {}},
            "status": {"phase": get_path(pod, ["status", "phase"])}}


def holds_node(pod: Obj) -> bool:
    """A pod bound to a node keeps its requests there until it succeeds or fails."""
    return bool(get_path(pod, ["spec", "nodeName"])) and \
        get_path(pod, ["status", "phase"]) not in TERMINAL_PHASES


def namespace_of(obj: Obj) -> str:
    return str(get_path(obj, ["metadata", "namespace"], "") or "")


class Holdings:
    """What pods hold on nodes (`pod_requests` of each pod that `holds_node`), added up by
    (node, namespace): the capacity and the projects' GPUs in use are read from these
    sums. Made from a list of pods, or kept up to date pod by pod (`put`, `drop`), as the
    watch hub does for the pods it indexes, so that an overview of 50,000 pods adds up a
    few hundred sums instead of every pod."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[tuple[str, str], dict[str, Decimal]]] = {}  # pod uid
        self._sums: dict[tuple[str, str], dict[str, Decimal]] = {}

    @classmethod
    def of(cls, pods: Iterable[Obj]) -> Holdings:
        holdings = cls()
        for i, pod in enumerate(pods):
            holdings.put(pod, key=f"#{i}")
        return holdings

    def put(self, pod: Obj, key: str | None = None) -> None:
        """Take a pod as it is now (its previous version, put under the same uid, goes)."""
        key = key or str(as_dict(pod.get("metadata")).get("uid") or "")
        self.drop(key)
        if not holds_node(pod):
            return
        where = (str(get_path(pod, ["spec", "nodeName"])), namespace_of(pod))
        requests = pod_requests(pod)
        self._held[key] = (where, requests)
        self._add(where, requests, 1)

    def drop(self, key: str) -> None:
        """Forget a pod (by uid) that was put."""
        found = self._held.pop(key, None)
        if found is not None:
            self._add(*found, -1)

    def _add(self, where: tuple[str, str], requests: dict[str, Decimal], sign: int) -> None:
        sums = self._sums.setdefault(where, {})
        for name, value in requests.items():
            sums[name] = sums.get(name, ZERO) + sign * value
        if sign < 0 and not any(sums.values()):
            del self._sums[where]

    def copy(self) -> Holdings:
        """The sums as they are now (to add more pods to, or read, elsewhere)."""
        other = Holdings()
        other._sums = {where: dict(sums) for where, sums in self._sums.items()}
        return other

    def plus(self, pods: Iterable[Obj]) -> Holdings:
        """A copy with these pods added."""
        other = self.copy()
        for i, pod in enumerate(pods):
            other.put(pod, key=f"+{i}")
        return other

    def by_node(self) -> dict[str, dict[str, Decimal]]:
        nodes: dict[str, dict[str, Decimal]] = defaultdict(dict)
        for (node, _namespace), sums in self._sums.items():
            held = nodes[node]
            for name, value in sums.items():
                held[name] = held.get(name, ZERO) + value
        return nodes

    def by_namespace(self, resource: str) -> dict[str, Decimal]:
        totals: dict[str, Decimal] = defaultdict(lambda: ZERO)
        for (_node, namespace), sums in self._sums.items():
            totals[namespace] += sums.get(resource, ZERO)
        return totals


def holdings_of(pods: list[Obj] | Holdings) -> Holdings:
    return pods if isinstance(pods, Holdings) else Holdings.of(pods)


# -- capacity -----------------------------------------------------------------------------------
@dataclass
class ResourceUse(Share):
    """One resource of the whole cluster (or of one GPU model): allocatable vs requested."""

    resource: str  # "cpu", "memory" or "nvidia.com/gpu"
    allocatable: Decimal = ZERO
    requested: Decimal = ZERO

    def _used_of(self) -> tuple[Decimal, Decimal]:
        return self.requested, self.allocatable

    @property
    def free(self) -> Decimal:
        return max(self.allocatable - self.requested, ZERO)

    # bare figures, as the tables show them: "11", "0.5", "3.5Ti"
    @property
    def requested_number(self) -> str:
        return number(self.resource, self.requested)

    @property
    def allocatable_number(self) -> str:
        return number(self.resource, self.allocatable)

    @property
    def free_number(self) -> str:
        return number(self.resource, self.free)

    @property
    def title(self) -> str:
        return {"cpu": _("CPUs"), "memory": _("Memory"), GPU_RESOURCE: _("GPUs")}[self.resource]

    @property
    def text(self) -> str:
        """"11 of 32 GPUs requested (34%)"."""
        if self.resource == GPU_RESOURCE:
            template = _("%(requested)s of %(allocatable)s GPUs requested (%(percent)d%%)")
        elif self.resource == "cpu":
            template = _("%(requested)s of %(allocatable)s CPUs requested (%(percent)d%%)")
        else:
            template = _("%(requested)s of %(allocatable)s of memory requested (%(percent)d%%)")
        return template % {"requested": number(self.resource, self.requested),
                           "allocatable": number(self.resource, self.allocatable),
                           "percent": self.percent}


@dataclass
class GpuModel(ResourceUse):
    """The GPUs of one model ("NVIDIA-A100-SXM4-80GB"), on the nodes that have it."""

    product: str = ""
    nodes: int = 0

    @property
    def label(self) -> str:
        return self.product or _("Unknown model")


@dataclass
class Capacity:
    nodes: int
    gpu_nodes: int
    cpu: ResourceUse
    memory: ResourceUse
    gpus: ResourceUse
    gpu_models: list[GpuModel]

    @property
    def resources(self) -> list[ResourceUse]:
        return [self.gpus, self.cpu, self.memory]


def cluster_capacity(nodes: list[Obj], pods: list[Obj] | Holdings) -> Capacity:
    """Allocatable resources of the nodes against the requests of the pods bound to them
    (the pods, or their `Holdings`)."""
    sizes = node_sizes(nodes)
    by_node = holdings_of(pods).by_node()
    cpu, memory, gpu = ResourceUse("cpu"), ResourceUse("memory"), ResourceUse(GPU_RESOURCE)
    models: dict[str, GpuModel] = {}
    for size in sizes:
        held = by_node.get(size.name, {})
        cpu.allocatable += size.cpu
        cpu.requested += held.get("cpu", ZERO)
        memory.allocatable += size.memory
        memory.requested += held.get("memory", ZERO)
        gpu.allocatable += size.gpus
        gpu.requested += held.get(GPU_RESOURCE, ZERO)
        if size.gpus > 0 or held.get(GPU_RESOURCE):
            product = str(size.labels.get(GPU_PRODUCT_LABEL, ""))
            model = models.setdefault(product, GpuModel(GPU_RESOURCE, product=product))
            model.nodes += 1
            model.allocatable += size.gpus
            model.requested += held.get(GPU_RESOURCE, ZERO)
    ordered = sorted(models.values(), key=lambda m: (-m.allocatable, m.product))
    return Capacity(nodes=len(sizes), gpu_nodes=sum(m.nodes for m in ordered), cpu=cpu,
                    memory=memory, gpus=gpu, gpu_models=ordered)


def room_now(nodes: list[Obj], pods: list[Obj] | Holdings) -> list[NodeSize]:
    """Each node's room for new pods now (allocatable less what its pods hold; a cordoned
    node, `spec.unschedulable`, has none): what `fit.check_fit` places a job's pods on."""
    cordoned = {str(get_path(n, ["metadata", "name"], "")) for n in nodes
                if get_path(n, ["spec", "unschedulable"])}
    return free_sizes(node_sizes(nodes), holdings_of(pods).by_node(), cordoned)
