"""The prices an administrator sets (training/prices.py)."""

from __future__ import annotations

from django.db import models


class PriceList(models.Model):
    """The prices an administrator sets at /cluster/prices/ (one row: the cluster's), per
    hour of each resource in one currency; a price left empty is no price. Every change
    is audited (training/prices.py)."""

    currency = models.CharField(max_length=3, default="USD")
    # {GPU model (the node label nvidia.com/gpu.product): price as a decimal string}
    gpu = models.JSONField(default=dict, blank=True)
    cpu_hour = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    gib_hour = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    updated = models.DateTimeField(auto_now=True)
    updated_by = models.CharField(max_length=253, blank=True)

    def __str__(self) -> str:
        return f"prices in {self.currency}, set by {self.updated_by or '-'}"
