"""Changing limits an administrator types: a project's ResourceQuota (GPUs, CPUs, memory,
the number of MPIJobs) and a Kueue ClusterQueue's nominal quota per flavor.

What is typed is checked here, for the dashboard's forms alike: a Kubernetes quantity
("16", "500m", "1Ti"), never negative, a whole number for GPUs and job counts. A new
limit below what is in use now is made, with a warning: that is what the cluster does
(running pods and admitted workloads keep running; new ones are refused or wait until
use falls below it), and an administrator may mean it (to drain a project). An emptied
field lifts that limit (the line leaves the quota); a field left as it was changes
nothing.

A change is conditional on what the form showed: the values read when the page was made
travel with the form, and when the cluster's differ (someone else changed them) nothing
is written (`Conflict`); the write itself carries the resourceVersion just read, so a
change made in between is refused by the API server too (409).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from decimal import Decimal

from odh.training.capacity.quota import compute_name, requested_text, resource_title
from odh.training.i18n import _
from odh.training.manifests.totals import ZERO, amount
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import GPU_RESOURCE, QuantityError, parse_quantity

MPIJOB_COUNT = "count/mpijobs.kubeflow.org"
# the form's fields: (field name, the quota keys that hold it, most usual first)
QUOTA_FIELDS = (
    ("gpus", (f"requests.{GPU_RESOURCE}", f"limits.{GPU_RESOURCE}")),
    ("cpu", ("requests.cpu", "cpu", "limits.cpu")),
    ("memory", ("requests.memory", "memory", "limits.memory")),
    ("mpijobs", (MPIJOB_COUNT,)),
)
_WHOLE = (GPU_RESOURCE, MPIJOB_COUNT)


@dataclass
class AmountField:
    """One limit on a form: its key, what it is now, what is used, what was typed."""

    name: str      # the form field's name
    key: str       # the quota's key, or the ClusterQueue's resource name
    current: str   # the limit as the cluster holds it ("" : none)
    used: Decimal
    typed: str = ""
    shown: str = ""  # the limit as the form showed it (what the change is conditional on)
    error: str = ""
    warning: str = ""
    label: str = ""

    @property
    def title(self) -> str:
        return self.label or resource_title(self.key)

    @property
    def unit(self) -> str:
        return compute_name(self.key)

    @property
    def used_text(self) -> str:
        """"10 GPUs", "136Gi of memory", "5 MPIJobs"."""
        return requested_text(self.key, self.used)

    @property
    def changed(self) -> bool:
        return not self.error and _same(self.typed) != _same(self.current)


@dataclass
class Change:
    key: str
    title: str
    old: str
    new: str

    @property
    def text(self) -> str:
        """"GPUs: 24 -> 32" (the audit row's words; "none" where there was no limit)."""
        return f"{self.key}: {self.old or 'none'} -> {self.new or 'none'}"


def _same(text: str) -> Decimal | str:
    try:
        return parse_quantity(text.strip()) if text.strip() else ""
    except QuantityError:
        return text.strip()


def check_amount(f: AmountField, what: str, required: bool = False) -> None:
    """Set `f.error` or `f.warning` for what was typed (`what`: "the quota", ...)."""
    f.typed = f.typed.strip()
    if not f.typed:
        if required:
            f.error = _("Enter a value for %(resource)s: a number such as 8, or 0 for "
                        "none.") % {"resource": f.title}
        return
    try:
        value = parse_quantity(f.typed)
    except QuantityError as e:
        f.error = str(e)
        return
    if value < 0:
        f.error = _("%(resource)s cannot be negative: enter 0 or more (0 allows none).") % {
            "resource": f.title}
    elif compute_name(f.key) in _WHOLE and value != value.to_integral_value():
        f.error = _("%(resource)s count whole: enter a whole number such as %(example)s.") % {
            "resource": f.title, "example": int(value) + 1}
    elif f.changed and value < f.used:
        f.warning = _("%(used)s in use now, more than %(new)s: what runs keeps running, "
                      "but nothing new is let in until use falls below %(what)s.") % {
            "used": requested_text(f.key, f.used), "new": requested_text(f.key, value),
            "what": what}


def stale(fields: list[AmountField]) -> list[AmountField]:
    """The fields whose limit in the cluster is no longer the one the form showed."""
    return [f for f in fields if _same(f.shown) != _same(f.current)]


def changes(fields: list[AmountField]) -> list[Change]:
    return [Change(f.key, f.title, f.current, f.typed) for f in fields if f.changed]


# -- a project's ResourceQuota ---------------------------------------------------------------
def quota_fields(quota: dict) -> list[AmountField]:
    """The four limits an administrator changes, as the quota holds them now (a key the
    quota lacks: its first, most usual form, empty)."""
    hard = as_dict(get_path(quota, ["spec", "hard"]))
    used = as_dict(get_path(quota, ["status", "used"]))
    fields = []
    for name, keys in QUOTA_FIELDS:
        key = next((k for k in keys if k in hard), keys[0])
        current = str(hard.get(key, "") or "")
        fields.append(AmountField(name=name, key=key, current=current, shown=current,
                                  typed=current, used=amount(used.get(key, "0"))))
    return fields


def quota_patch(fields: list[AmountField], resource_version: str) -> dict:
    """A JSON merge patch of spec.hard (null lifts a limit), conditional on
    `resource_version`."""
    hard: dict[str, str | None] = {f.key: f.typed or None for f in fields if f.changed}
    return {"metadata": {"resourceVersion": resource_version}, "spec": {"hard": hard}}


# -- a Kueue ClusterQueue's nominal quota ------------------------------------------------------
def nominal_fields(cluster_queue: dict) -> list[AmountField]:
    """Each (flavor, resource) nominal quota of a ClusterQueue with its usage."""
    usage: dict[tuple[str, str], Decimal] = {}
    for flavor in as_list(get_path(cluster_queue, ["status", "flavorsUsage"])):
        for r in as_list(as_dict(flavor).get("resources")):
            usage[(str(as_dict(flavor).get("name")), str(as_dict(r).get("name")))] = amount(
                str(as_dict(r).get("total", "0")))
    fields = []
    for g, group in enumerate(as_list(get_path(cluster_queue, ["spec", "resourceGroups"]))):
        for fl, flavor in enumerate(as_list(as_dict(group).get("flavors"))):
            flavor_name = str(as_dict(flavor).get("name") or "")
            for r, resource in enumerate(as_list(as_dict(flavor).get("resources"))):
                key = str(as_dict(resource).get("name") or "")
                current = str(as_dict(resource).get("nominalQuota", "") or "")
                fields.append(AmountField(
                    name=f"nominal-{g}-{fl}-{r}", key=key, current=current, shown=current,
                    typed=current, used=usage.get((flavor_name, key), ZERO),
                    label=_("%(resource)s (%(flavor)s)") % {
                        "resource": resource_title(key), "flavor": flavor_name}))
    return fields


def nominal_patch(cluster_queue: dict, fields: list[AmountField]) -> dict:
    """A JSON merge patch replacing spec.resourceGroups with the typed nominal quotas,
    conditional on the resourceVersion read (a list is replaced whole by a merge patch)."""
    groups = copy.deepcopy(as_list(get_path(cluster_queue, ["spec", "resourceGroups"])))
    by_name = {f.name: f for f in fields}
    for g, group in enumerate(groups):
        for fl, flavor in enumerate(as_list(as_dict(group).get("flavors"))):
            for r, resource in enumerate(as_list(as_dict(flavor).get("resources"))):
                f = by_name.get(f"nominal-{g}-{fl}-{r}")
                if f is not None and f.changed and f.typed:
                    resource["nominalQuota"] = f.typed
    return {"metadata": {"resourceVersion": str(get_path(
        cluster_queue, ["metadata", "resourceVersion"], "") or "")},
            "spec": {"resourceGroups": groups}}
