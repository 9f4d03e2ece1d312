"""What one job costs: what it asks for (every pod's requests, its GPU model from its node
selector or the assumed one), over the hours it runs, at the prices."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from odh.training.i18n import _
from odh.training.kinds.base import JobKind
from odh.training.paths import as_dict, as_list
from odh.training.quantity import GPU_RESOURCE, container_requests

if TYPE_CHECKING:
    pass
from odh.training.cost.prices import (
    GIB,
    GPU_PRODUCT_LABEL,
    HOUR,
    ZERO,
    PriceError,
    Prices,
    money,
)


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
