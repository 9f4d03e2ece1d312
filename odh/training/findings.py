"""What validation reports: one finding per field, and what it may know about the project."""

from __future__ import annotations

from dataclasses import dataclass, field

ERROR = "error"
WARNING = "warning"
# the command's -np disagrees with Workers x slots (the wizard says it once they are chosen)
NP_MISMATCH = "np"


@dataclass(frozen=True)
class FieldError:
    """A problem with one field of a spec, in words that say how to fix it.

    `field` is the spec attribute ("workers"), an item of a list attribute
    ("env[2].name", "volumes[0].mount_path", "tolerations[1].effect"), or "manifest" for
    settings only a cloned or imported manifest can carry. `severity` is "error" (the
    cluster or the MPI Operator would refuse the job, or it cannot work: blocks creating)
    or "warning" (allowed, but probably not what was meant: shown, does not block).
    """

    field: str
    message: str
    severity: str = ERROR
    # which check found it, where a reader treats one apart ("np": `NP_MISMATCH`); not part
    # of what the finding says, so findings compare without it
    code: str = field(default="", compare=False)

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR


@dataclass
class ValidationContext:
    """What the dashboard knows about the target project; None means "unknown, skip"."""

    existing_names: set[str] = field(default_factory=set)
    priority_classes: set[str] | None = None
    pvc_names: set[str] | None = None
    local_queues: set[str] | None = None
    workload_priorities: set[str] | None = None  # Kueue's WorkloadPriorityClasses
    # LimitRange objects of the project as the API returns them.
    limit_ranges: list[dict] = field(default_factory=list)


def errors_of(findings: list[FieldError]) -> list[FieldError]:
    return [f for f in findings if f.is_error]


def warnings_of(findings: list[FieldError]) -> list[FieldError]:
    return [f for f in findings if not f.is_error]


def by_field(findings: list[FieldError]) -> dict[str, list[FieldError]]:
    """Findings grouped by field, in the order they were found."""
    grouped: dict[str, list[FieldError]] = {}
    for finding in findings:
        grouped.setdefault(finding.field, []).append(finding)
    return grouped
