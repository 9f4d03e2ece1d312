"""What training costs: the prices an administrator sets, and the arithmetic over them.

A job is charged for what it asks for, over the time it runs (how the job history counts
GPU-hours: odh.training.status.history): GPUs x hours at the price of its GPU model, plus
CPUs x hours and GiB of memory x hours, all the pods' requests (Launcher and Workers)
added up. The GPU model is the one the job's node selector names (the node label
`nvidia.com/gpu.product`); a job that names none is charged at the assumed model, the
most common priced model on the cluster's nodes (said so wherever a cost is shown).

Pure: the dashboard, the CLI and the SDK compute the same numbers. Prices travel as JSON
(`Prices.to_json` / `Prices.from_json`): the dashboard publishes them in a ConfigMap
(PRICES_CONFIGMAP) that everyone signed in may read, which is where the CLI and SDK get
them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import TYPE_CHECKING

from odh.training.i18n import _
from odh.training.kinds.base import JobKind
from odh.training.paths import as_dict, as_list
from odh.training.quantity import GPU_RESOURCE, container_requests

if TYPE_CHECKING:
    from odh.training.cluster.client import ClusterClient

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
# where the dashboard publishes the prices for the CLI and SDK: in its own namespace
PRICES_CONFIGMAP = "mpijob-dashboard-prices"
PRICES_KEY = "prices.json"
DEFAULT_NAMESPACE = "mpijob-dashboard"

ZERO = Decimal(0)
GIB = Decimal(2 ** 30)
HOUR = Decimal(3600)
CENT = Decimal("0.01")
# a price is kept to 6 decimal places (a GiB-hour may cost fractions of a cent)
PLACES = Decimal("0.000001")
MAX_PRICE = Decimal("1000000")

# ISO 4217's active codes
CURRENCIES = frozenset("""
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN
BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD
FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY
KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP
MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR
RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT
TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR
ZMW ZWG
""".split())


class PriceError(ValueError):
    """A price or currency the form refuses: `field` and the reason in words."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def parse_price(text: str, field: str) -> Decimal | None:
    """A price as typed ("2.5", "0", "" for none); refused: not a number, negative, too
    large."""
    text = (text or "").strip()
    if text.count(",") == 1 and "." not in text:  # "2,50" where a comma is the decimal mark
        text = text.replace(",", ".")
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise PriceError(field, _('"%(value)s" is not a number: write a price such as 2.50.')
                         % {"value": text[:40]}) from None
    if not value.is_finite():
        raise PriceError(field, _('"%(value)s" is not a number: write a price such as 2.50.')
                         % {"value": text[:40]})
    if value < 0:
        raise PriceError(field, _("A price cannot be negative: write 0 or more, or leave it "
                                  "empty for no price."))
    if value > MAX_PRICE:
        raise PriceError(field, _("A price is at most 1000000 per hour."))
    return value.quantize(PLACES, rounding=ROUND_HALF_UP).normalize() + ZERO


def parse_currency(text: str, field: str = "currency") -> str:
    code = (text or "").strip().upper()
    if code not in CURRENCIES:
        raise PriceError(field, _('"%(value)s" is not a currency: write its three-letter ISO '
                                  '4217 code, such as USD, EUR or JPY.')
                         % {"value": (text or "").strip()[:40]})
    return code


@dataclass(frozen=True)
class Prices:
    """The price of an hour of each resource, in one currency; None: no price."""

    currency: str = "USD"
    gpu: Mapping[str, Decimal] = field(default_factory=dict)  # per GPU model
    cpu_hour: Decimal | None = None
    gib_hour: Decimal | None = None
    # the model a job naming none is charged at, as the dashboard chose it from the nodes
    # when it published the prices (the CLI and SDK may not list nodes)
    assumed: str = ""

    @property
    def is_set(self) -> bool:
        """Any price at all: without one, nothing shows a cost."""
        return bool(self.gpu) or self.cpu_hour is not None or self.gib_hour is not None

    def to_json(self) -> str:
        return json.dumps({"currency": self.currency,
                           "gpu": {m: str(p) for m, p in sorted(self.gpu.items())},
                           "cpu_hour": None if self.cpu_hour is None else str(self.cpu_hour),
                           "gib_hour": None if self.gib_hour is None else str(self.gib_hour),
                           "assumed": self.assumed},
                          sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes | None) -> Prices:
        """Prices as published; anything unreadable counts as no price."""
        try:
            data = json.loads(text or "{}")
            currency = parse_currency(str(data.get("currency", "")))
            gpu = {str(m): p for m, raw in as_dict(data.get("gpu")).items()
                   if (p := parse_price(str(raw), "gpu")) is not None}
            cpu = parse_price(str(data.get("cpu_hour") or ""), "cpu")
            gib = parse_price(str(data.get("gib_hour") or ""), "memory")
        except (ValueError, AttributeError, TypeError):
            return cls()
        return cls(currency=currency, gpu=gpu, cpu_hour=cpu, gib_hour=gib,
                   assumed=str(data.get("assumed") or ""))

    @property
    def assumed_model(self) -> str:
        """The published assumed model if it has a price, else the cheapest priced one."""
        return self.assumed if self.assumed in self.gpu else assumed_model(self, {})


def money(value: Decimal, currency: str) -> str:
    """"12.35 USD" (two places; under a cent shown as such rather than 0.00)."""
    if ZERO < value < CENT:
        return _("under 0.01 %(currency)s") % {"currency": currency}
    return f"{value.quantize(CENT, rounding=ROUND_HALF_UP):,} {currency}"


# -- what a job asks for ---------------------------------------------------------------------
@dataclass(frozen=True)
class Ask:
    """What a job's pods ask for at once: GPUs, CPUs, GiB of memory, and its GPU model
    ("" when its spec names none)."""

    gpus: Decimal
    cpus: Decimal
    gib: Decimal
    gpu_model: str = ""


def job_ask(kind: JobKind, manifest: dict) -> Ask:
    """All the pods' requests (falling back to limits), replicas counted, as the spec
    writes them."""
    templates = kind.pod_templates(manifest)
    gpus = cpus = memory = ZERO
    model = ""
    for role, count, _gpus in kind.expected_replicas(manifest):
        pod = as_dict(templates.get(role))
        for container in as_list(pod.get("containers")):
            asked = container_requests(as_dict(container))
            gpus += count * asked.get(GPU_RESOURCE, ZERO)
            cpus += count * asked.get("cpu", ZERO)
            memory += count * asked.get("memory", ZERO)
        model = model or str(as_dict(pod.get("nodeSelector")).get(GPU_PRODUCT_LABEL, "") or "")
    return Ask(gpus=gpus, cpus=cpus, gib=memory / GIB, gpu_model=model)


def assumed_model(prices: Prices, gpus_by_model: Mapping[str, int | Decimal]) -> str:
    """The GPU model a job that names none is charged at: the priced model with the most
    GPUs on the cluster's nodes, else the cheapest priced one ("" : none priced)."""
    priced = [m for m in gpus_by_model if m in prices.gpu]
    if priced:
        return max(priced, key=lambda m: (gpus_by_model[m], -prices.gpu[m], m))
    if prices.gpu:
        return min(prices.gpu, key=lambda m: (prices.gpu[m], m))
    return ""


def gpus_by_model(nodes: Iterable[dict]) -> dict[str, int]:
    """The GPUs each model has on the nodes (the node label, allocatable GPUs)."""
    counts: dict[str, int] = {}
    for node in nodes:
        meta = as_dict(node.get("metadata"))
        model = str(as_dict(meta.get("labels")).get(GPU_PRODUCT_LABEL, "") or "")
        if not model:
            continue
        raw = as_dict(as_dict(node.get("status")).get("allocatable")).get(GPU_RESOURCE, "0")
        try:
            count = int(Decimal(str(raw)))
        except InvalidOperation:
            count = 0
        counts[model] = counts.get(model, 0) + count
    return counts


def gpu_models(nodes: Iterable[dict]) -> list[str]:
    """The GPU models of the cluster's nodes, as the prices form lists them."""
    return sorted(gpus_by_model(nodes))


# -- what it costs ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Usage:
    """Resource-hours: what is charged."""

    gpu_hours: Decimal = ZERO
    cpu_hours: Decimal = ZERO
    gib_hours: Decimal = ZERO
    gpu_model: str = ""

    def plus(self, other: Usage) -> Usage:
        return Usage(self.gpu_hours + other.gpu_hours, self.cpu_hours + other.cpu_hours,
                     self.gib_hours + other.gib_hours, self.gpu_model or other.gpu_model)


def usage(ask: Ask, seconds: float, gpu_hours: float | None = None) -> Usage:
    """`ask` held for `seconds`; `gpu_hours`: as the job history recorded them (its
    rounding), which the chargeback must add up to."""
    hours = Decimal(str(max(0.0, seconds))) / HOUR
    gpu = Decimal(str(gpu_hours)) if gpu_hours is not None else ask.gpus * hours
    return Usage(gpu_hours=gpu, cpu_hours=ask.cpus * hours, gib_hours=ask.gib * hours,
                 gpu_model=ask.gpu_model)


@dataclass(frozen=True)
class Cost:
    currency: str
    gpu: Decimal
    cpu: Decimal
    memory: Decimal
    gpu_model: str  # the model charged ("" : no GPUs, or no model priced)
    assumed: bool  # the job names no model: charged at the assumed one

    @property
    def total(self) -> Decimal:
        return self.gpu + self.cpu + self.memory

    @property
    def text(self) -> str:
        return money(self.total, self.currency)

    @property
    def basis(self) -> str:
        """What the figure counts, in words."""
        if self.assumed and self.gpu_model:
            return _("GPUs at the price of %(model)s (the job names no GPU model; the most "
                     "common priced model is assumed), CPUs and memory as requested.") % {
                "model": self.gpu_model}
        return _("GPUs, CPUs and memory as requested, at the administrator's prices.")


def cost(use: Usage, prices: Prices, assumed: str = "") -> Cost | None:
    """What `use` costs at `prices` (None: no price is set). The GPU price is the job's
    model's, else the `assumed` model's; a model without a price costs nothing."""
    if not prices.is_set:
        return None
    model = use.gpu_model if use.gpu_model in prices.gpu else ""
    was_assumed = False
    if not model and not use.gpu_model and use.gpu_hours:
        model, was_assumed = assumed, bool(assumed)
    gpu_rate = prices.gpu.get(model, ZERO) if model else ZERO
    return Cost(currency=prices.currency, gpu=use.gpu_hours * gpu_rate,
                cpu=use.cpu_hours * (prices.cpu_hour or ZERO),
                memory=use.gib_hours * (prices.gib_hour or ZERO),
                gpu_model=model or use.gpu_model, assumed=was_assumed)


def hourly(ask: Ask, prices: Prices, assumed: str = "") -> Cost | None:
    """What an hour of the job costs."""
    return cost(usage(ask, 3600.0), prices, assumed)


def expected_hours(text: str) -> Decimal | None:
    """The expected duration the wizard's review takes, in hours ("" : none); refused
    when not a positive number."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = Decimal(text.replace(",", "."))
    except InvalidOperation:
        raise PriceError("hours", _('"%(value)s" is not a number of hours: write one such '
                                    'as 6 or 1.5.') % {"value": text[:40]}) from None
    if not value.is_finite() or value <= 0 or value > 24 * 366:
        raise PriceError("hours", _("Write a number of hours above 0 and at most 8784 "
                                    "(a year)."))
    return value


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


def read_prices(client: ClusterClient, namespace: str | None = None) -> Prices:
    """The prices the dashboard published (its ConfigMap PRICES_CONFIGMAP, in `namespace`,
    else $ODH_DASHBOARD_NAMESPACE, else mpijob-dashboard), read with the person's own
    credentials; none there, or not readable: no price (no cost is shown)."""
    from odh.training import errors
    namespace = namespace or os.environ.get("ODH_DASHBOARD_NAMESPACE") or DEFAULT_NAMESPACE
    try:
        found = client.get_config_map(namespace, PRICES_CONFIGMAP)
    except (errors.NotFound, errors.Forbidden):
        return Prices()
    return Prices.from_json(str(as_dict(found.get("data")).get(PRICES_KEY) or ""))


def job_cost(prices: Prices, kind: JobKind, manifest: dict, seconds: float) -> Cost | None:
    """What a job costs over `seconds` of its run, at the published prices (None: none)."""
    return cost(usage(job_ask(kind, manifest), seconds), prices, prices.assumed_model)


def describe_lines(prices: Prices, kind: JobKind, manifest: dict, seconds: float,
                   finished: bool) -> list[tuple[str, str]]:
    """`describe`'s Cost lines (none without prices)."""
    assumed = prices.assumed_model
    charged = cost(usage(job_ask(kind, manifest), seconds), prices, assumed)
    if charged is None:
        return []
    label = _("Cost") if finished else _("Cost so far")
    per_hour = hourly(job_ask(kind, manifest), prices, assumed)
    lines = [(label, charged.text)]
    if per_hour is not None and not finished:
        lines.append(("", _("%(cost)s per hour") % {"cost": per_hour.text}))
    lines.append(("", charged.basis))
    return lines
