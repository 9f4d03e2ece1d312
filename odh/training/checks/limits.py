"""A project's LimitRanges against a job's pods, as its kind's manifest writes their
templates (`JobKind.pod_templates`: an MPIJob's Launcher and Workers, a TrainJob's nodes).

Follows the LimitRanger admission plugin: a container without a limit or request first
gets the LimitRange's `default` / `defaultRequest` (a request also falls back to the
limit); then `min` bounds the request, `max` the limit, and `maxLimitRequestRatio` the
limit over the request, per Container or summed over the Pod.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import GPU_RESOURCE, QuantityError, parse_quantity
from odh.training.spec import LAUNCHER, WORKER, JobSpec, build_manifest

RESOURCES = ("cpu", "memory", GPU_RESOURCE)
# The spec field that sets each (role, resource).
FIELDS = {
    (WORKER, "cpu"): "cpu_per_worker", (WORKER, "memory"): "memory_per_worker",
    (WORKER, GPU_RESOURCE): "gpus_per_worker",
    (LAUNCHER, "cpu"): "launcher_cpu", (LAUNCHER, "memory"): "launcher_memory",
}


@dataclass(frozen=True)
class LimitViolation:
    role: str            # "Launcher" or "Worker"
    resource: str        # "cpu", "memory" or "nvidia.com/gpu"
    bound: str           # "max", "min", "ratio", or "missing" (must be set, and is not)
    value: Decimal       # the pod's or container's amount (the ratio for "ratio")
    limit: Decimal       # the LimitRange's bound
    scope: str           # "Container" or "Pod"
    limit_range: str     # the LimitRange's name
    namespace: str

    @property
    def field(self) -> str:
        return FIELDS.get((self.role, self.resource), "manifest")


def _amount(raw: object) -> Decimal | None:
    try:
        return parse_quantity(raw)  # anything else raises QuantityError
    except QuantityError:
        return None


def _amounts(values: object) -> dict[str, Decimal]:
    result = {}
    for name, raw in as_dict(values).items():
        amount = _amount(raw)
        if amount is not None:
            result[str(name)] = amount
    return result


def _defaulted(container: dict, item: dict) -> tuple[dict[str, Decimal], dict[str, Decimal]]:
    """(requests, limits) after LimitRanger's defaulting."""
    resources = as_dict(container.get("resources"))
    limits = _amounts(resources.get("limits"))
    requests = _amounts(resources.get("requests"))
    for name, amount in _amounts(item.get("default")).items():
        limits.setdefault(name, amount)
    for name, amount in _amounts(item.get("defaultRequest")).items():
        requests.setdefault(name, amount)
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    return requests, limits


def _containers(templates: dict[str, dict], role: str) -> list[dict]:
    return [c for c in as_list(as_dict(templates.get(role)).get("containers"))
            if isinstance(c, dict)]


def _check(requests: dict[str, Decimal], limits: dict[str, Decimal], item: dict
           ) -> list[tuple[str, str, Decimal, Decimal]]:
    """(resource, bound, value, limit) for each bound of one LimitRange item broken."""
    found = []
    for name, bound in _amounts(item.get("max")).items():
        if name not in limits:
            found.append((name, "missing", Decimal(0), bound))
        elif limits[name] > bound:
            found.append((name, "max", limits[name], bound))
    for name, bound in _amounts(item.get("min")).items():
        if name not in requests:
            found.append((name, "missing", Decimal(0), bound))
        elif requests[name] < bound:
            found.append((name, "min", requests[name], bound))
    for name, bound in _amounts(item.get("maxLimitRequestRatio")).items():
        request, limit = requests.get(name), limits.get(name)
        if limit is None or not request:
            continue
        if limit / request > bound:
            found.append((name, "ratio", limit / request, bound))
    return found


def limit_violations(spec: JobSpec, limit_ranges: list[dict]) -> list[LimitViolation]:
    """Every LimitRange bound the job's pods would break (nothing when there are none)."""
    if not limit_ranges:
        return []
    templates = spec.kind.pod_templates(build_manifest(spec))
    found: list[LimitViolation] = []
    for limit_range in limit_ranges:
        meta = as_dict(as_dict(limit_range).get("metadata"))
        name, namespace = str(meta.get("name", "")), str(meta.get("namespace", spec.namespace))
        for item in as_list(get_path(limit_range, ["spec", "limits"])):
            item = as_dict(item)
            scope = item.get("type")
            if scope not in ("Container", "Pod"):
                continue
            for role in (WORKER, LAUNCHER):
                containers = _containers(templates, role)
                if not containers or (role == WORKER and spec.workers < 1):
                    continue
                pairs = [_defaulted(c, item) for c in containers]
                if scope == "Pod":
                    pairs = [(_sum([r for r, _l in pairs]), _sum([lim for _r, lim in pairs]))]
                for requests, limits in pairs:
                    found.extend(LimitViolation(role, resource, bound, value, limit, str(scope),
                                                name, namespace)
                                 for resource, bound, value, limit in
                                 _check(requests, limits, item))
    return _unique(found)


def _sum(parts: list[dict[str, Decimal]]) -> dict[str, Decimal]:
    total: dict[str, Decimal] = {}
    for part in parts:
        for name, amount in part.items():
            total[name] = total.get(name, Decimal(0)) + amount
    return total


def _unique(found: list[LimitViolation]) -> list[LimitViolation]:
    seen: list[LimitViolation] = []
    for violation in found:
        if violation not in seen:
            seen.append(violation)
    return seen
