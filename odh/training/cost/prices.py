"""The prices an administrator sets: read and checked, carried as JSON (the ConfigMap
PRICES_CONFIGMAP the dashboard publishes for the CLI and SDK), and money as it is shown."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import TYPE_CHECKING

from odh.training.i18n import _
from odh.training.paths import as_dict

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


def assumed_model(prices: Prices, gpus_by_model: Mapping[str, int | Decimal]) -> str:
    """The GPU model a job that names none is charged at: the priced model with the most
    GPUs on the cluster's nodes, else the cheapest priced one ("" : none priced)."""
    priced = [m for m in gpus_by_model if m in prices.gpu]
    if priced:
        return max(priced, key=lambda m: (gpus_by_model[m], -prices.gpu[m], m))
    if prices.gpu:
        return min(prices.gpu, key=lambda m: (prices.gpu[m], m))
    return ""


def money(value: Decimal, currency: str) -> str:
    """"12.35 USD" (two places; under a cent shown as such rather than 0.00)."""
    if ZERO < value < CENT:
        return _("under 0.01 %(currency)s") % {"currency": currency}
    return f"{value.quantize(CENT, rounding=ROUND_HALF_UP):,} {currency}"


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
