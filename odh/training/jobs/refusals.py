"""What the SDK raises when a create is refused before anything is sent, and what it warns
of a create that goes ahead."""

from __future__ import annotations

from odh.training import creating, errors
from odh.training.i18n import _
from odh.training.jobs.arguments import SDK_FIELDS, fix_arguments
from odh.training.sdk import InvalidSpec


class QuotaWarning(UserWarning):
    """The job fits the cluster but not the quota's room now: it will wait, Pending."""


class SettingWarning(UserWarning):
    """A setting the wizard allows but warns about (an -np that does not match Workers x
    Slots per worker, a memory limit without request...): the job is created."""


def refusal_error(refused: creating.CreateRefused,
                  names: dict[str, str] | None = None) -> errors.ODHError:
    """A create refused before anything was sent, as the SDK raises it (`names`: the
    spec's fields as the job's constructor names them)."""
    if refused.reason == creating.UNKNOWN_FIELDS:
        return errors.ValidationError(refused.unknown[0], str(refused))
    if refused.reason == creating.NOT_SERVED:
        return errors.NotServed(str(refused), status=404)
    if refused.reason == creating.INVALID:
        return InvalidSpec(refused.findings, names=SDK_FIELDS if names is None else names)
    if refused.reason == creating.COUNT_QUOTA_FULL:  # nothing of the job's mends it
        room = refused.room  # the oldest finished jobs first, with the calls that delete them
        first = [room.label() + " (" + "; ".join(
            f"MPIJob.get({name!r}, {room.namespace!r}).delete()" for name in room.names)
            + ")"] if room is not None and room.makes_room else []
        return errors.ResourceQuotaExceeded(str(refused),
                                            suggestions=first + errors.count_quota_advice())
    fixes = refused.checked.fit.fixes if refused.checked is not None else []
    return errors.ResourceQuotaExceeded(
        " ".join(refused.problems),
        suggestions=[f"{fix.label} ({fix_arguments(fix)})" for fix in fixes]
        + [_("Pass force=True to create it anyway.")])
