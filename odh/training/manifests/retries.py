"""Automatic retry (MPIJob-033): a job that asks to be started again when it fails says so
on itself, in annotations, so that whichever watcher replica sees it fail can act on it:

    opendatahub.io/retries: "2"          at most two retries
    opendatahub.io/retry-on: platform    only failures the diagnosis puts on the platform
                                         (a node lost, an eviction, a preemption); "all":
                                         any failure

Each retry is a new job, `<first>-retry-<n>`, a clone of the job that failed (the same
clone the wizard's Clone and Retry make: odh.training.spec.clone_spec), carrying the same
wish and what links it to the first:

    opendatahub.io/retry-of: <first>      the first job's name
    opendatahub.io/retry-of-uid: <uid>    the first job's uid (the retries' key)
    opendatahub.io/retry-attempt: "1"     which retry this is

The n-th retry waits `base * 2^(n-1)` after the failure (`backoff_seconds`). The decision
(which failures) is odh.training.diagnosis.retryable's; the watcher's part (once, across
replicas) is training/retries.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from odh.training.checks.names import max_job_name_length
from odh.training.i18n import _, ngettext
from odh.training.kinds import CREATED_BY_ANNOTATION, RETRY_LINK_ANNOTATIONS
from odh.training.paths import as_dict, get_path
from odh.training.spec import JobSpec, clone_spec, read_manifest

RETRIES_ANNOTATION = "opendatahub.io/retries"
RETRY_ON_ANNOTATION = "opendatahub.io/retry-on"
# what links a retry to the first: dropped by every clone (odh/training/kinds/base.py)
RETRY_OF_ANNOTATION, RETRY_OF_UID_ANNOTATION, RETRY_ATTEMPT_ANNOTATION = \
    RETRY_LINK_ANNOTATIONS
PLATFORM = "platform"
ALL = "all"
RETRY_ON = (PLATFORM, ALL)
MAX_RETRIES = 5


@dataclass(frozen=True)
class RetryPolicy:
    """What a job asked for: at most `retries` retries, of which failures (`on`)."""

    retries: int = 0
    on: str = PLATFORM

    @property
    def all_failures(self) -> bool:
        return self.on == ALL


@dataclass(frozen=True)
class Lineage:
    """Where a job stands among its retries: the first job (name, uid) and which retry it
    is (0: the first itself)."""

    first: str
    first_uid: str
    attempt: int


def check_retries(retries: int | str | None) -> int:
    """The number of retries asked for, 0 to MAX_RETRIES; ValueError says how to fix it."""
    if retries is None or retries == "":
        return 0
    try:
        number = int(str(retries).strip())
    except ValueError:
        number = -1
    if not 0 <= number <= MAX_RETRIES:
        raise ValueError(_("Retries on failure: give a whole number from 0 to %(most)d.")
                         % {"most": MAX_RETRIES})
    return number


def retry_annotations(retries: int | str | None, on: str = PLATFORM) -> dict[str, str]:
    """The annotations that ask for `retries` retries (none for 0)."""
    number = check_retries(retries)
    if on not in RETRY_ON:
        raise ValueError(_("Retry on: use “platform” (failures of the platform: a node lost, "
                           "an eviction, a preemption) or “all” (any failure)."))
    if not number:
        return {}
    return {RETRIES_ANNOTATION: str(number), RETRY_ON_ANNOTATION: on}


def with_retries(annotations: dict[str, str], retries: int | str | None,
                 on: str = PLATFORM) -> dict[str, str]:
    """`annotations` with the retry wish replaced by this one."""
    kept = {k: v for k, v in annotations.items()
            if k not in (RETRIES_ANNOTATION, RETRY_ON_ANNOTATION)}
    return {**kept, **retry_annotations(retries, on)}


def _annotations(job: dict) -> dict:
    return as_dict(get_path(job, ["metadata", "annotations"]))


def policy_of(annotations: dict) -> RetryPolicy:
    """The wish these annotations record; a value that makes no sense asks for nothing."""
    try:
        retries = check_retries(annotations.get(RETRIES_ANNOTATION))
    except ValueError:
        retries = 0
    on = str(annotations.get(RETRY_ON_ANNOTATION, PLATFORM)).strip().lower()
    return RetryPolicy(retries, on if on in RETRY_ON else PLATFORM)


def job_policy(job: dict) -> RetryPolicy:
    return policy_of(_annotations(job))


def lineage_of(job: dict) -> Lineage:
    annotations = _annotations(job)
    name = str(get_path(job, ["metadata", "name"], "") or "")
    uid = str(get_path(job, ["metadata", "uid"], "") or "")
    first = str(annotations.get(RETRY_OF_ANNOTATION, "") or "")
    try:
        attempt = int(str(annotations.get(RETRY_ATTEMPT_ANNOTATION, "0")))
    except ValueError:
        attempt = 0
    if not first or attempt < 1:
        return Lineage(name, uid, 0)
    return Lineage(first, str(annotations.get(RETRY_OF_UID_ANNOTATION, "") or ""), attempt)


def retry_name(first: str, attempt: int, workers: int = 1) -> str:
    """`<first>-retry-<attempt>`, the first's name shortened where the whole would make
    pod names too long."""
    suffix = f"-retry-{attempt}"
    room = max_job_name_length(workers) - len(suffix)
    return first[:room].rstrip("-") + suffix


def backoff_seconds(attempt: int, base: float) -> float:
    """How long the `attempt`-th retry waits after the failure: base * 2^(attempt-1)."""
    return base * 2 ** max(0, attempt - 1)


def retry_spec(job: dict, attempt: int) -> JobSpec:
    """The `attempt`-th retry of the first job, cloned from `job` (the one that failed):
    its configuration, its wish, its link to the first, and the first's creator."""
    spec = read_manifest(job)
    lineage = lineage_of(job)
    annotations = _annotations(job)
    retry = clone_spec(spec, retry_name(lineage.first, attempt, max(spec.workers, 1)))
    retry.annotations = {**retry.annotations, RETRY_OF_ANNOTATION: lineage.first,
                         RETRY_OF_UID_ANNOTATION: lineage.first_uid,
                         RETRY_ATTEMPT_ANNOTATION: str(attempt)}
    retry.created_by = str(annotations.get(CREATED_BY_ANNOTATION, "") or spec.created_by)
    return retry


# -- in words (the wizard's review, the job page, `odh training describe`) ----------------------
def wish_text(policy: RetryPolicy) -> str:
    """"Up to 2 retries after a failure of the platform"; "" when none is asked for."""
    if policy.retries <= 0:
        return ""
    if policy.all_failures:
        return ngettext("Up to %(n)d retry after any failure",
                        "Up to %(n)d retries after any failure",
                        policy.retries) % {"n": policy.retries}
    return ngettext("Up to %(n)d retry after a failure of the platform (a node lost, an "
                    "eviction, a preemption)",
                    "Up to %(n)d retries after a failure of the platform (a node lost, an "
                    "eviction, a preemption)", policy.retries) % {"n": policy.retries}


def lineage_text(job: dict) -> str:
    """"Retry 1 of 2 of bert-a" for an automatic retry; "" for any other job."""
    lineage = lineage_of(job)
    if lineage.attempt < 1:
        return ""
    return _("Retry %(attempt)d of %(retries)d of %(first)s") % {
        "attempt": lineage.attempt, "retries": max(job_policy(job).retries, lineage.attempt),
        "first": lineage.first}
