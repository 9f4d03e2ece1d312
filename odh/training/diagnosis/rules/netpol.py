"""Which NetworkPolicies keep the Launcher from reaching a Worker's SSH port (TCP 22).

A pod is isolated for ingress once any policy of its namespace with the Ingress type
selects it; then only what some selecting policy's ingress rules admit gets through. Only
what mpirun needs is asked: may the Launcher pod open TCP 22 on the Worker pod?
"""

from __future__ import annotations

from odh.training.paths import as_dict, as_list, get_path

SSH_PORT = 22


def _labels(obj: dict) -> dict:
    return {str(k): str(v) for k, v in as_dict(get_path(obj, ["metadata", "labels"])).items()}


def selects(selector: object, labels: dict) -> bool:
    """A label selector (matchLabels, matchExpressions) against labels; {} selects all."""
    selector = as_dict(selector)
    for key, value in as_dict(selector.get("matchLabels")).items():
        if labels.get(str(key)) != str(value):
            return False
    for expression in as_list(selector.get("matchExpressions")):
        expression = as_dict(expression)
        key = str(expression.get("key", ""))
        values = [str(v) for v in as_list(expression.get("values"))]
        operator = expression.get("operator")
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def _isolates_ingress(policy: dict) -> bool:
    types = as_list(get_path(policy, ["spec", "policyTypes"]))
    if types:
        return "Ingress" in types
    return True  # without policyTypes a policy is always of type Ingress


def _admits_port(rule: dict) -> bool:
    ports = as_list(rule.get("ports"))
    if not ports:
        return True
    for port in ports:
        port = as_dict(port)
        if str(port.get("protocol", "TCP")) != "TCP":
            continue
        number = port.get("port")
        end = port.get("endPort")
        if number is None or number == "ssh":
            return True
        if isinstance(number, int) and (number == SSH_PORT or (
                isinstance(end, int) and number <= SSH_PORT <= end)):
            return True
    return False


def _admits_peer(rule: dict, source: dict, namespace_labels: dict | None) -> bool:
    peers = as_list(rule.get("from"))
    if not peers:
        return True
    source_labels = _labels(source)
    for peer in peers:
        peer = as_dict(peer)
        if "ipBlock" in peer:
            continue  # pod-to-pod traffic is not told apart by address here
        pods = peer.get("podSelector")
        spaces = peer.get("namespaceSelector")
        pods_ok = pods is None or selects(pods, source_labels)
        # without a namespaceSelector a peer is in the policy's own namespace (the pod's)
        spaces_ok = spaces is None or namespace_labels is None or selects(spaces,
                                                                         namespace_labels)
        if pods_ok and spaces_ok:
            return True
    return False


def blocking_policies(policies: list[dict], source: dict, target: dict,
                      namespace_labels: dict | None = None) -> list[str]:
    """Names of the policies that isolate `target` and, together, do not admit `source`
    on TCP 22; [] when SSH from `source` to `target` is allowed."""
    target_labels = _labels(target)
    selecting = [p for p in policies if _isolates_ingress(p)
                 and selects(get_path(p, ["spec", "podSelector"]), target_labels)]
    if not selecting:
        return []
    for policy in selecting:
        for rule in as_list(get_path(policy, ["spec", "ingress"])):
            rule = as_dict(rule)
            if _admits_port(rule) and _admits_peer(rule, source, namespace_labels):
                return []
    return sorted(str(get_path(p, ["metadata", "name"], "")) for p in selecting)
