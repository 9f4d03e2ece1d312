"""The ClusterRole aggregation controller: fills `rules` of roles with an aggregationRule.

On a real cluster `kubectl get clusterrole edit -o yaml` lists every rule gathered from
the roles labelled `rbac.authorization.k8s.io/aggregate-to-edit`; this keeps simcluster's
stored roles the same, so what a person reads is what RBAC enforces.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from simcluster.access.auth import _selector_matches
from simcluster.apiserver.store import Change
from simcluster.controllers.base import Controller, Key

Obj = dict[str, Any]
PATH = "rbac.authorization.k8s.io/clusterroles"


class ClusterRoleAggregator(Controller):
    name = "clusterrole-aggregation-controller"

    def watches(self) -> Iterable[tuple[str, Any]]:
        yield PATH, self._aggregated_roles

    def _aggregated_roles(self, change: Change) -> Iterable[Key]:
        for role in self.store.iter_raw(self.rt("clusterroles")):
            if role.get("aggregationRule"):
                yield ("", role["metadata"]["name"])

    def reconcile(self, key: Key) -> float | None:
        rt = self.rt("clusterroles")
        role = self.store.get_raw(rt, "", key[1])
        if role is None or not role.get("aggregationRule"):
            return None
        selectors = role["aggregationRule"].get("clusterRoleSelectors") or []
        rules: list[Obj] = []
        seen: set[str] = set()
        for other in self.store.iter_raw(rt):
            if other["metadata"]["name"] == key[1]:
                continue
            if not any(_selector_matches(sel, other) for sel in selectors):
                continue
            for rule in other.get("rules") or []:
                marker = json.dumps(rule, sort_keys=True)
                if marker not in seen:
                    seen.add(marker)
                    rules.append(rule)

        def write(obj: Obj) -> bool | None:
            if obj.get("rules") == rules:
                return False
            obj["rules"] = rules
            return None
        self.store.mutate(rt, "", key[1], write)
        return None
