"""Filtering and sorting the unified job list (type, status, project, name search)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from odh.training.kinds import KINDS
from odh.training.status.summarize import JobStatus, JobSummary

SORT_KEYS = ("name", "type", "project", "status", "workers", "gpus", "created_by", "created")
STATUS_ORDER = {JobStatus.FAILED: 0, JobStatus.RUNNING: 1, JobStatus.PENDING: 2,
                JobStatus.SUSPENDED: 3, JobStatus.SUCCEEDED: 4}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class JobFilters:
    type: str = ""      # a JobKind slug, or "" for all
    status: str = ""    # a JobStatus value, or ""
    project: str = ""   # a namespace, or "" for all the person's projects
    q: str = ""         # substring of the name
    sort: str = "-created"  # a SORT_KEYS entry, "-" for descending (newest first)

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> JobFilters:
        """From request parameters; unknown values fall back to "all" instead of failing."""
        kind = query.get("type", "")
        status = query.get("status", "")
        sort = query.get("sort", "-created")
        if sort.lstrip("-") not in SORT_KEYS:
            sort = "-created"
        return cls(
            type=kind if kind in KINDS else "",
            status=status if status in {s.value for s in JobStatus} else "",
            project=query.get("project", "").strip(),
            q=query.get("q", "").strip()[:253],
            sort=sort,
        )

    @property
    def sort_key(self) -> str:
        return self.sort.lstrip("-")

    @property
    def descending(self) -> bool:
        return self.sort.startswith("-")

    def toggled(self, key: str) -> str:
        """The sort parameter a column header links to."""
        if self.sort_key == key:
            return key if self.descending else f"-{key}"
        return f"-{key}" if key == "created" else key


def _sort_value(s: JobSummary, key: str):
    if key == "name":
        return s.name
    if key == "type":
        return s.kind.label.lower()
    if key == "project":
        return s.namespace
    if key == "status":
        return STATUS_ORDER.get(s.status, 9)
    if key == "workers":
        return (s.workers_total, s.workers_ready)
    if key == "gpus":
        return s.gpus
    if key == "created_by":
        return s.created_by
    return s.created or _EPOCH


def apply(summaries: list[JobSummary], f: JobFilters) -> list[JobSummary]:
    rows = summaries
    if f.type:
        rows = [s for s in rows if s.kind.slug == f.type]
    if f.status:
        rows = [s for s in rows if s.status.value == f.status]
    if f.project:
        rows = [s for s in rows if s.namespace == f.project]
    if f.q:
        needle = f.q.lower()
        rows = [s for s in rows if needle in s.name.lower()]
    key = f.sort_key
    # stable secondary order by project/name so equal keys do not jump around
    rows = sorted(rows, key=lambda s: (s.namespace, s.name))
    return sorted(rows, key=lambda s: _sort_value(s, key), reverse=f.descending)
