"""The MPIJob's own rules: the settings only an MPIJob has (its MPI implementation, the
operator's clean-pod and launcher creation policies, its run policy), checked as the MPI
Operator's CRD would refuse them. validation.py runs them after the shared rules, asked
through the kind (`SpecModel.rules`)."""

from __future__ import annotations

from collections.abc import Iterator

from odh.training.findings import FieldError, ValidationContext
from odh.training.i18n import _, shown
from odh.training.kinds.mpijob.model import (
    CLEAN_POD_POLICIES,
    LAUNCHER_CREATION_POLICIES,
    MPI_IMPLEMENTATIONS,
    MPIJobSpec,
)

MAX_INT32 = 2**31 - 1


def _text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_choices(spec: MPIJobSpec, context: ValidationContext) -> Iterator[FieldError]:
    value = _text(spec.mpi_implementation)
    if value not in MPI_IMPLEMENTATIONS:
        yield FieldError("mpi_implementation", _('MPI implementation "%(value)s" is not '
                                                 "supported: choose OpenMPI, Intel or MPICH.")
                         % {"value": shown(value)})
    value = _text(spec.clean_pod_policy)
    if value not in CLEAN_POD_POLICIES:
        yield FieldError("clean_pod_policy", _('Clean-pod policy "%(value)s" is not supported: '
                                               "choose None, Running or All.")
                         % {"value": shown(value)})
    value = _text(spec.launcher_creation_policy)
    if value not in LAUNCHER_CREATION_POLICIES:
        yield FieldError("launcher_creation_policy", _(
            'Launcher creation policy "%(value)s" is not supported: choose AtStartup or '
            "WaitForWorkersReady.") % {"value": shown(value)})


def check_run_policy(spec: MPIJobSpec, context: ValidationContext) -> Iterator[FieldError]:
    ttl = spec.ttl_seconds_after_finished
    if ttl is not None and (not _whole(ttl) or not 0 <= ttl <= MAX_INT32):
        yield FieldError("ttl_seconds_after_finished", _(
            "TTL after finished must be a whole number of seconds from 0 to %(max)d, or empty to "
            "keep the finished Launcher until the job is deleted.") % {"max": MAX_INT32})
    backoff = spec.backoff_limit
    if backoff is not None and (not _whole(backoff) or not 0 <= backoff <= MAX_INT32):
        yield FieldError("backoff_limit", _(
            "Backoff limit must be a whole number from 0 to %(max)d (how many times a failed "
            "Launcher is retried), or empty for the default.") % {"max": MAX_INT32})


RULES = (check_choices, check_run_policy)
