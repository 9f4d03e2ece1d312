"""Room in a full quota on the number of MPIJobs (`count/mpijobs.kubeflow.org`): finished
jobs count too, so deleting the oldest of them is what makes room. `room_offer` names
them, read with the person's token and limited to the jobs that person may delete; the
wizard offers them behind a confirmation, the CLI prints the commands that delete them,
the SDK names them in its refusal's suggestions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from odh.training import errors
from odh.training.capacity.fit import COUNT_QUOTA, FitReport
from odh.training.cluster.client import ClusterClient
from odh.training.durations import format_duration
from odh.training.i18n import _, ngettext
from odh.training.kinds import JobKind, kind_counted_by
from odh.training.quantity import parse_quantity
from odh.training.status.summarize import summarize
from odh.training.status.summary import Phase

# SelfSubjectAccessReviews asked, at most, when the person may not delete every job of the
# project but perhaps some by name (a Role with resourceNames)
_MAX_NAMED_REVIEWS = 20


@dataclass
class FinishedJob:
    name: str
    status: str  # Succeeded or Failed
    finished: datetime | None

    def text(self, now: datetime | None = None) -> str:
        """"bert-ft (Succeeded 3d ago)"."""
        now = now or datetime.now(UTC)
        since = " ".join(format_duration((now - self.finished).total_seconds()).split()[:2]) \
            if self.finished is not None else "?"
        words = _("%(name)s (Succeeded %(ago)s ago)") if self.status == Phase.SUCCEEDED \
            else _("%(name)s (Failed %(ago)s ago)")
        return words % {"name": self.name, "ago": since}


@dataclass
class RoomOffer:
    """The oldest finished jobs whose deletion makes room for one more job (`jobs`, oldest
    first, `needed` of them), or why none is offered (`shortfall`)."""

    namespace: str
    kind: JobKind
    needed: int
    jobs: list[FinishedJob] = field(default_factory=list)
    finished: int = 0  # the project's finished jobs, deletable or not

    @property
    def makes_room(self) -> bool:
        return 0 < self.needed <= len(self.jobs)

    @property
    def names(self) -> list[str]:
        return [job.name for job in self.jobs]

    def label(self, now: datetime | None = None) -> str:
        """"Delete the 2 oldest finished jobs: a (Succeeded 3d ago), b (Failed 5d ago)"."""
        now = now or datetime.now(UTC)
        return ngettext("Delete the oldest finished job: %(jobs)s",
                        "Delete the %(count)s oldest finished jobs: %(jobs)s",
                        len(self.jobs)) % {"count": len(self.jobs), "jobs": ", ".join(
                            job.text(now) for job in self.jobs)}

    def commands(self) -> list[str]:
        """The CLI's commands that delete them, one a job."""
        return [f"odh training delete {self.kind.slug} {name} -n {self.namespace} --confirm"
                for name in self.names]

    def shortfall(self) -> str:
        """Why no deletion is offered ("" when one is)."""
        values = {"project": self.namespace}
        if self.makes_room:
            return ""
        if self.finished and not self.jobs:
            return _("You may not delete any of the finished jobs of %(project)s, so none is "
                     "offered: ask someone who may (the project's administrator) to delete "
                     "those no longer needed.") % values
        if not self.finished:
            return _("%(project)s holds no finished jobs: its running and waiting jobs fill "
                     "the quota, so a job can be created when one of them is deleted.") % values
        return _("Deleting the finished jobs you may delete would not make enough room: the "
                 "rest of the quota of %(project)s is held by jobs that have not finished, or "
                 "that you may not delete.") % values


def needed(fit: FitReport) -> int:
    """How many MPIJobs must go before one more fits every full count quota."""
    return max((int(line.used + line.requested - line.hard) for line in fit.lines
                if line.resource == COUNT_QUOTA and not line.fits), default=0)


def room_offer(client: ClusterClient, namespace: str, fit: FitReport,
               now: datetime | None = None) -> RoomOffer | None:
    """The deletions that make room in a full count quota, as `client`'s person may make
    them; None when no count quota is full, or the project's jobs cannot be read."""
    count = needed(fit)
    if count <= 0:
        return None
    try:
        return _offer(client, namespace, count, now)
    except errors.Unauthorized:
        raise
    except errors.ClusterError:  # the refusal stands without the offer
        return None


def _offer(client: ClusterClient, namespace: str, count: int,
           now: datetime | None) -> RoomOffer | None:
    kind = kind_counted_by(COUNT_QUOTA)  # the jobs the quota counts
    if kind is None:  # no kind of ours is what the quota counts
        return None
    items = client.list_jobs(kind, namespace)
    finished = []
    for item in items:
        summary = summarize(item, [], now=now)
        if summary.is_finished:
            finished.append(FinishedJob(summary.name, str(summary.status),
                                        summary.finished or summary.created))
    oldest = datetime.max.replace(tzinfo=UTC)
    finished.sort(key=lambda job: (job.finished or oldest, job.name))
    offer = RoomOffer(namespace=namespace, kind=kind, needed=count, finished=len(finished))
    if not finished:
        return offer
    if client.can_i("delete", kind.plural, kind.group, namespace):
        offer.jobs = finished[:count]
        return offer
    for job in finished[:_MAX_NAMED_REVIEWS]:
        if client.can_i("delete", kind.plural, kind.group, namespace, name=job.name):
            offer.jobs.append(job)
            if len(offer.jobs) == count:
                break
    return offer


def count_quota_has_room(quotas: list[dict]) -> bool:
    """Every quota on the number of MPIJobs has room for one more, as its status says."""
    for quota in quotas:
        hard = (quota.get("spec") or {}).get("hard") or {}
        used = (quota.get("status") or {}).get("used") or {}
        if COUNT_QUOTA in hard and parse_quantity(str(used.get(COUNT_QUOTA, "0"))) + 1 \
                > parse_quantity(str(hard[COUNT_QUOTA])):
            return False
    return True


def await_room(client: ClusterClient, namespace: str, timeout: float = 10.0) -> bool:
    """After deleting finished jobs: wait (at most `timeout` seconds) until the project's
    quota controller has counted them out, so the check that follows sees the room."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if count_quota_has_room(client.list_quotas(namespace)):
                return True
        except errors.Forbidden:
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
