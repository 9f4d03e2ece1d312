"""Filtering and sorting the unified job list: type, status, project, name search, and the
creator, a creation date range and a label selector (kubectl's `-l`, read by
odh.training.status.lists.selectors). Every filter is a query parameter, so an address
reproduces the view; a date or a selector that cannot be read is not applied and says how
to write it (`JobFilters.problems`), keeping the text as typed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta

from odh.training.i18n import _
from odh.training.kinds import KINDS
from odh.training.status.lists.selectors import Selector, SelectorError, parse_selector
from odh.training.status.summarize import JobStatus, JobSummary

SORT_KEYS = ("name", "type", "project", "status", "workers", "gpus", "created_by", "created")
STATUS_ORDER = {JobStatus.FAILED: 0, JobStatus.RUNNING: 1, JobStatus.PENDING: 2,
                JobStatus.SUSPENDED: 3, JobStatus.SUCCEEDED: 4}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# the query parameters of the filters this module adds (the address of the view)
USER, CREATED_FROM, CREATED_TO, LABELS = "user", "from", "to", "labels"
LabelsOf = Callable[[JobSummary], Mapping[str, str]]


def _date(text: str) -> date | None:
    """A day as an HTML date field sends it (YYYY-MM-DD); ValueError with a sentence."""
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(_("“%(value)s” is not a date: write YYYY-MM-DD, e.g. 2026-03-31.")
                         % {"value": text[:40]}) from None


@dataclass(frozen=True)
class JobFilters:
    type: str = ""      # a JobKind slug, or "" for all
    status: str = ""    # a JobStatus value, or ""
    project: str = ""   # a namespace, or "" for all the person's projects
    q: str = ""         # substring of the name
    sort: str = "-created"  # a SORT_KEYS entry, "-" for descending (newest first)
    user: str = ""      # the creator's user name, exactly (the CLI's --user)
    created_from: str = ""  # YYYY-MM-DD, the first day (UTC) of the creation range, as typed
    created_to: str = ""    # YYYY-MM-DD, the last day (UTC), included, as typed
    labels: str = ""    # a label selector as typed ("team=nlp,tier!=test")
    # (parameter, sentence) of each filter that could not be read and is not applied
    problems: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> JobFilters:
        """From request parameters; unknown values fall back to "all" instead of failing;
        a date or selector that cannot be read is kept as typed, with its problem."""
        kind = query.get("type", "")
        status = query.get("status", "")
        sort = query.get("sort", "-created")
        if sort.lstrip("-") not in SORT_KEYS:
            sort = "-created"
        filters = cls(
            type=kind if kind in KINDS else "",
            status=status if status in {s.value for s in JobStatus} else "",
            project=query.get("project", "").strip(),
            q=query.get("q", "").strip()[:253],
            sort=sort,
            user=query.get(USER, "").strip()[:253],
            created_from=query.get(CREATED_FROM, "").strip()[:40],
            created_to=query.get(CREATED_TO, "").strip()[:40],
            labels=query.get(LABELS, "").strip()[:1000],
        )
        return replace(filters, problems=filters._read_problems())

    def _read_problems(self) -> tuple[tuple[str, str], ...]:
        problems = []
        for param in (CREATED_FROM, CREATED_TO):
            try:
                _date(getattr(self, _FIELDS[param]))
            except ValueError as e:
                problems.append((param, str(e)))
        if not problems and self.day_range[0] and self.day_range[1] \
                and self.day_range[1] < self.day_range[0]:
            problems.append((CREATED_TO, _("The last day is before the first: choose a "
                                           "day on or after %(day)s.")
                             % {"day": self.created_from}))
        try:
            parse_selector(self.labels) if self.labels else None
        except SelectorError as e:
            problems.append((LABELS, str(e)))
        return tuple(problems)

    def problem(self, param: str) -> str:
        """The sentence for the filter `param`, "" when it is read and applied."""
        return next((text for name, text in self.problems if name == param), "")

    @property
    def day_range(self) -> tuple[date | None, date | None]:
        """The creation range's first and last day, None for a side that is open or
        cannot be read."""
        def read(text: str) -> date | None:
            try:
                return _date(text)
            except ValueError:
                return None
        return read(self.created_from), read(self.created_to)

    @property
    def selector(self) -> Selector | None:
        """The label selector to apply, None when there is none or it cannot be read."""
        if not self.labels or self.problem(LABELS):
            return None
        return parse_selector(self.labels)

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


_FIELDS = {CREATED_FROM: "created_from", CREATED_TO: "created_to"}


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


def _in_range(s: JobSummary, f: JobFilters) -> bool:
    first, last = f.day_range
    if f.problem(CREATED_FROM) or f.problem(CREATED_TO):
        return True  # a range that cannot be read is not applied
    if s.created is None:
        return first is None and last is None
    created = s.created.astimezone(UTC)
    start = datetime.combine(first, datetime.min.time(), UTC) if first else None
    end = datetime.combine(last + timedelta(days=1), datetime.min.time(), UTC) if last else None
    return (start is None or created >= start) and (end is None or created < end)


def apply(summaries: list[JobSummary], f: JobFilters,
          labels_of: LabelsOf | None = None) -> list[JobSummary]:
    """The rows `f` keeps, sorted; `labels_of` gives a row's job labels (the label
    selector is not applied without it)."""
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
    if f.user:
        rows = [s for s in rows if s.created_by == f.user]
    if f.created_from or f.created_to:
        rows = [s for s in rows if _in_range(s, f)]
    selector = f.selector
    if selector is not None and labels_of is not None:
        rows = [s for s in rows if selector.matches(labels_of(s))]
    key = f.sort_key
    # stable secondary order by project/name so equal keys do not jump around
    rows = sorted(rows, key=lambda s: (s.namespace, s.name))
    return sorted(rows, key=lambda s: _sort_value(s, key), reverse=f.descending)


def labels_from(objects: Mapping[tuple[str, str, str], tuple]) -> LabelsOf:
    """`labels_of` for a listing's objects ((namespace, kind slug, name) -> (job, pods))."""
    def labels_of(s: JobSummary) -> Mapping[str, str]:
        job = (objects.get((s.namespace, s.kind.slug, s.name)) or ({},))[0]
        return (job.get("metadata") or {}).get("labels") or {}
    return labels_of
