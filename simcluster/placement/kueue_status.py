"""What Kueue writes on its queues' status, a part of KueueController (kueue.py): each
ClusterQueue's and LocalQueue's usage by flavor, pending and admitted counts, and its
Active condition."""


from __future__ import annotations

import copy
from typing import Any

from simcluster.placement import scheduling
from simcluster.placement.kueue_quota import holds, quantity_text

Obj = dict[str, Any]


class QueueStatus:
    """The controller's queue-status methods (it has the store and the quota arithmetic)."""

    # -- queue status -------------------------------------------------------------------------
    def _write_queue_status(self) -> None:
        workloads = list(self.store.iter_raw(self.workloads))
        usage = self._usage(workloads)
        lq_of: dict[tuple[str, str], str] = {}
        for lq in self.store.iter_raw(self.lqs):
            lq_of[(lq["metadata"]["namespace"], lq["metadata"]["name"])] = str(
                (lq.get("spec") or {}).get("clusterQueue") or "")
        counts: dict[tuple[str, str], dict[str, int]] = {}  # ("cq"|ns, name) -> counts
        lq_usage: dict[tuple[str, str, str, str], int] = {}
        for w in workloads:
            if holds(w, "Finished"):
                continue
            ns = w["metadata"]["namespace"]
            lq_name = str((w.get("spec") or {}).get("queueName") or "")
            cq_name = lq_of.get((ns, lq_name), "")
            state = "admittedWorkloads" if holds(w, "Admitted") else (
                "reservingWorkloads" if holds(w, "QuotaReserved") else "pendingWorkloads")
            for owner in (("", cq_name), (ns, lq_name)):
                if owner[1]:
                    tally = counts.setdefault(owner, {})
                    tally[state] = tally.get(state, 0) + 1
                    if state == "admittedWorkloads":
                        tally["reservingWorkloads"] = tally.get("reservingWorkloads", 0) + 1
            if holds(w, "QuotaReserved"):
                for ps in ((w.get("status") or {}).get("admission") or {}).get(
                        "podSetAssignments") or []:
                    for r, flavor in (ps.get("flavors") or {}).items():
                        key = (ns, lq_name, flavor, r)
                        lq_usage[key] = lq_usage.get(key, 0) + scheduling.milli(
                            (ps.get("resourceUsage") or {}).get(r, 0))
        for cq in self.store.iter_raw(self.cqs):
            name = cq["metadata"]["name"]
            self._write_status(self.cqs, cq, self._cq_status(cq, usage, counts.get(("", name),
                                                                                  {})))
        for lq in self.store.iter_raw(self.lqs):
            ns, name = lq["metadata"]["namespace"], lq["metadata"]["name"]
            cq = self.store.get_raw(self.cqs, "", lq_of[(ns, name)])
            self._write_status(self.lqs, lq, self._lq_status(cq, ns, name, lq_usage,
                                                             counts.get((ns, name), {})))

    def _flavor_rows(self, cq: Obj, amount, borrowed: bool) -> list[Obj]:
        rows = []
        for group in (cq.get("spec") or {}).get("resourceGroups") or []:
            for flavor in group.get("flavors") or []:
                resources = []
                for q in flavor.get("resources") or []:
                    r = q.get("name", "")
                    total = amount(flavor.get("name", ""), r)
                    row = {"name": r, "total": quantity_text(r, total)}
                    if borrowed:  # what it holds beyond its nominal quota
                        over = total - scheduling.milli(q.get("nominalQuota", 0))
                        row["borrowed"] = quantity_text(r, max(0, over))
                    resources.append(row)
                rows.append({"name": flavor.get("name", ""), "resources": resources})
        return rows

    def _cq_status(self, cq: Obj, usage: dict, tally: dict[str, int]) -> Obj:
        name = cq["metadata"]["name"]
        missing = sorted({f.get("name", "") for g in (cq.get("spec") or {}).get(
            "resourceGroups") or [] for f in g.get("flavors") or []
            if self.store.get_raw(self.flavors, "", f.get("name", "")) is None})
        rows = self._flavor_rows(cq, lambda f, r: usage.get((name, f, r), 0), True)
        active = ({"type": "Active", "status": "True", "reason": "Ready",
                   "message": "Can admit new workloads"} if not missing else
                  {"type": "Active", "status": "False", "reason": "FlavorNotFound",
                   "message": "Can't admit new workloads: references missing "
                              f"ResourceFlavor(s): {', '.join(missing)}."})
        return {"flavorsReservation": rows, "flavorsUsage": copy.deepcopy(rows),
                "pendingWorkloads": tally.get("pendingWorkloads", 0),
                "reservingWorkloads": tally.get("reservingWorkloads", 0),
                "admittedWorkloads": tally.get("admittedWorkloads", 0),
                "conditions": [active]}

    def _lq_status(self, cq: Obj | None, ns: str, name: str, lq_usage: dict,
                   tally: dict[str, int]) -> Obj:
        rows = self._flavor_rows(cq, lambda f, r: lq_usage.get((ns, name, f, r), 0),
                                 False) if cq is not None else []
        active = ({"type": "Active", "status": "True", "reason": "Ready",
                   "message": "Can submit new workloads to clusterQueue"} if cq is not None
                  else {"type": "Active", "status": "False",
                        "reason": "ClusterQueueDoesNotExist",
                        "message": "Can't submit new workloads to clusterQueue"})
        return {"flavorsReservation": rows, "flavorUsage": copy.deepcopy(rows),
                "pendingWorkloads": tally.get("pendingWorkloads", 0),
                "reservingWorkloads": tally.get("reservingWorkloads", 0),
                "admittedWorkloads": tally.get("admittedWorkloads", 0),
                "conditions": [active]}

