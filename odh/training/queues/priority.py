"""A cluster administrator changes a Kueue Workload's priority: to one of the cluster's
WorkloadPriorityClasses, as Kueue itself sets it when a job names one (label
`kueue.x-k8s.io/priority-class`): `spec.priorityClassName`, `spec.priorityClassSource`
`kueue.x-k8s.io/workloadpriorityclass` and `spec.priority` the class's value. Kueue's
Workload validation keeps the pod sets of a Workload with quota reserved, not its
priority: a waiting Workload moves in its queue's order at once, an admitted one counts
with its new priority when Kueue next preempts. A finished Workload is left alone (its
priority no longer decides anything).
"""

from __future__ import annotations

from dataclasses import dataclass

from odh.training.i18n import _
from odh.training.paths import as_dict, as_list, get_path

SOURCE = "kueue.x-k8s.io/workloadpriorityclass"


@dataclass(frozen=True)
class PriorityChoice:
    name: str
    value: int

    @property
    def label(self) -> str:
        """"high (1000)"."""
        return f"{self.name} ({self.value})"


def choices(priority_classes: list[dict]) -> list[PriorityChoice]:
    """The WorkloadPriorityClasses, highest first."""
    found = [PriorityChoice(str(get_path(c, ["metadata", "name"], "") or ""),
                            int(as_dict(c).get("value") or 0)) for c in priority_classes]
    return sorted((c for c in found if c.name), key=lambda c: (-c.value, c.name))


def current(workload: dict) -> str:
    """"normal (100)", or the bare number without a class."""
    spec = as_dict(workload.get("spec"))
    value = int(spec.get("priority") or 0)
    name = str(spec.get("priorityClassName") or "")
    return f"{name} ({value})" if name else str(value)


def finished(workload: dict) -> bool:
    return any(as_dict(c).get("type") == "Finished" and as_dict(c).get("status") == "True"
               for c in as_list(get_path(workload, ["status", "conditions"])))


def check(workload: dict, chosen: str, offered: list[PriorityChoice]) -> str:
    """Why the change cannot be made ("" : it can)."""
    if finished(workload):
        return _("This job's workload has finished: its priority no longer decides "
                 "anything, so it is left as it is.")
    if chosen not in {c.name for c in offered}:
        return _("Choose one of the cluster's workload priority classes.")
    return ""


def patch(workload: dict, choice: PriorityChoice) -> dict:
    """A JSON merge patch setting the priority, conditional on the resourceVersion read."""
    return {"metadata": {"resourceVersion": str(get_path(
        workload, ["metadata", "resourceVersion"], "") or "")},
            "spec": {"priorityClassName": choice.name, "priorityClassSource": SOURCE,
                     "priority": choice.value}}
