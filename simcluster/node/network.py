"""Whether the network lets one pod reach another: NetworkPolicies, as a CNI enforces them.

simcluster has no packets. The MPI launcher asks, before it starts the ranks, whether its
ssh connections to the workers (TCP port 22) would get through (training.MpiLauncher). The
answer follows the NetworkPolicy rules of networking.k8s.io/v1:

- a policy *selects* the pods of its namespace that its `podSelector` matches (`{}`
  selects every pod); it governs their ingress when its `policyTypes` include `Ingress`,
  or, without `policyTypes`, always (the API server defaults every policy to Ingress), and
  their egress when `policyTypes` include `Egress` (without `policyTypes`: when it has
  `egress` rules);
- a pod no policy selects for a direction allows everything that way; a selected pod
  allows only what one rule of the policies selecting it admits;
- a rule admits a peer when its `from` (`to`) is empty or one of its peers matches: a
  `podSelector` alone matches pods of the policy's namespace, a `namespaceSelector` alone
  every pod of the namespaces whose labels it matches (namespaces carry
  `kubernetes.io/metadata.name`), both together the pods matching the one in the
  namespaces matching the other, an `ipBlock` the pod IPs in its CIDR but not in its
  `except`; and when its `ports` are empty or one of them is the port: protocol TCP (the
  default), `port` absent, equal, a range `port`..`endPort` holding it, or a port name
  the destination's container declares for it (`ssh` always means 22).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

Obj = dict[str, Any]


def selector_matches(selector: Obj | None, labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector (matchLabels and matchExpressions); `{}` matches everything."""
    selector = selector or {}
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != str(v):
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key", ""), expr.get("operator", "")
        values = [str(v) for v in expr.get("values") or []]
        if op == "In" and not (key in labels and labels[key] in values):
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


def _labels(obj: Obj) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((obj.get("metadata") or {}).get("labels") or {}).items()}


def _ns(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("namespace", "")


def _ip(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("podIP") or "")


def governs(policy: Obj, direction: str) -> bool:
    spec = policy.get("spec") or {}
    types = spec.get("policyTypes")
    if types:
        return direction in types
    return direction == "Ingress" or bool(spec.get("egress"))


class Network:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store

    def _policies(self, namespace: str) -> list[Obj]:
        rt = self.cluster.rt("networkpolicies", "networking.k8s.io")
        return list(self.store.iter_raw(rt, namespace))

    def _namespace_labels(self, name: str) -> dict[str, str]:
        ns = self.store.get_raw(self.cluster.rt("namespaces"), "", name) or {}
        labels = _labels(ns)
        labels.setdefault("kubernetes.io/metadata.name", name)
        return labels

    def _peer_matches(self, peer: Obj, policy_ns: str, pod: Obj) -> bool:
        block = peer.get("ipBlock")
        if isinstance(block, dict):
            try:
                ip = ipaddress.ip_address(_ip(pod))
                if ip not in ipaddress.ip_network(str(block.get("cidr", "")), strict=False):
                    return False
                return not any(ip in ipaddress.ip_network(str(x), strict=False)
                               for x in block.get("except") or [])
            except ValueError:
                return False
        pod_sel, ns_sel = peer.get("podSelector"), peer.get("namespaceSelector")
        if pod_sel is None and ns_sel is None:
            return False
        if ns_sel is None:
            if _ns(pod) != policy_ns:
                return False
        elif not selector_matches(ns_sel, self._namespace_labels(_ns(pod))):
            return False
        return pod_sel is None or selector_matches(pod_sel, _labels(pod))

    @staticmethod
    def _port_matches(rule_ports: list[Obj] | None, port: int, protocol: str,
                      destination: Obj) -> bool:
        if not rule_ports:
            return True
        names = {"ssh"} if port == 22 else set()
        for c in (destination.get("spec") or {}).get("containers") or []:
            for p in c.get("ports") or []:
                if p.get("containerPort") == port and p.get("name"):
                    names.add(str(p["name"]))
        for entry in rule_ports:
            if str(entry.get("protocol") or "TCP") != protocol:
                continue
            value = entry.get("port")
            if value is None:
                return True
            if isinstance(value, int) or str(value).isdigit():
                low = int(value)
                high = int(entry.get("endPort") or low)
                if low <= port <= high:
                    return True
            elif str(value) in names:
                return True
        return False

    def _admitted(self, selected: Obj, other: Obj, direction: str, port: int, protocol: str,
                  destination: Obj) -> bool:
        """Whether the policies of `selected`'s namespace let traffic to (Ingress) or from
        (Egress) `selected` pass with `other` at the other end."""
        ns = _ns(selected)
        governing = [p for p in self._policies(ns) if governs(p, direction) and
                     selector_matches((p.get("spec") or {}).get("podSelector"),
                                      _labels(selected))]
        if not governing:
            return True
        rules_key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
        for policy in governing:
            for rule in (policy.get("spec") or {}).get(rules_key) or []:
                peers = rule.get(peers_key)
                if (not peers or any(self._peer_matches(peer, ns, other) for peer in peers)) \
                        and self._port_matches(rule.get("ports"), port, protocol, destination):
                    return True
        return False

    def allows(self, source: Obj, destination: Obj, port: int, protocol: str = "TCP") -> bool:
        """Whether a connection from pod `source` to pod `destination` on `port` gets
        through the NetworkPolicies of both ends."""
        return self._admitted(source, destination, "Egress", port, protocol, destination) \
            and self._admitted(destination, source, "Ingress", port, protocol, destination)
