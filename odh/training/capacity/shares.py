"""How much of something is used: the ratio, percentage and bar width every admin table
shows the same way, for cluster resources, ResourceQuotas and Kueue ClusterQueues."""

from __future__ import annotations

from abc import ABC, abstractmethod
from decimal import Decimal

from odh.training.capacity.quota import compute_name, resource_title
from odh.training.manifests.totals import ZERO, number

__all__ = ["QuotaShare", "Share", "percent", "ratio"]


def ratio(used: Decimal, total: Decimal) -> Decimal:
    """used/total; a total of nothing is full as soon as anything is used."""
    if total > 0:
        return used / total
    return Decimal(1) if used > 0 else ZERO


def percent(share: Decimal) -> int:
    return int((share * 100).to_integral_value())


class Share(ABC):
    """Something used out of a total; a subclass says which of its fields are which."""

    @abstractmethod
    def _used_of(self) -> tuple[Decimal, Decimal]:
        ...

    @property
    def ratio(self) -> Decimal:
        return ratio(*self._used_of())

    @property
    def percent(self) -> int:
        return percent(self.ratio)

    @property
    def bar_percent(self) -> int:
        return min(100, self.percent)


class QuotaShare(Share):
    """A share of a quota-like limit on one resource (a ResourceQuota's key such as
    "requests.nvidia.com/gpu", or a ClusterQueue's resource name)."""

    resource: str

    @property
    def title(self) -> str:
        return resource_title(self.resource)

    @property
    def unit(self) -> str:
        return compute_name(self.resource)

    @property
    def numbers(self) -> str:
        """"10/16"."""
        used, total = self._used_of()
        return f"{number(self.unit, used)}/{number(self.unit, total)}"
