"""Kueue's quota arithmetic, a part of KueueController (kueue.py): what admitted workloads
hold per ClusterQueue, flavor and resource; the flavor a workload's pod sets get within
nominal quota, borrowing from the cohort and lending limits; preemption within the
ClusterQueue by priority."""


from __future__ import annotations

import contextlib
import copy
import hashlib
from fractions import Fraction
from typing import Any

from simcluster.apiserver import strategies
from simcluster.controllers.base import Key
from simcluster.controllers.conditions import get_condition, is_true
from simcluster.placement import scheduling
from simcluster.quantity import format_for

Obj = dict[str, Any]
GROUP = "kueue.x-k8s.io"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
WPC_SOURCE = "kueue.x-k8s.io/workloadpriorityclass"
KEY: Key = ("", "kueue")


def workload_name(kind: str, group: str, name: str, uid: str) -> str:
    """`<kind>-<name>-<5 hex>`, as jobframework's GetWorkloadNameForOwnerWithGVK."""
    digest = hashlib.sha1(f"{kind}\n{group}\n{name}\n{uid}".encode(),
                          usedforsecurity=False).hexdigest()[:5]
    return f"{kind.lower()}-{name}"[:253 - 6] + "-" + digest


def condition_of(obj: Obj, type_: str) -> Obj | None:
    return get_condition(obj.get("status") or {}, type_)


def holds(obj: Obj, type_: str) -> bool:
    return is_true(obj.get("status") or {}, type_)


def quantity_text(resource: str, milli: int) -> str:
    return format_for(resource, Fraction(milli, 1000))


def negated(timestamp: str) -> tuple:
    """Sorts RFC 3339 times newest first."""
    return tuple(-ord(ch) for ch in timestamp)



class QuotaArithmetic:
    """The controller's quota methods (it has the store, the queues and the workloads)."""

    def _usage(self, workloads: list[Obj]) -> dict[tuple[str, str, str], int]:
        """(ClusterQueue, flavor, resource) -> milli-units held by its reserving workloads."""
        used: dict[tuple[str, str, str], int] = {}
        for w in workloads:
            if not holds(w, "QuotaReserved") or holds(w, "Finished"):
                continue
            admission = (w.get("status") or {}).get("admission") or {}
            cq = admission.get("clusterQueue", "")
            for ps in admission.get("podSetAssignments") or []:
                for resource, flavor in (ps.get("flavors") or {}).items():
                    amount = scheduling.milli((ps.get("resourceUsage") or {}).get(resource, 0))
                    used[(cq, flavor, resource)] = used.get((cq, flavor, resource), 0) + amount
        return used

    def _pod_set_requests(self, w: Obj, ps: Obj) -> dict[str, int]:
        """What all of a pod set's pods ask for, LimitRange defaults included."""
        pod = {"metadata": {"namespace": w["metadata"]["namespace"]},
               "spec": copy.deepcopy((ps.get("template") or {}).get("spec") or {})}
        # as the API server makes the pods: requests default to limits first, then the
        # LimitRanges fill what is still missing (a defaultRequest never beats a limit)
        strategies.default_pod_requests(pod["spec"])
        with contextlib.suppress(Exception):  # over a maximum: its pods will be refused
            self.cluster.admission._limit_ranges(pod)
        per_pod = scheduling.pod_requests(pod)
        return {r: v * int(ps.get("count", 1)) for r, v in per_pod.items()}

    def _assign(self, cq: Obj, w: Obj, usage: dict,
                borrow: bool = True) -> tuple[list[Obj] | None, str]:
        """One flavor per resource group for every pod set, or None and upstream's
        message of what is lacking."""
        cq_name = cq["metadata"]["name"]
        groups = (cq.get("spec") or {}).get("resourceGroups") or []
        extra: dict[tuple[str, str, str], int] = {}  # what this workload's pod sets took
        assignments, messages = [], []
        for ps in (w.get("spec") or {}).get("podSets") or []:
            requests = self._pod_set_requests(w, ps)
            flavors: dict[str, str] = {}
            reasons: list[str] = []
            covered = set()
            for group in groups:
                names = set(group.get("coveredResources") or [])
                covered |= names
                needed = {r: v for r, v in requests.items() if r in names}
                if not needed:
                    continue
                chosen, tried = self._flavor_for(cq_name, group, needed, usage, extra, borrow)
                if chosen is None:
                    reasons += tried
                    continue
                for r, v in needed.items():
                    flavors[r] = chosen
                    extra[(cq_name, chosen, r)] = extra.get((cq_name, chosen, r), 0) + v
            reasons += [f"resource {r} unavailable in ClusterQueue"
                        for r in sorted(requests) if r not in covered]
            if reasons:
                messages.append(f"couldn't assign flavors to pod set {ps['name']}: "
                                + ", ".join(sorted(reasons)))
                continue
            assignments.append({"name": ps["name"], "flavors": flavors,
                                "resourceUsage": {r: quantity_text(r, v) for r, v in sorted(
                                    requests.items()) if r in flavors},
                                "count": int(ps.get("count", 1))})
        if messages:
            return None, "; ".join(messages)
        return assignments, ""

    def _flavor_for(self, cq_name: str, group: Obj, needed: dict[str, int], usage: dict,
                    extra: dict, borrow: bool = True) -> tuple[str | None, list[str]]:
        reasons: list[str] = []
        for flavor in group.get("flavors") or []:
            name = flavor.get("name", "")
            if self.store.get_raw(self.flavors, "", name) is None:
                reasons.append(f"flavor {name} not found")
                continue
            fits = True
            for r, v in sorted(needed.items()):
                most, available = self._room(cq_name, name, r, usage, extra, borrow)
                if v > most:
                    reasons.append(f"insufficient quota for {r} in flavor {name}, request > "
                                   f"maximum capacity ({quantity_text(r, v)} > "
                                   f"{quantity_text(r, most)})")
                    fits = False
                elif v > available:
                    reasons.append(f"insufficient unused quota for {r} in flavor {name}, "
                                   f"{quantity_text(r, v - max(available, 0))} more needed")
                    fits = False
            if fits:
                return name, []
        return None, reasons

    def _quota(self, cq_name: str, flavor: str, resource: str) -> tuple[int, int | None,
                                                                        int | None]:
        """(nominalQuota, borrowingLimit, lendingLimit) of a ClusterQueue's flavor and
        resource, in milli-units (limits None when not set)."""
        cq = self.store.get_raw(self.cqs, "", cq_name) or {}
        for group in (cq.get("spec") or {}).get("resourceGroups") or []:
            for f in group.get("flavors") or []:
                if f.get("name") != flavor:
                    continue
                for q in f.get("resources") or []:
                    if q.get("name") == resource:
                        limits = [scheduling.milli(q[k]) if q.get(k) is not None else None
                                  for k in ("borrowingLimit", "lendingLimit")]
                        return scheduling.milli(q.get("nominalQuota", 0)), *limits
        return 0, None, None

    def _cohort(self, cq_name: str) -> list[str]:
        """The other ClusterQueues of its cohort."""
        cq = self.store.get_raw(self.cqs, "", cq_name) or {}
        cohort = (cq.get("spec") or {}).get("cohort")
        if not cohort:
            return []
        return [o["metadata"]["name"] for o in self.store.iter_raw(self.cqs)
                if (o.get("spec") or {}).get("cohort") == cohort
                and o["metadata"]["name"] != cq_name]

    def _room(self, cq_name: str, flavor: str, r: str, usage: dict, extra: dict,
              borrow: bool = True) -> tuple[int, int]:
        """(the most this ClusterQueue could ever hold, what it may take now) of a flavor's
        resource: its nominal quota, plus what the others of its cohort lend (all their
        unused nominal quota, or up to their lendingLimit), up to its borrowingLimit."""
        nominal, borrowing, _lending = self._quota(cq_name, flavor, r)
        used = usage.get((cq_name, flavor, r), 0) + extra.get((cq_name, flavor, r), 0)
        pool, pool_used = nominal, used
        for other in self._cohort(cq_name) if borrow else []:
            o_nominal, _b, o_lending = self._quota(other, flavor, r)
            lendable = o_nominal if o_lending is None else min(o_lending, o_nominal)
            o_used = usage.get((other, flavor, r), 0)
            pool += lendable
            # what it uses beyond the part it keeps for itself comes out of the pool
            pool_used += max(0, o_used - (o_nominal - lendable))
        most = pool if borrowing is None else min(pool, nominal + borrowing)
        available = most - pool_used if borrowing is None else min(
            pool - pool_used, nominal + borrowing - used)
        return most, available

    # -- preemption within a ClusterQueue ------------------------------------------------------
    def _preempt_for(self, cq: Obj, w: Obj, usage: dict, workloads: list[Obj]) -> bool:
        """With `preemption.withinClusterQueue: LowerPriority`, evict the fewest admitted
        workloads of lower priority whose quota lets `w` fit (lowest priority, then the
        most recently admitted, first; then those not needed are put back, as upstream's
        minimal set). Upstream preempts only within the nominal quota: with the others'
        quota released, `w` must fit without borrowing. True: some were evicted."""
        policy = ((cq.get("spec") or {}).get("preemption") or {}).get("withinClusterQueue")
        if policy != "LowerPriority":
            return False
        cq_name = cq["metadata"]["name"]
        priority = int((w.get("spec") or {}).get("priority") or 0)
        candidates = [o for o in workloads if holds(o, "QuotaReserved")
                      and not holds(o, "Finished")
                      and ((o.get("status") or {}).get("admission") or {}).get(
                          "clusterQueue") == cq_name
                      and int((o.get("spec") or {}).get("priority") or 0) < priority]
        candidates.sort(key=lambda o: (int((o.get("spec") or {}).get("priority") or 0),
                                       negated(condition_of(o, "QuotaReserved").get(
                                           "lastTransitionTime") or "")))
        chosen: list[Obj] = []
        for candidate in candidates:
            chosen.append(candidate)
            if self._fits_within_nominal(cq, w, usage, chosen):
                break
        else:
            return False
        for candidate in reversed(chosen[:-1]):  # keep only those it needs
            rest = [c for c in chosen if c is not candidate]
            if self._fits_within_nominal(cq, w, usage, rest):
                chosen = rest
        job_uid = (w["metadata"].get("labels") or {}).get(JOB_UID_LABEL) or "UNKNOWN"
        message = (f"Preempted to accommodate a workload (UID: {w['metadata']['uid']}, "
                   f"JobUID: {job_uid}) due to prioritization in the ClusterQueue")
        for target in chosen:
            self._evict(target, message)
        return True

    def _fits_within_nominal(self, cq: Obj, w: Obj, usage: dict, freed: list[Obj]) -> bool:
        released = dict(usage)
        for o in freed:
            for key, amount in self._usage([o]).items():
                released[key] = released.get(key, 0) - amount
        # without borrowing: what it would hold after the eviction fits its nominal quota
        assignment, _message = self._assign(cq, w, released, borrow=False)
        return assignment is not None

