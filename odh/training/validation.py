"""Checking a spec before it is created: every message says what is wrong and how
to fix it, in the product's words.

The rules cover what the API server and the MPI Operator would refuse (BEHAVIOR.md: names
that leave room for `<name>-worker-<n>` and `<name>-launcher`, the enums, restart policies,
Kubernetes' syntax for labels, keys and quantities), what the project lacks (a name taken,
a claim, queue or priority class that does not exist, LimitRange bounds), and sanity
checks that are allowed but probably wrong, reported as warnings. The API server's dry
run at submit time remains the final word.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from odh.training.checks.affinity import check_node_affinity
from odh.training.checks.rules_fields import check_description, check_sources, check_working_dir
from odh.training.checks.rules_job import (
    check_command,
    check_images,
    check_name,
    check_namespace,
    check_resources,
    check_slots,
    check_workers,
)
from odh.training.checks.rules_pod import (
    check_env,
    check_limit_ranges,
    check_manifest,
    check_metadata,
    check_placement,
    check_volumes,
)
from odh.training.findings import (
    ERROR,
    WARNING,
    FieldError,
    ValidationContext,
    by_field,
    errors_of,
    warnings_of,
)
from odh.training.spec import JobSpec

__all__ = ["ERROR", "WARNING", "FieldError", "ValidationContext", "by_field", "errors_of",
           "validate_spec", "warnings_of"]

Rule = Callable[[JobSpec, ValidationContext], Iterable[FieldError]]

# In the order the wizard shows the fields, so the first finding is the first to fix: the
# spec's kind's own rules (its own settings) come between these two.
_BEFORE_KIND: list[Rule] = [
    check_name, check_namespace, check_description, check_images, check_command,
    check_working_dir, check_workers, check_resources, check_slots,
]
_AFTER_KIND: list[Rule] = [
    check_env, check_volumes, check_sources, check_placement, check_node_affinity,
    check_metadata, check_limit_ranges, check_manifest,
]


def validate_spec(spec: JobSpec, context: ValidationContext | None = None
                  ) -> list[FieldError]:
    """Every problem found, errors and warnings (see FieldError.severity); [] when fine.
    The shared rules' findings on a field the kind checks itself (`SpecModel.own_fields`)
    are left to the kind's rules."""
    context = context or ValidationContext()
    model = spec.kind.spec_model
    own = model.own_fields if model else frozenset()

    def shared(rules: list[Rule]) -> list[FieldError]:
        return [f for rule in rules for f in rule(spec, context)
                if f.field.partition("[")[0] not in own]

    kinds = [f for rule in (model.rules if model else ()) for f in rule(spec, context)]
    return [*shared(_BEFORE_KIND), *kinds, *shared(_AFTER_KIND)]
