"""The scheduler's decisions as pure functions: what a pod needs, which nodes it may run
on, the "0/N nodes are available" message, and which feasible node wins.

Filters run in the order of kube-scheduler's default profile and a node is rejected by the
first filter that fails, so the reasons in a FailedScheduling message are the ones the real
scheduler would count:

| filter | reason(s) | preemption would help? |
|---|---|---|
| NodeUnschedulable | `node(s) were unschedulable` | no |
| TaintToleration | `node(s) had untolerated taint {key: value}` | no |
| NodeAffinity | `node(s) didn't match Pod's node affinity/selector` | no |
| NodeResourcesFit | `Too many pods`, `Insufficient <resource>` (cpu, memory, ...) | yes* |

(*) unless the pod asks for more than the node has in all.

Before the filters, the VolumeBinding plugin's PreFilter refuses a pod whose
`persistentVolumeClaim` volume names a claim that does not exist in its namespace, on every
node at once (`persistentvolumeclaim "<claim>" not found`, preemption not helpful).

Preemption is not simulated: every pod has priority 0 in practice, so the message says no
victims were found where resources are short, and that preemption is not helpful where the
pod asks for more than the node has in all (kube-scheduler 1.31+ marks such a shortage
UnschedulableAndUnresolvable).

Scoring (deterministic, documented in simcluster's README): a pod that asks for GPUs goes to
the feasible node whose GPUs would be the most allocated afterwards (binpacking keeps whole
GPU nodes free for large jobs); any other pod prefers nodes without GPUs, then the node
whose CPU and memory would be the least allocated (spreading). Ties go to the node name.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from simcluster import quantity

Obj = dict[str, Any]
Resources = dict[str, int]  # resource -> exact milli-units, quicker to add than fractions

GPU = "nvidia.com/gpu"
TERMINAL = ("Succeeded", "Failed")
# order in which NodeResourcesFit reports shortages
_RESOURCE_ORDER = ("cpu", "memory", "ephemeral-storage")

UNSCHEDULABLE = "node(s) were unschedulable"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
TOO_MANY_PODS = "Too many pods"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NO_NODES = "no nodes available to schedule pods"


def _parse(value: Any) -> int:
    if type(value) is str:  # the common case, and a handful of distinct strings
        return _parse_text(value)
    try:
        return math.ceil(quantity.parse(value) * 1000)
    except quantity.QuantityError:
        return 0


@functools.lru_cache(maxsize=4096)
def _parse_text(value: str) -> int:
    try:
        return math.ceil(quantity.parse(value) * 1000)
    except quantity.QuantityError:
        return 0


def milli(value: Any) -> int:
    """A quantity in the milli-units the scheduler counts in ("1" -> 1000)."""
    return _parse(value)


def pod_requests(pod: Obj) -> Resources:
    """What a pod asks for: per container requests (falling back to limits), the init
    containers' largest need where that is bigger, plus overhead."""
    spec = pod.get("spec") or {}

    def container_needs(c: Obj) -> Resources:
        res = c.get("resources") or {}
        need = {k: _parse(v) for k, v in (res.get("limits") or {}).items()}
        need.update({k: _parse(v) for k, v in (res.get("requests") or {}).items()})
        return need

    total: Resources = {}
    for c in spec.get("containers") or []:
        for k, v in container_needs(c).items():
            total[k] = total.get(k, 0) + v
    for c in spec.get("initContainers") or []:
        for k, v in container_needs(c).items():
            total[k] = max(total.get(k, 0), v)
    for k, v in (spec.get("overhead") or {}).items():
        total[k] = total.get(k, 0) + _parse(v)
    return {k: v for k, v in total.items() if v > 0}


def occupies_node(pod: Obj) -> bool:
    """A bound pod holds its node's resources until it is terminal or gone."""
    return bool((pod.get("spec") or {}).get("nodeName")) and \
        (pod.get("status") or {}).get("phase") not in TERMINAL


@dataclass
class NodeInfo:
    name: str
    node: Obj
    allocatable: Resources
    requested: Resources = field(default_factory=dict)
    pods: int = 0

    @classmethod
    def of(cls, node: Obj) -> NodeInfo:
        alloc = {k: _parse(v) for k, v in ((node.get("status") or {}).get("allocatable")
                                          or {}).items()}
        return cls(node["metadata"]["name"], node, alloc)

    def add(self, requests: Resources) -> None:
        for k, v in requests.items():
            self.requested[k] = self.requested.get(k, 0) + v
        self.pods += 1

    def free(self, resource: str) -> int:
        return self.allocatable.get(resource, 0) - self.requested.get(resource, 0)

    @property
    def gpus(self) -> int:
        return self.allocatable.get(GPU, 0)


# -- filters ------------------------------------------------------------------------------------
def _tolerates(toleration: Obj, taint: Obj) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    return op == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def _untolerated_taint(pod: Obj, node: Obj) -> Obj | None:
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(_tolerates(t, taint) for t in tolerations):
            return taint
    return None


def _match_expression(expr: Obj, labels: dict[str, str]) -> bool:
    key, op = expr.get("key", ""), expr.get("operator", "")
    values = [str(v) for v in expr.get("values") or []]
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt"):
        try:
            have, want = int(labels[key]), int(values[0])
        except (KeyError, IndexError, ValueError):
            return False
        return have > want if op == "Gt" else have < want
    return False


def matches_affinity(pod: Obj, node: Obj) -> bool:
    """nodeSelector and requiredDuringSchedulingIgnoredDuringExecution node affinity."""
    spec = pod.get("spec") or {}
    labels = node["metadata"].get("labels") or {}
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k) != str(v):
            return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return True
    terms = required.get("nodeSelectorTerms") or []
    fields = {"metadata.name": node["metadata"]["name"]}
    for term in terms:  # terms are ORed, expressions within a term ANDed
        exprs = term.get("matchExpressions") or []
        field_exprs = term.get("matchFields") or []
        if not exprs and not field_exprs:
            continue
        if all(_match_expression(e, labels) for e in exprs) and \
                all(_match_expression(e, fields) for e in field_exprs):
            return True
    return False


def _tolerates_unschedulable(pod: Obj) -> bool:
    taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    return any(_tolerates(t, taint) for t in (pod.get("spec") or {}).get("tolerations") or [])


def _resource_shortages(requests: Resources, info: NodeInfo) -> list[str]:
    reasons = []
    if (info.pods + 1) * 1000 > info.allocatable.get("pods", 110_000):
        reasons.append(TOO_MANY_PODS)
    names = [r for r in _RESOURCE_ORDER if r in requests] + sorted(
        r for r in requests if r not in _RESOURCE_ORDER)
    for r in names:
        if requests[r] > info.free(r):
            reasons.append(f"Insufficient {r}")
    return reasons


@dataclass
class Verdict:
    """Why one node cannot take the pod; `resolvable` if freeing resources would help."""
    reasons: list[str]
    resolvable: bool


def filter_node(pod: Obj, requests: Resources, info: NodeInfo) -> Verdict | None:
    """None when the pod fits the node, else the first failing filter's reasons."""
    node = info.node
    if (node.get("spec") or {}).get("unschedulable") and not _tolerates_unschedulable(pod):
        return Verdict([UNSCHEDULABLE], False)
    taint = _untolerated_taint(pod, node)
    if taint is not None:
        return Verdict([f"node(s) had untolerated taint {{{taint.get('key', '')}: "
                        f"{taint.get('value', '')}}}"], False)
    if not matches_affinity(pod, node):
        return Verdict([AFFINITY], False)
    shortages = _resource_shortages(requests, info)
    if shortages:
        # kube-scheduler 1.31+ (NodeResourcesFit's InsufficientResource.Unresolvable): a
        # pod asking for more than the node has in all cannot be helped by preemption
        too_big = any(amount > info.allocatable.get(r, 0) for r, amount in requests.items())
        return Verdict(shortages, not too_big)
    return None


# -- choosing -----------------------------------------------------------------------------------
def _fraction_after(info: NodeInfo, requests: Resources, resource: str) -> float:
    alloc = info.allocatable.get(resource, 0)
    if alloc <= 0:
        return 0.0
    return (info.requested.get(resource, 0) + requests.get(resource, 0)) / alloc


def score_key(requests: Resources, info: NodeInfo) -> tuple:
    """Sort key: the smallest key is the best node."""
    if requests.get(GPU, 0) > 0:
        return (-_fraction_after(info, requests, GPU),
                _fraction_after(info, requests, "cpu"), info.name)
    spread = (_fraction_after(info, requests, "cpu")
              + _fraction_after(info, requests, "memory")) / 2
    return (1 if info.gpus > 0 else 0, spread, info.name)


def choose(pod: Obj, requests: Resources,
           nodes: Iterable[NodeInfo]) -> tuple[NodeInfo | None, dict[str, Verdict]]:
    feasible: list[NodeInfo] = []
    rejected: dict[str, Verdict] = {}
    for info in nodes:
        verdict = filter_node(pod, requests, info)
        if verdict is None:
            feasible.append(info)
        else:
            rejected[info.name] = verdict
    if not feasible:
        return None, rejected
    return min(feasible, key=lambda i: score_key(requests, i)), rejected


def _histogram(counts: dict[str, int]) -> str:
    return ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))


def claim_names(pod: Obj) -> list[str]:
    """The PersistentVolumeClaims a pod's volumes name, in order."""
    names = []
    for v in (pod.get("spec") or {}).get("volumes") or []:
        claim = (v.get("persistentVolumeClaim") or {}) if isinstance(v, dict) else {}
        if claim.get("claimName"):
            names.append(str(claim["claimName"]))
    return names


def missing_claim_message(pod: Obj, total_nodes: int, claim: str) -> str:
    """kube-scheduler's message when VolumeBinding's PreFilter finds a claim missing."""
    if total_nodes == 0:
        return NO_NODES
    message = f'0/{total_nodes} nodes are available: persistentvolumeclaim "{claim}" not found.'
    if (pod.get("spec") or {}).get("preemptionPolicy") == "Never":
        return message + " preemption: not eligible due to preemptionPolicy=Never."
    return message + f" preemption: 0/{total_nodes} nodes are available: {total_nodes} " \
        f"{NOT_HELPFUL}."


def failure_message(pod: Obj, total_nodes: int, rejected: dict[str, Verdict]) -> str:
    """The FailedScheduling message of kube-scheduler 1.30+, preemption suffix included."""
    if total_nodes == 0:
        return NO_NODES
    counts: dict[str, int] = {}
    preemption: dict[str, int] = {}
    for verdict in rejected.values():
        for reason in verdict.reasons:
            counts[reason] = counts.get(reason, 0) + 1
        why = NO_VICTIMS if verdict.resolvable else NOT_HELPFUL
        preemption[why] = preemption.get(why, 0) + 1
    message = f"0/{total_nodes} nodes are available: {_histogram(counts)}."
    if (pod.get("spec") or {}).get("preemptionPolicy") == "Never":
        return message + " preemption: not eligible due to preemptionPolicy=Never."
    return message + f" preemption: 0/{total_nodes} nodes are available: " \
        f"{_histogram(preemption)}."
