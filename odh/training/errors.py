"""What can go wrong, in terms a person can act on: the SDK's exception hierarchy.

    ODHError                      every error the SDK and the CLI raise
    ├── ValidationError           a setting the dashboard would refuse (field, message)
    ├── AuthenticationError       no cluster credentials, or they were refused
    ├── ResourceQuotaExceeded     a quota (or a node) has no room for the job (details)
    ├── JobFailedError            a job that was waited for failed (message, logs, status)
    ├── JobTimeoutError           ... or was not done in time (also a TimeoutError)
    └── ClusterError              the cluster refused or could not be reached
        ├── Unauthorized          (an AuthenticationError too)
        ├── Forbidden
        │   └── QuotaExceeded     (a ResourceQuotaExceeded too)
        │       └── CountQuotaExceeded  the quota on the number of jobs is full
        ├── NotFound, Conflict, Invalid, ClusterUnavailable

Each carries `message`, `code` (the class's plan name, e.g. "ResourceQuotaExceeded"),
`details` and `suggestions` (sentences saying what to do, the dashboard's words).
`ClusterClient` turns every `ApiException` and connection failure into a ClusterError, so
callers (dashboard views, the SDK, the CLI) never see HTTP details or stack traces.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from odh.training.i18n import _


class ODHError(Exception):
    """The base of every error of the SDK and the CLI."""

    code = "ODHError"

    def __init__(self, message: str = "", *, details: str = "",
                 suggestions: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or message
        self.suggestions = list(suggestions or [])

    def __str__(self) -> str:
        return self.message


class ValidationError(ODHError, ValueError):
    """A setting the dashboard would refuse. `field` names it as the SDK spells it
    ("workers", "worker_resources.gpus"), `message` says how to fix it."""

    code = "ValidationError"

    def __init__(self, field: str, message: str, *, suggestions: list[str] | None = None
                 ) -> None:
        super().__init__(f"{field}: {message}" if field else message, details=message,
                         suggestions=suggestions)
        self.field = field


class AuthenticationError(ODHError):
    """No cluster credentials (log in with `oc login`), or the cluster refused them."""

    code = "AuthenticationError"


class ResourceQuotaExceeded(ODHError):
    """The project's quota (or the cluster's nodes) cannot hold the job. `details`: what
    was asked against what is there, e.g. "Requested 8 GPUs but only 4 available (12/16
    in use)"."""

    code = "ResourceQuotaExceeded"

    def __init__(self, details: str, suggestions: list[str] | None = None) -> None:
        super().__init__(details, details=details, suggestions=suggestions)


class JobTimeoutError(ODHError, TimeoutError):
    """A job was not where it was awaited to be in time; `status` is where it was."""

    code = "Timeout"

    def __init__(self, message: str, status: object = None, summary: object = None) -> None:
        super().__init__(message)
        self.status = status  # a JobStatus: where the job was (None: it was deleted)
        self.summary = summary  # the dashboard's JobSummary, where one was read


@dataclass
class ClusterError(ODHError):
    message: str
    status: int = 0
    reason: str = ""
    causes: list[dict] = field(default_factory=list)
    namespace: str = ""
    suggestions: list[str] = field(default_factory=list)

    code = "ClusterError"

    def __post_init__(self) -> None:
        Exception.__init__(self, self.message)
        self.details = self.message
        if not self.suggestions:
            self.suggestions = self.advice()

    def advice(self) -> list[str]:
        """What to do about this kind of refusal, when the refusal itself says nothing."""
        return []

    def __str__(self) -> str:
        return self.message


class Unauthorized(ClusterError, AuthenticationError):
    """The token is missing, expired or revoked: sign in again."""

    code = "AuthenticationError"

    def advice(self) -> list[str]:
        return [_('Log in again with "oc login" (your token may have expired).')]


class Forbidden(ClusterError):
    """RBAC said no (or an admission plugin refused)."""

    code = "Forbidden"

    def advice(self) -> list[str]:
        return [_("Ask the project's administrator for the access you need (the edit role "
                  "lets you create and change training jobs).")]


class QuotaExceeded(Forbidden, ResourceQuotaExceeded):
    """A ResourceQuota refused the request (`exceeded quota: ...`)."""

    code = "ResourceQuotaExceeded"

    def advice(self) -> list[str]:
        return [_("Ask for fewer Workers or less per Worker."),
                _("Wait for running jobs to complete."),
                _("Contact your administrator to increase the quota.")]


class CountQuotaExceeded(QuotaExceeded):
    """A quota on the number of objects (`count/mpijobs.kubeflow.org`) refused the job
    itself: finished jobs count, so deleting them makes room, and a smaller job or a
    Kueue queue does not. `message` says so; `details` keeps the cluster's words."""

    def advice(self) -> list[str]:
        return count_quota_advice()


def count_quota_advice() -> list[str]:
    """What to do when the quota on the number of jobs is full."""
    return [_("Delete finished jobs you no longer need: they count against the quota."),
            _("Ask the project's administrator for a larger quota.")]


class NotFound(ClusterError):
    code = "NotFound"


class NotServed(NotFound):
    """The cluster does not serve an API a job needs (404 on its group): the operator that
    brings it is not installed. The message says what to do."""

    code = "NotServed"


class Conflict(ClusterError):
    """Already exists, or the object changed since it was read."""

    code = "Conflict"


class Invalid(ClusterError):
    """422: the object breaks the API's rules; `causes` name the fields."""

    code = "Invalid"


class ClusterUnavailable(ClusterError):
    """The API server could not be reached or did not answer in time."""

    code = "ClusterUnavailable"

    def advice(self) -> list[str]:
        return [_("Check your network connection and the cluster's address (oc whoami "
                  "--show-server), then try again.")]


class JobFailedError(ODHError):
    """A job that was waited for failed. Carries the dashboard's diagnosis of it: the
    headline (`message`), whose problem it is (`culprit`: code, configuration, platform,
    capacity), what to do (`suggestions`, in order), the last lines of the log that tells
    (`logs`), the job's status (`status`, a JobStatus) and the dashboard's summary of it
    (`summary`)."""

    def __init__(self, message: str, logs: list[str] | None = None, status: object = None,
                 diagnosis: object = None, *, summary: object = None) -> None:
        super().__init__(message, suggestions=[
            s.text for s in getattr(diagnosis, "suggestions", [])])
        self.logs = list(logs or [])
        self.status = status  # a JobStatus (phase, Workers, times)
        self.summary = summary  # the dashboard's JobSummary, where one was read
        self.diagnosis = diagnosis
        self.culprit = str(getattr(diagnosis, "culprit", "") or "")

    code = "JobFailed"
