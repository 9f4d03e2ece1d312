"""Whether any node of the cluster could ever run a Worker or the Launcher.

Looks at each node's allocatable CPU, memory and GPUs (status.allocatable, as the API
returns Node objects) and, when the job has a node selector, only at nodes with those
labels and the required node affinity (`NodeRequirement`s: In, NotIn, Exists,
DoesNotExist, all of them holding), only at nodes that match both. Taints and what is in
use right now are not considered: this answers "could it ever run here", not "will it
start now". An empty node list (most people may
not list nodes) means nothing is said.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from odh.training.i18n import _
from odh.training.manifests.totals import ZERO, cpus, gpus, number
from odh.training.paths import as_dict, get_path
from odh.training.quantity import GPU_RESOURCE, QuantityError, format_resources, parse_quantity


@dataclass(frozen=True)
class NodeSize:
    name: str
    cpu: Decimal
    memory: Decimal
    gpus: Decimal
    labels: dict

    def holds(self, cpu: Decimal, memory: Decimal, gpus: Decimal) -> bool:
        return cpu <= self.cpu and memory <= self.memory and gpus <= self.gpus


def _quantity(raw: object) -> Decimal:
    try:
        return parse_quantity(raw)  # anything else raises QuantityError
    except QuantityError:
        return ZERO


def node_sizes(nodes: list[dict]) -> list[NodeSize]:
    sizes = []
    for node in nodes:
        node = as_dict(node)
        status = as_dict(node.get("status"))
        allocatable = as_dict(status.get("allocatable")) or as_dict(status.get("capacity"))
        sizes.append(NodeSize(
            name=str(get_path(node, ["metadata", "name"], "")),
            cpu=_quantity(allocatable.get("cpu", 0)),
            memory=_quantity(allocatable.get("memory", 0)),
            gpus=_quantity(allocatable.get(GPU_RESOURCE, 0)),
            labels=as_dict(get_path(node, ["metadata", "labels"]))))
    return sizes


def requirement_holds(requirement: object, labels: dict) -> bool:
    """Does a node with `labels` meet one required node affinity expression (a
    `NodeRequirement`, or anything with key, operator and values), as the scheduler reads
    it? An operator it does not know holds for no node."""
    key = str(getattr(requirement, "key", ""))
    operator = str(getattr(requirement, "operator", ""))
    values = {str(v) for v in getattr(requirement, "values", None) or []}
    if operator == "In":
        return key in labels and str(labels[key]) in values
    if operator == "NotIn":
        return key not in labels or str(labels[key]) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False


def selected(sizes: list[NodeSize], node_selector: dict,
             affinity: Sequence[object] = ()) -> list[NodeSize]:
    """The nodes with every label of the node selector that meet every requirement of the
    required node affinity."""
    return [n for n in sizes
            if all(str(n.labels.get(k)) == str(v) and k in n.labels
                   for k, v in node_selector.items())
            and all(requirement_holds(r, n.labels) for r in affinity)]


def _affinity_text(affinity: Sequence[object]) -> str:
    return "; ".join(" ".join(part for part in (
        str(getattr(r, "key", "")), str(getattr(r, "operator", "")),
        ",".join(str(v) for v in getattr(r, "values", None) or [])) if part)
        for r in affinity)


def _no_node_matches(sizes: list[NodeSize], node_selector: dict,
                     affinity: Sequence[object]) -> str:
    """What says that no node matches the placement rules, naming the rule that leaves none:
    the node selector, the node affinity, or the two together."""
    values = {"labels": _selector_text(node_selector), "rule": _affinity_text(affinity)}
    if node_selector and not selected(sizes, node_selector):
        return _("No node has the labels %(labels)s that the node selector asks for: change "
                 "or remove the node selector.") % values
    if node_selector:
        return _("No node with the labels %(labels)s (the node selector) also meets the node "
                 "affinity %(rule)s: change or remove one of them.") % values
    return _("No node meets the node affinity %(rule)s: change or remove the node "
             "affinity.") % values


def _largest(sizes: list[NodeSize], attribute: str) -> NodeSize:
    return max(sizes, key=lambda n: (getattr(n, attribute), n.name))


def _selector_text(node_selector: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in node_selector.items())


def node_problem(sizes: list[NodeSize], node_selector: dict, role: str, cpu: Decimal,
                 memory: Decimal, gpu_count: Decimal,
                 affinity: Sequence[object] = ()) -> str:
    """Why no node can run one pod of `role` ("Worker" or "Launcher"), or ""."""
    if not sizes:
        return ""
    candidates = selected(sizes, node_selector, affinity)
    values: dict[str, object] = {"labels": _selector_text(node_selector),
                                 "rule": _affinity_text(affinity)}
    if not candidates:
        return _no_node_matches(sizes, node_selector, affinity)
    if any(n.holds(cpu, memory, gpu_count) for n in candidates):
        return ""
    worker = role == "Worker"
    if gpu_count > _largest(candidates, "gpus").gpus:
        biggest = _largest(candidates, "gpus")
        values.update(amount=gpus(gpu_count), node=biggest.name, most=number("gpu", biggest.gpus))
        if biggest.gpus == 0:
            message = _("No node can run a Worker with %(amount)s: no node has GPUs.")
        else:
            message = _("No node can run a Worker with %(amount)s: the largest GPU node has "
                        "%(most)s (%(node)s).")
    elif cpu > _largest(candidates, "cpu").cpu:
        biggest = _largest(candidates, "cpu")
        values.update(amount=cpus(cpu), node=biggest.name, most=number("cpu", biggest.cpu))
        message = _("No node can run a Worker with %(amount)s: the largest node has %(most)s "
                    "(%(node)s).") if worker else \
            _("No node can run the Launcher with %(amount)s: the largest node has %(most)s "
              "(%(node)s).")
    elif memory > _largest(candidates, "memory").memory:
        biggest = _largest(candidates, "memory")
        values.update(amount=number("memory", memory), node=biggest.name,
                      most=number("memory", biggest.memory))
        message = _("No node can run a Worker with %(amount)s of memory: the largest node has "
                    "%(most)s (%(node)s).") if worker else \
            _("No node can run the Launcher with %(amount)s of memory: the largest node has "
              "%(most)s (%(node)s).")
    else:
        values["amount"] = format_resources(cpu or None, memory or None, gpu_count)
        message = _("No node can run a Worker with %(amount)s: no single node has all of that.") \
            if worker else \
            _("No node can run the Launcher with %(amount)s: no single node has all of that.")
    text = message % values
    if node_selector:
        text += " " + _("Only nodes with %(labels)s count, as the node selector asks.") % values
    if affinity:
        text += " " + _("Only nodes that meet the node affinity %(rule)s count.") % values
    return text


# -- room right now -----------------------------------------------------------------------------
def free_sizes(sizes: list[NodeSize], held: dict[str, dict[str, Decimal]],
               cordoned: set[str]) -> list[NodeSize]:
    """Each node's room now: its allocatable less what the pods bound to it hold (`held`, by
    node and resource); a cordoned node has none."""
    free = []
    for size in sizes:
        if size.name in cordoned:
            continue
        used = held.get(size.name, {})
        free.append(NodeSize(name=size.name, cpu=size.cpu - used.get("cpu", ZERO),
                             memory=size.memory - used.get("memory", ZERO),
                             gpus=size.gpus - used.get(GPU_RESOURCE, ZERO), labels=size.labels))
    return free


def workers_placed(free: list[NodeSize], node_selector: dict, workers: int, cpu: Decimal,
                   memory: Decimal, gpu_count: Decimal, launcher_cpu: Decimal,
                   launcher_memory: Decimal, affinity: Sequence[object] = ()
                   ) -> tuple[int, bool]:
    """How many of the Workers the nodes' room now takes, one pod per node's room as the
    scheduler would place them (the GPU nodes with the least room that holds a Worker
    first, so the larger rooms stay for the rest), and whether the Launcher finds a place
    after them. Taints are not considered."""
    rooms = {n.name: [n.cpu, n.memory, n.gpus] for n in selected(free, node_selector, affinity)}
    placed = 0
    for _worker in range(workers):
        fitting = [name for name, room in rooms.items()
                   if cpu <= room[0] and memory <= room[1] and gpu_count <= room[2]]
        if not fitting:
            break
        name = min(fitting, key=lambda n: (rooms[n][2], rooms[n][0], n))
        rooms[name] = [rooms[name][0] - cpu, rooms[name][1] - memory, rooms[name][2] - gpu_count]
        placed += 1
    launcher = any(launcher_cpu <= room[0] and launcher_memory <= room[1]
                   for room in rooms.values())
    return placed, launcher


def room_problem(free: list[NodeSize], node_selector: dict, workers: int, cpu: Decimal,
                 memory: Decimal, gpu_count: Decimal, launcher_cpu: Decimal,
                 launcher_memory: Decimal, affinity: Sequence[object] = ()) -> str:
    """Why the cluster's nodes cannot start the whole job right now, or ""."""
    if not free:
        return ""
    placed, launcher = workers_placed(free, node_selector, workers, cpu, memory, gpu_count,
                                      launcher_cpu, launcher_memory, affinity)
    values = {"placed": placed, "count": workers,
              "amount": format_resources(cpu or None, memory or None, gpu_count)}
    if placed == 0 and workers:
        return _("Right now no node has room for a Worker (%(amount)s): other jobs hold it.") \
            % values
    if placed < workers:
        return _("Right now the cluster's nodes have room for %(placed)s of its %(count)s "
                 "Workers (%(amount)s each): other jobs hold the rest.") % values
    if not launcher:
        return _("Right now no node has room for the Launcher after its Workers: other jobs "
                 "hold it.")
    return ""
