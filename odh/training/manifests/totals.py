"""What a whole MPIJob asks the cluster for, and amounts said the way the product says them."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from odh.training.i18n import _, ngettext
from odh.training.quantity import (
    GPU_RESOURCE,
    QuantityError,
    display_memory,
    format_memory,
    parse_quantity,
)
from odh.training.spec import JobSpec

ZERO = Decimal(0)


def amount(raw: object) -> Decimal:
    """A spec's quantity string as a number; unset or unreadable counts as nothing."""
    if not isinstance(raw, str) or not raw.strip():
        return ZERO
    try:
        return max(parse_quantity(raw), ZERO)
    except QuantityError:
        return ZERO


def whole(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _plain(value: Decimal) -> str:
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def cpus(value: Decimal) -> str:
    """"1 CPU", "32 CPUs", "0.5 CPUs"."""
    if value == value.to_integral_value():
        return ngettext("%(count)s CPU", "%(count)s CPUs", int(value)) % {"count": int(value)}
    return _("%(count)s CPUs") % {"count": _plain(value)}


def gpus(value: int | Decimal) -> str:
    count = int(value)
    return ngettext("%(count)d GPU", "%(count)d GPUs", count) % {"count": count}


def workers_text(count: int) -> str:
    return ngettext("%(count)d worker", "%(count)d workers", count) % {"count": count}


def number(resource: str, value: Decimal) -> str:
    """A bare amount of a resource: "6", "1.5", "100Gi"."""
    return format_memory(value) if resource == "memory" else _plain(value)


def figure(resource: str, value: Decimal, rounding: str = ROUND_HALF_UP) -> str:
    """A bare amount to read, beside words that name the resource: memory short and
    rounded by `rounding` ("1.04Ti", see `display_memory`), the rest as `number` ("139.3")."""
    return display_memory(value, rounding) if resource == "memory" else number(resource, value)


def figure_with_unit(resource: str, value: Decimal, rounding: str = ROUND_HALF_UP) -> str:
    """An amount to read on its own: "139.3 CPUs", "8 GPUs", "1.04Ti", "5"."""
    if resource == "cpu":
        return cpus(value)
    if resource == GPU_RESOURCE:
        return gpus(value)
    return figure(resource, value, rounding)


@dataclass
class Totals:
    """Per-Worker and Launcher requests (requests = limits), and the sums."""

    workers: int
    cpu_per_worker: Decimal
    memory_per_worker: Decimal
    gpus_per_worker: int
    launcher_cpu: Decimal
    launcher_memory: Decimal

    @property
    def pods(self) -> int:
        return self.workers + 1

    @property
    def workers_cpu(self) -> Decimal:
        return self.workers * self.cpu_per_worker

    @property
    def workers_memory(self) -> Decimal:
        return self.workers * self.memory_per_worker

    @property
    def total_cpu(self) -> Decimal:
        return self.workers_cpu + self.launcher_cpu

    @property
    def total_memory(self) -> Decimal:
        return self.workers_memory + self.launcher_memory

    @property
    def total_gpus(self) -> int:
        return self.workers * self.gpus_per_worker

    def text(self) -> str:
        """"4 workers x 2 GPUs = 8 GPUs, 32 CPUs, 128Gi + launcher 2 CPUs, 8Gi"."""
        each: list[str] = []
        total: list[str] = []
        if self.gpus_per_worker:
            each.append(gpus(self.gpus_per_worker))
            total.append(gpus(self.total_gpus))
        if self.cpu_per_worker:
            each.append(cpus(self.cpu_per_worker))
            total.append(cpus(self.workers_cpu))
        if self.memory_per_worker:
            each.append(format_memory(self.memory_per_worker))
            total.append(format_memory(self.workers_memory))
        text = workers_text(self.workers)
        if each:
            text = _("%(workers)s x %(each)s = %(total)s") % {
                "workers": text, "each": each[0], "total": ", ".join(total)}
        launcher = []
        if self.launcher_cpu:
            launcher.append(cpus(self.launcher_cpu))
        if self.launcher_memory:
            launcher.append(format_memory(self.launcher_memory))
        if launcher:
            text = _("%(workers)s + launcher %(launcher)s") % {
                "workers": text, "launcher": ", ".join(launcher)}
        return text


def totals_for(spec: JobSpec) -> Totals:
    """The totals of a spec; values validation would refuse count as nothing."""
    return Totals(workers=whole(spec.workers), cpu_per_worker=amount(spec.cpu_per_worker),
                  memory_per_worker=amount(spec.memory_per_worker),
                  gpus_per_worker=whole(spec.gpus_per_worker),
                  launcher_cpu=amount(spec.launcher_cpu),
                  launcher_memory=amount(spec.launcher_memory))
