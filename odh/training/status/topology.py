"""Where a job's pods run: the Launcher and Workers grouped by the Kubernetes node.

The Topology tab draws this as a grid of small cards per node (it must stay readable with
100 Workers). The order is chosen so that reading the page top to bottom follows the job:

- inside a node: the Launcher first, then the other replicas by role and index
  (Worker 2 before Worker 10, not as strings);
- nodes: in the order of the first replica each one runs, so the node of the Launcher
  (or of Worker 0) comes first and Worker numbers grow down the page; ties by node name,
  numbers inside names compared as numbers (`gpu-2` before `gpu-10`);
- pods with no node yet (waiting for the scheduler, or not created yet) last, in a group
  of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from odh.training.status.pods import ReplicaState

LAUNCHER = "Launcher"
_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple:
    """`gpu-a100-10` after `gpu-a100-2`: digit runs compare as numbers."""
    return tuple(int(part) if part.isdecimal() else part for part in _DIGITS.split(text))


def replica_key(replica: ReplicaState) -> tuple:
    """Launcher first, then by role, then by index (no index last), then by name."""
    return (replica.role != LAUNCHER, replica.role,
            replica.index is None, replica.index if replica.index is not None else 0,
            natural_key(replica.name))


@dataclass(frozen=True)
class NodeGroup:
    """The replicas on one node; `node` is "" for those no node runs (yet)."""

    node: str
    replicas: tuple[ReplicaState, ...]

    @property
    def scheduled(self) -> bool:
        return bool(self.node)

    @property
    def gpus(self) -> int:
        return sum(r.gpus for r in self.replicas)

    @property
    def problems(self) -> int:
        return sum(1 for r in self.replicas if r.problem)

    @property
    def dom_id(self) -> str:
        """A stable element id for the group (node names are DNS names)."""
        return f"topology-node-{self.node}" if self.node else "topology-unscheduled"


@dataclass(frozen=True)
class Topology:
    groups: tuple[NodeGroup, ...]

    @property
    def replicas(self) -> list[ReplicaState]:
        return [r for g in self.groups for r in g.replicas]

    @property
    def launchers(self) -> int:
        return sum(1 for r in self.replicas if r.role == LAUNCHER)

    @property
    def others(self) -> int:
        """Workers (or the replicas of other roles) besides the Launcher."""
        return sum(1 for r in self.replicas if r.role != LAUNCHER)

    @property
    def nodes(self) -> int:
        return sum(1 for g in self.groups if g.scheduled)

    @property
    def unscheduled(self) -> int:
        return sum(len(g.replicas) for g in self.groups if not g.scheduled)

    @property
    def problems(self) -> int:
        return sum(g.problems for g in self.groups)


def build(replicas: Iterable[ReplicaState]) -> Topology:
    """Group replicas by the node they run on, in reading order (see the module doc)."""
    by_node: dict[str, list[ReplicaState]] = {}
    for replica in replicas:
        by_node.setdefault(replica.node or "", []).append(replica)
    groups = [NodeGroup(node, tuple(sorted(members, key=replica_key)))
              for node, members in by_node.items()]
    groups.sort(key=lambda g: (not g.scheduled, replica_key(g.replicas[0]),
                               natural_key(g.node)))
    return Topology(tuple(groups))
