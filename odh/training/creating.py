"""One way to create a job: what every create needs, in one function, for the wizard (with
clone, retry, import and templates, through training/mutations.py, which adds the audit
row), the SDK (`MPIJob.create`, `TrainingClient.create_mpijob`) and the CLI (`odh training
create`). Each says the outcome its own way (a page, an exception, lines on stderr), from
the same verdict:

1. for a spec read from a manifest, the fields the cluster's API does not declare (asked
   of the API server with a strict dry run);
2. `preflight`: may the person create jobs there (Forbidden), the wizard's validation with
   what the project holds (the name taken, claims, queues, priorities, LimitRanges) and
   the resource check against the quotas, LimitRanges and nodes, with its fixes;
3. the creator recorded on the job, as the dashboard records it;
4. the create, or with `dry_run` the API server's dry run: one request either way (the
   API server runs the same schema and admission checks, the quota's included, for
   both, and refuses a create as it would refuse its dry run).

A refusal before anything was sent is a `CreateRefused` naming its reason and carrying
the findings or the resource check with its fixes; the cluster's own refusals are the
`odh.training.errors` they always were.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from odh.training import errors
from odh.training.capacity.fit import COUNT_QUOTA
from odh.training.capacity.preflight import Preflight, preflight
from odh.training.capacity.quota import line_problem
from odh.training.cluster.client import ClusterClient
from odh.training.findings import FieldError
from odh.training.i18n import _
from odh.training.manifests.importing import unknown_fields, unknown_fields_message
from odh.training.spec import JobSpec, build_manifest
from odh.training.status.room import RoomOffer, room_offer

UNKNOWN_FIELDS = "unknown-fields"
INVALID = "invalid"
NEVER_FITS = "never-fits"
NOT_SERVED = "not-served"
COUNT_QUOTA_FULL = "count-quota-full"


class CreateRefused(errors.ODHError):
    """Nothing was created: `reason` is UNKNOWN_FIELDS (`unknown` names them), INVALID
    (`findings`: each field's problem: for a TrainJob, its runtime's too), NEVER_FITS
    (`checked.fit`: the problems and the fixes), NOT_SERVED (the cluster lacks the kind's
    API: the message says what to do) or COUNT_QUOTA_FULL (the quota on the number of jobs
    is full: the cluster would refuse the job itself, whatever its size; finished jobs fill
    it, and deleting them is the fix: `room` names the oldest the person may delete);
    `checked` is the preflight, when it ran."""

    def __init__(self, message: str, reason: str, *, checked: Preflight | None = None,
                 unknown: list[str] | None = None, room: RoomOffer | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.checked = checked
        self.unknown = unknown or []
        self.room = room

    @property
    def findings(self) -> list[FieldError]:
        return self.checked.errors if self.checked is not None else []

    @property
    def problems(self) -> list[str]:
        """The resource check's problems, in words (NEVER_FITS)."""
        if self.checked is None:
            return []
        fit = self.checked.fit
        return fit.problems + ([fit.node_problem] if fit.node_problem else [])


@dataclass
class Created:
    object: dict
    checked: Preflight
    spec: JobSpec


def check(client: ClusterClient, spec: JobSpec, *, from_manifest: bool = False,
          force: bool = False) -> Preflight:
    """Steps 1 and 2: the preflight of `spec`, or CreateRefused (Forbidden when the
    person may not create jobs in its project). `force` lets a job that can never start
    as it is through (the SDK's force=True, the CLI's --force)."""
    if from_manifest:  # a misspelt field is named as the manifest spells it, first
        unknown = unknown_fields(client, spec.namespace, build_manifest(spec))
        if unknown:
            raise CreateRefused(unknown_fields_message(unknown), UNKNOWN_FIELDS,
                                unknown=unknown)
    try:
        checked = preflight(client, spec)
    except errors.NotServed as e:
        raise CreateRefused(e.message, NOT_SERVED) from None
    if checked.errors:
        raise CreateRefused(" ".join(f.message for f in checked.errors), INVALID,
                            checked=checked)
    if checked.fit.count_quota_full:  # no --force: the API server refuses the job object
        quotas = len({line.quota for line in checked.fit.lines})
        said = [line_problem(line, spec.namespace, quotas) for line in checked.fit.lines
                if line.resource == COUNT_QUOTA and not line.fits]
        raise CreateRefused(" ".join([*said, count_quota_advice()]), COUNT_QUOTA_FULL,
                            checked=checked,
                            room=room_offer(client, spec.namespace, checked.fit))
    if checked.never_fits and not force:
        fit = checked.fit
        said = fit.problems + ([fit.node_problem] if fit.node_problem else [])
        raise CreateRefused(_("This job can never start as it is: %(problems)s")
                            % {"problems": " ".join(said)}, NEVER_FITS, checked=checked)
    return checked


def count_quota_advice() -> str:
    """What to do about a full quota on the number of jobs, besides deleting finished ones
    (which the quota's line says)."""
    return _("Or ask the project's administrator for a larger quota. Nothing was created.")


def create(client: ClusterClient, spec: JobSpec, *, created_by: str = "",
           dry_run: bool = False, force: bool = False, from_manifest: bool = False,
           checked: Preflight | None = None) -> Created:
    """Create the job `spec` describes, of its kind, as the person `client` speaks for
    (`created_by`: their user name, recorded on the job unless the spec names one).
    `checked`: a preflight the caller already ran (and showed) for this spec."""
    if created_by and not spec.created_by:
        spec = dataclasses.replace(spec, created_by=created_by)
    if checked is None:
        checked = check(client, spec, from_manifest=from_manifest, force=force)
    manifest = build_manifest(spec)
    # one request: the server's dry run answers a dry run; a create is admitted by the
    # same validation and admission, and refused with the same error, as its dry run
    answer = client.create_job(spec.kind, spec.namespace, manifest, dry_run=dry_run)
    return Created(object=answer, checked=checked, spec=spec)
