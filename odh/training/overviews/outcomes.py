"""Jobs by type and status, and the success rate: per job type, how many of the jobs that
finished in the last 7 days succeeded (from history records, each counted once by uid)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from odh.training.capacity.shares import percent
from odh.training.kinds import JobKind
from odh.training.status.summary import JobStatus, JobSummary

SUCCESS_WINDOW = timedelta(days=7)
STATUSES = (JobStatus.RUNNING, JobStatus.PENDING, JobStatus.SUSPENDED, JobStatus.SUCCEEDED,
            JobStatus.FAILED)


# -- jobs by type -------------------------------------------------------------------------------
@dataclass
class KindCounts:
    kind: JobKind
    counts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def cells(self) -> list[tuple[str, int]]:
        return [(str(s), self.counts.get(str(s), 0)) for s in STATUSES]


def jobs_by_kind(summaries: Iterable[JobSummary],
                 kinds: Iterable[JobKind] = ()) -> list[KindCounts]:
    """Jobs of each type by status; every kind of `kinds` has a row, even without jobs."""
    by_slug: dict[str, JobKind] = {k.slug: k for k in kinds}
    pairs: Counter = Counter()
    for s in summaries:
        if s.kind.slug not in by_slug:
            by_slug[s.kind.slug] = s.kind
        pairs[(s.kind.slug, s.status)] += 1
    counts: dict[str, dict[str, int]] = {slug: {} for slug in by_slug}
    for (slug, status), n in pairs.items():
        counts[slug][str(status)] = n
    return [KindCounts(by_slug[slug], counts[slug]) for slug in by_slug]


# -- success rate -------------------------------------------------------------------------------
@dataclass(frozen=True)
class HistoryRecord:
    """What the success rate needs of a finished job (a history row or a live job)."""

    uid: str
    kind: str  # "MPIJob", "PyTorchJob", ...
    outcome: str  # "Succeeded" or "Failed"
    finished: datetime | None


@dataclass
class SuccessRate:
    kind: str
    succeeded: int = 0
    failed: int = 0

    @property
    def total(self) -> int:
        return self.succeeded + self.failed

    @property
    def ratio(self) -> Decimal | None:
        return Decimal(self.succeeded) / self.total if self.total else None

    @property
    def percent(self) -> int | None:
        return None if self.ratio is None else percent(self.ratio)


def success_rates(records: Iterable[HistoryRecord], now: datetime,
                  window: timedelta = SUCCESS_WINDOW,
                  kinds: Iterable[str] = ()) -> list[SuccessRate]:
    """Per job type, the jobs that finished within `window` before `now` and how many of
    them succeeded. A job is counted once, whatever number of records name its uid."""
    since = now - window
    rates: dict[str, SuccessRate] = {k: SuccessRate(k) for k in kinds}
    seen: set[str] = set()
    for record in records:
        if record.uid in seen or record.finished is None:
            continue
        if not since <= record.finished <= now:
            continue
        if record.outcome not in ("Succeeded", "Failed"):
            continue
        seen.add(record.uid)
        rate = rates.setdefault(record.kind, SuccessRate(record.kind))
        if record.outcome == "Succeeded":
            rate.succeeded += 1
        else:
            rate.failed += 1
    return list(rates.values())


def finished_records(summaries: Iterable[JobSummary]) -> list[HistoryRecord]:
    """History records for the finished jobs the cluster still has."""
    return [HistoryRecord(s.uid, s.kind.kind, str(s.status), s.finished)
            for s in summaries if s.is_finished]
