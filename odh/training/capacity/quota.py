"""A job's totals against a project's ResourceQuotas (spec.hard, status.used).

Counts what the ResourceQuota admission plugin counts: the pods' compute requests and
limits (the dashboard sets requests = limits), the pods (Workers + the Launcher), the
MPIJob itself, and the Service, ConfigMap, Secret and launcher Job the MPI Operator
creates for it. A quota whose scopes do not select the job's pods is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal

from odh.training.i18n import _, ngettext
from odh.training.manifests.totals import ZERO, Totals, cpus, figure, gpus, number
from odh.training.manifests.totals import amount as spec_amount
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import GPU_RESOURCE, QuantityError, parse_quantity
from odh.training.spec import JobSpec

COMPUTE = ("cpu", "memory", GPU_RESOURCE)
# Objects each MPIJob brings along, by the quota resource names that count them.
_ONE_EACH = ("count/mpijobs.kubeflow.org", "services", "count/services", "configmaps",
             "count/configmaps", "secrets", "count/secrets", "count/jobs.batch")
_RANK = {"nvidia.com/gpu": 0, "cpu": 1, "memory": 2, "pods": 3}


@dataclass
class QuotaLine:
    quota: str
    resource: str          # the quota's key: "requests.nvidia.com/gpu", "pods", ...
    requested: Decimal
    used: Decimal
    hard: Decimal
    available: Decimal
    fits: bool
    text: str


def compute_name(key: str) -> str:
    """"requests.cpu", "limits.cpu" and "cpu" all count CPU: "cpu"."""
    return key.removeprefix("requests.").removeprefix("limits.")


def requested(key: str, totals: Totals) -> Decimal | None:
    """How much of a quota resource this job takes; None for what it does not use."""
    name = compute_name(key)
    if name == "cpu":
        return totals.total_cpu
    if name == "memory":
        return totals.total_memory
    if name == GPU_RESOURCE:
        return Decimal(totals.total_gpus)
    if key in ("pods", "count/pods"):
        return Decimal(totals.pods)
    if key in _ONE_EACH:
        return Decimal(1)
    return None


def _selects(expression: dict, spec: JobSpec, best_effort: bool) -> bool:
    scope = expression.get("scopeName")
    operator = expression.get("operator", "Exists")
    values = [str(v) for v in as_list(expression.get("values"))]
    if scope == "PriorityClass":
        priority = spec.priority_class if isinstance(spec.priority_class, str) else ""
        return {"In": priority in values, "NotIn": priority not in values,
                "Exists": bool(priority), "DoesNotExist": not priority}.get(operator, True)
    # The pods have no activeDeadlineSeconds and no cross-namespace affinity.
    matches = {"Terminating": False, "NotTerminating": True, "BestEffort": best_effort,
               "NotBestEffort": not best_effort, "CrossNamespacePodAffinity": False}
    return matches.get(str(scope), True)


def quota_applies(quota: dict, spec: JobSpec, totals: Totals) -> bool:
    best_effort = not (totals.cpu_per_worker or totals.memory_per_worker
                       or totals.gpus_per_worker)
    spec_part = as_dict(quota.get("spec"))
    expressions = [{"scopeName": s, "operator": "Exists"} for s in as_list(spec_part.get("scopes"))]
    expressions += [as_dict(e) for e in as_list(
        get_path(spec_part, ["scopeSelector", "matchExpressions"]))]
    return all(_selects(e, spec, best_effort) for e in expressions)


def _parse(raw: object) -> Decimal:
    try:
        return parse_quantity(raw)  # anything else raises QuantityError
    except QuantityError:
        return ZERO


def resource_title(key: str) -> str:
    name = compute_name(key)
    limits = key.startswith("limits.")
    titles = {
        "cpu": _("CPU limits") if limits else _("CPUs"),
        "memory": _("Memory limits") if limits else _("Memory"),
        GPU_RESOURCE: _("GPU limits") if limits else _("GPUs"),
        "pods": _("Pods"), "count/pods": _("Pods"),
        "count/mpijobs.kubeflow.org": _("MPIJobs"), "services": _("Services"),
        "count/services": _("Services"), "configmaps": _("ConfigMaps"),
        "count/configmaps": _("ConfigMaps"), "secrets": _("Secrets"),
        "count/secrets": _("Secrets"), "count/jobs.batch": _("Jobs"),
    }
    return titles.get(name, key)


def requested_text(key: str, value: Decimal, rounding: str = ROUND_HALF_UP) -> str:
    """"8 GPUs", "34 CPUs", "136Gi of memory", "5 pods", "1 MPIJob" (memory that is no
    short exact figure rounded by `rounding`)."""
    name = compute_name(key)
    if name == "cpu":
        text = cpus(value)
    elif name == "memory":
        text = _("%(amount)s of memory") % {"amount": figure("memory", value, rounding)}
    elif name == GPU_RESOURCE:
        text = gpus(value)
    elif key in ("pods", "count/pods"):
        text = ngettext("%(count)d pod", "%(count)d pods", int(value)) % {"count": int(value)}
    elif key == "count/mpijobs.kubeflow.org":
        text = ngettext("%(count)d MPIJob", "%(count)d MPIJobs", int(value)) % {
            "count": int(value)}
    else:
        text = _("%(count)s %(resource)s") % {"count": number(name, value),
                                               "resource": resource_title(key)}
    if key.startswith("limits."):
        text = _("%(amount)s as limits") % {"amount": text}
    return text


def quota_lines(spec: JobSpec, totals: Totals, quotas: list[dict]) -> list[QuotaLine]:
    lines = []
    for quota in quotas:
        quota = as_dict(quota)
        if not quota_applies(quota, spec, totals):
            continue
        name = str(get_path(quota, ["metadata", "name"], ""))
        used_by_key = as_dict(get_path(quota, ["status", "used"]))
        for key, raw_hard in as_dict(get_path(quota, ["spec", "hard"])).items():
            asked = requested(str(key), totals)
            if not asked:
                continue
            hard = _parse(raw_hard)
            used = _parse(used_by_key.get(key, 0))
            available = max(hard - used, ZERO)
            unit = compute_name(str(key))
            text = _("%(resource)s: %(requested)s requested, %(available)s available "
                     "(%(used)s/%(hard)s in use)") % {
                "resource": resource_title(str(key)),
                "requested": figure(unit, asked, ROUND_CEILING),
                "available": figure(unit, available, ROUND_FLOOR), "used": figure(unit, used),
                "hard": figure(unit, hard)}
            lines.append(QuotaLine(quota=name, resource=str(key), requested=asked, used=used,
                                   hard=hard, available=available, fits=asked <= available,
                                   text=text))
    return sorted(lines, key=lambda line: _RANK.get(compute_name(line.resource), 9))


def where(namespace: str, quota: str, quota_count: int) -> str:
    if quota_count == 1:
        return _("the %(namespace)s quota") % {"namespace": namespace}
    return _('the %(namespace)s quota "%(quota)s"') % {"namespace": namespace, "quota": quota}


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def line_problem(line: QuotaLine, namespace: str, quota_count: int) -> str:
    """"Requested 8 GPUs but only 6 available under the team-nlp quota (10/16 in use).";
    more than the quota holds in all: "This job can never fit the team-nlp quota of 16
    GPUs: it asks for 32 GPUs."; a count quota full of finished jobs says they count."""
    unit = compute_name(line.resource)
    if line.hard >= 0 and line.requested > line.hard:
        return _("This job can never fit %(where)s of %(hard)s: it asks for %(requested)s.") % {
            "where": where(namespace, line.quota, quota_count),
            "hard": requested_text(line.resource, line.hard),
            "requested": requested_text(line.resource, line.requested, ROUND_CEILING)}
    if line.resource == "count/mpijobs.kubeflow.org":
        return _("%(where)s allows %(hard)s MPIJobs and holds %(used)s: finished jobs count "
                 "too, so delete those you no longer need (or give jobs "
                 "ttlSecondsAfterFinished, which deletes them after they finish).") % {
            "where": _capital(where(namespace, line.quota, quota_count)),
            "hard": number(unit, line.hard), "used": number(unit, line.used)}
    return _("Requested %(requested)s but only %(available)s available under %(where)s "
             "(%(used)s/%(hard)s in use).") % {
        "requested": requested_text(line.resource, line.requested, ROUND_CEILING),
        "available": figure(unit, line.available, ROUND_FLOOR), "where": where(
            namespace, line.quota, quota_count),
        "used": figure(unit, line.used), "hard": figure(unit, line.hard)}


def _has_default(limit_ranges: list[dict], resource: str) -> bool:
    for limit_range in limit_ranges:
        for item in as_list(get_path(limit_range, ["spec", "limits"])):
            item = as_dict(item)
            if item.get("type") == "Container" and (
                    resource in as_dict(item.get("default"))
                    or resource in as_dict(item.get("defaultRequest"))):
                return True
    return False


def unset_compute(spec: JobSpec, quotas: list[dict], limit_ranges: list[dict],
                  namespace: str) -> list[str]:
    """A quota on CPU or memory refuses pods that do not ask for it (unless a LimitRange
    fills in a default): one problem per resource left empty."""
    problems = []
    tracked = {compute_name(str(key)) for quota in quotas
               for key in as_dict(get_path(quota, ["spec", "hard"]))}
    model = spec.kind.spec_model
    sized = model is None or model.sizes_launcher  # else the kind's lead is sized elsewhere
    for resource, fields in (("cpu", ("cpu_per_worker", "launcher_cpu")),
                             ("memory", ("memory_per_worker", "launcher_memory"))):
        empty = [f for f in fields if not spec_amount(getattr(spec, f))
                 and (sized or not f.startswith("launcher_"))]
        if resource not in tracked or not empty or _has_default(limit_ranges, resource):
            continue
        values = {"namespace": namespace}
        if resource == "cpu":
            problems.append(_("The %(namespace)s quota limits CPU, so every pod must ask for "
                              "some: enter CPUs per worker and Launcher CPUs.") % values)
        else:
            problems.append(_("The %(namespace)s quota limits memory, so every pod must ask "
                              "for some: enter Memory per worker and Launcher memory.") % values)
    return problems
