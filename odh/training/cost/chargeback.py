"""The chargeback: the finished jobs of a period from the job history, each charged at the
prices, by project, by person and by job, and as CSV."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING

from odh.training.kinds.base import JobKind

if TYPE_CHECKING:
    pass
from odh.training.cost.charging import Cost, Usage, cost, job_ask, usage
from odh.training.cost.prices import ZERO, Prices, money


# -- chargeback -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Charge:
    """One finished (or running) job's part of a chargeback."""

    project: str
    person: str
    kind: str
    name: str
    uid: str
    finished: datetime | None
    usage: Usage
    cost: Cost


@dataclass
class Line:
    """The sum of a project's or a person's charges."""

    key: str
    currency: str
    jobs: int = 0
    usage: Usage = field(default_factory=Usage)
    amount: Decimal = ZERO

    @property
    def text(self) -> str:
        return money(self.amount, self.currency)


@dataclass
class Chargeback:
    currency: str
    charges: list[Charge]
    by_project: list[Line]
    by_person: list[Line]
    by_job: list[Line]
    priced: bool = True

    @property
    def total(self) -> Decimal:
        return sum((c.cost.total for c in self.charges), ZERO)

    @property
    def gpu_hours(self) -> Decimal:
        return sum((c.usage.gpu_hours for c in self.charges), ZERO)

    @property
    def total_text(self) -> str:
        return money(self.total, self.currency)


@dataclass(frozen=True)
class Record:
    """A job's run as the history (or a job still running) tells it."""

    project: str
    person: str
    kind: JobKind
    name: str
    uid: str
    spec: dict
    seconds: float
    gpu_hours: float | None
    finished: datetime | None = None


def _lines(charges: list[Charge], key) -> list[Line]:
    lines: dict[str, Line] = {}
    for c in charges:
        line = lines.setdefault(key(c), Line(key(c), c.cost.currency))
        line.jobs += 1
        line.usage = line.usage.plus(c.usage)
        line.amount += c.cost.total
    return sorted(lines.values(), key=lambda ln: (-ln.amount, -ln.usage.gpu_hours, ln.key))


def chargeback(records: Iterable[Record], prices: Prices, assumed: str = "") -> Chargeback:
    """Each record charged at `prices` and added up by project, person and job. Every
    record's GPU-hours are the history's own. Without a price the hours are still added
    up (a project's GPU-hours), and `priced` is false: no cost is shown."""
    charges = []
    at = prices if prices.is_set else Prices(currency=prices.currency, cpu_hour=ZERO)
    for r in records:
        use = usage(job_ask(r.kind, r.spec), r.seconds, r.gpu_hours)
        charged = cost(use, at, assumed)
        assert charged is not None
        charges.append(Charge(r.project, r.person, r.kind.kind, r.name, r.uid, r.finished,
                              use, charged))
    return Chargeback(prices.currency, charges, _lines(charges, lambda c: c.project),
                      _lines(charges, lambda c: c.person or "-"),
                      _lines(charges, lambda c: f"{c.project}/{c.name}"),
                      priced=prices.is_set)


def csv_rows(result: Chargeback) -> list[list[str]]:
    """The chargeback as CSV rows: a header, one row per job, and the total."""
    def n(value: Decimal) -> str:
        return f"{value.quantize(Decimal('0.0001'), rounding=ROUND_HALF_UP)}"

    rows = [["project", "person", "kind", "job", "uid", "finished", "gpu_model", "gpu_hours",
             "cpu_hours", "memory_gib_hours", "cost", "currency"]]
    for c in result.charges:
        rows.append([c.project, c.person, c.kind, c.name, c.uid,
                     c.finished.isoformat() if c.finished else "", c.cost.gpu_model,
                     n(c.usage.gpu_hours), n(c.usage.cpu_hours), n(c.usage.gib_hours),
                     n(c.cost.total), result.currency])
    total = Usage()
    for c in result.charges:
        total = total.plus(Usage(c.usage.gpu_hours, c.usage.cpu_hours, c.usage.gib_hours))
    rows.append(["TOTAL", "", "", "", "", "", "", n(total.gpu_hours), n(total.cpu_hours),
                 n(total.gib_hours), n(result.total), result.currency])
    return rows
