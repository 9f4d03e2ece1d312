"""What can go wrong when talking to the cluster, in terms a person can act on.

`ClusterClient` turns every `ApiException` and connection failure into one of these, so
callers (dashboard views, the SDK, the CLI) never see HTTP details or stack traces.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ClusterError(Exception):
    message: str
    status: int = 0
    reason: str = ""
    causes: list[dict] = field(default_factory=list)
    namespace: str = ""

    def __str__(self) -> str:
        return self.message


class Unauthorized(ClusterError):
    """The token is missing, expired or revoked: sign in again."""


class Forbidden(ClusterError):
    """RBAC said no (or an admission plugin refused)."""


class QuotaExceeded(Forbidden):
    """A ResourceQuota refused the request (`exceeded quota: ...`)."""


class NotFound(ClusterError):
    pass


class Conflict(ClusterError):
    """Already exists, or the object changed since it was read."""


class Invalid(ClusterError):
    """422: the object breaks the API's rules; `causes` name the fields."""


class ClusterUnavailable(ClusterError):
    """The API server could not be reached or did not answer in time."""


class JobFailedError(Exception):
    """A job that was waited for failed. Carries the dashboard's diagnosis of it: the
    headline (`message`), whose problem it is (`culprit`: code, configuration, platform,
    capacity), what to do (`suggestions`, in order), the last lines of the log that tells
    (`logs`), and the job's status summary (`status`)."""

    def __init__(self, message: str, logs: list[str] | None = None, status: object = None,
                 diagnosis: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.logs = list(logs or [])
        self.status = status
        self.diagnosis = diagnosis
        self.culprit = str(getattr(diagnosis, "culprit", "") or "")
        self.suggestions = [s.text for s in getattr(diagnosis, "suggestions", [])]

    def __str__(self) -> str:
        return self.message
