"""Kubernetes resource quantities: parsing, and formatting in the product's vocabulary."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, localcontext

from odh.training.i18n import _, shown

GPU_RESOURCE = "nvidia.com/gpu"
# Kubernetes keeps quantities in 64-bit integers (of milli-units at the finest it prints).
MAX_QUANTITY = Decimal(2**63 - 1)

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
    "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
    "P": Decimal("1e15"), "E": Decimal("1e18"),
}
# The exponent form is tried before the bare suffixes so that "1E3" is 1000, not "1E" + junk.
_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:\d+\.?\d*|\.\d+))"
    r"(?P<suffix>[eE][+-]?\d+|[KMGTPE]i|[numkMGTPE])?"
)
_HINTS = {"kb": "Ki", "k": "k", "mb": "Mi", "gb": "Gi", "tb": "Ti", "pb": "Pi", "eb": "Ei",
          "g": "Gi", "gib": "Gi", "mib": "Mi", "kib": "Ki", "tib": "Ti"}


class QuantityError(ValueError):
    """A value that is not a Kubernetes quantity; the message says how to write one."""


def _too_large(value: object) -> QuantityError:
    return QuantityError(_('"%(value)s" is too large for a Kubernetes quantity: '
                           "use a value below 8Ei") % {"value": shown(value)})


def _error(value: object) -> QuantityError:
    text = str(value)
    values = {"value": shown(text)}
    hint = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*", text)
    if hint and hint.group(2).lower() in _HINTS:
        values["suggestion"] = hint.group(1) + _HINTS[hint.group(2).lower()]
        return QuantityError(_('"%(value)s" is not a Kubernetes quantity: use a number with an '
                               "optional suffix such as 500m, 2, 16Gi or 512Mi (did you mean "
                               "%(suggestion)s?)") % values)
    return QuantityError(_('"%(value)s" is not a Kubernetes quantity: use a number with an '
                           "optional suffix such as 500m, 2, 16Gi or 512Mi") % values)


def _scaled(text: str) -> Decimal:
    match = _QUANTITY.fullmatch(text.strip())
    if not match:
        raise _error(text)
    number = Decimal(match.group("number"))
    suffix = match.group("suffix") or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix[:1] in ("e", "E") and len(suffix) > 1:
        exponent = int(suffix[1:])
        if abs(exponent) > 100:  # far beyond any quantity; spares Decimal a huge exponent
            raise _too_large(text) if exponent > 0 else _error(text)
        return number.scaleb(exponent)
    return number * _DECIMAL[suffix]


def parse_quantity(value: str | int | float | Decimal) -> Decimal:
    """The exact value of a quantity ("500m" -> 0.5, "16Gi" -> 17179869184, 2 -> 2)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float | Decimal):
        raise _error(value)
    with localcontext() as ctx:
        ctx.prec = 60  # exact for every value below MAX_QUANTITY, with nano precision
        try:
            if isinstance(value, str):
                number = _scaled(value)
            else:
                number = Decimal(str(value) if isinstance(value, float) else value)
        except ArithmeticError as exc:
            raise _error(value) from exc
        if not number.is_finite():
            raise _error(value)
        if abs(number) > MAX_QUANTITY:
            raise _too_large(value)
        return +number


def _plain(number: Decimal) -> str:
    """A decimal without exponent or trailing zeros: 2, 1.5, 0.25."""
    if number == number.to_integral_value():
        return str(int(number))
    return format(number.normalize(), "f")


def _places(number: Decimal) -> int:
    exponent = number.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def format_cpu(value: Decimal) -> str:
    """Whole CPUs plainly ("8"), fractions as millicores ("500m")."""
    if value == value.to_integral_value():
        return str(int(value))
    millis = value * 1000
    if millis == millis.to_integral_value():
        return f"{int(millis)}m"
    return _plain(value)


def _short_exact_memory(value: Decimal) -> str | None:
    """"32Gi", "1.5Gi", "16G": a short figure that is exact, if there is one."""
    for suffix, unit in reversed(_BINARY.items()):
        figure = value / unit
        if 1 <= figure < 1024 and _places(figure) <= 2:
            return f"{_plain(figure)}{suffix}"
    for suffix in ("E", "P", "T", "G", "M", "k"):
        figure = value / _DECIMAL[suffix]
        if 1 <= figure < 1000 and _places(figure) <= 2:
            return f"{_plain(figure)}{suffix}"
    return None


def format_memory(value: Decimal) -> str:
    """Memory for people: the largest binary unit that gives a short exact figure.

    "32Gi", "512Mi" and "1.5Gi" (up to two decimals, exact); a value that is a round
    decimal amount stays decimal ("16G"); anything else is written in the largest whole
    binary unit ("1000Ki") or in bytes. Exact, so that it can be written back into a
    spec; `display_memory` rounds for reading.
    """
    if value == 0:
        return "0"
    short = _short_exact_memory(value)
    if short is not None:
        return short
    for suffix, unit in reversed(_BINARY.items()):
        figure = value / unit
        if figure >= 1 and figure == figure.to_integral_value():
            return f"{int(figure)}{suffix}"
    return _plain(value)


def display_memory(value: Decimal, rounding: str = ROUND_HALF_UP) -> str:
    """Memory to read, not to write back: short, in the largest binary unit of which it
    makes 1 or more.

    A value `format_memory` writes short and exact stays exact ("1.5Ti", "984Gi", "16G"),
    and so does a whole figure of four digits ("1400Gi", as people write requests).
    Any other is rounded to three significant figures ("1088256Mi" is "1.04Ti", 523.456Gi is
    "523Gi", 12.345Gi is "12.3Gi"), by `rounding` (a `decimal` rounding mode: ROUND_FLOOR
    for room left, which is then never overstated); a figure that rounds up to 1024 is
    said in the next unit ("1Ti"). Less than 1Ki is said in bytes, rounded to whole ones.
    """
    if value == 0:
        return "0"
    short = _short_exact_memory(value)
    if short is not None:
        return short
    for suffix, unit in reversed(_BINARY.items()):  # as people write requests: "1400Gi"
        figure = value / unit
        if 1024 <= figure < 10000 and figure == figure.to_integral_value():
            return f"{int(figure)}{suffix}"
    units = [("", Decimal(1))] + [(suffix, Decimal(unit)) for suffix, unit in _BINARY.items()]
    for index in range(len(units) - 1, -1, -1):
        suffix, unit = units[index]
        figure = value / unit
        if figure < 1 and index:
            continue
        places = 0 if figure >= 100 or not suffix else 1 if figure >= 10 else 2
        rounded = figure.quantize(Decimal(1).scaleb(-places), rounding=rounding)
        if rounded >= 1024 and index + 1 < len(units):
            bigger, size = units[index + 1]
            return f"{_plain((value / size).quantize(Decimal('0.01'), rounding=rounding))}" \
                   f"{bigger}"
        return f"{_plain(rounded)}{suffix}"
    return _plain(value)


def format_resources(cpu: Decimal | None, memory: Decimal | None,
                     gpus: int | Decimal | None) -> str:
    """"8 CPU, 32Gi, 1 GPU"; missing parts (and zero GPUs) are left out."""
    parts = []
    if cpu is not None:
        parts.append(_("%(cpu)s CPU") % {"cpu": format_cpu(Decimal(cpu))})
    if memory is not None:
        parts.append(format_memory(Decimal(memory)))
    if gpus:
        count = _plain(Decimal(gpus))
        parts.append(_("%(count)s GPU") % {"count": count} if Decimal(gpus) == 1
                     else _("%(count)s GPUs") % {"count": count})
    return ", ".join(parts)


def container_requests(container: dict) -> dict[str, Decimal]:
    """What a container asks the scheduler for: requests, falling back to limits.

    Keys are "cpu", "memory" and "nvidia.com/gpu", present only when set. A value that is
    not a quantity is left out (the API server would have refused it on a pod anyway).
    """
    resources = container.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    result: dict[str, Decimal] = {}
    for name in ("cpu", "memory", GPU_RESOURCE):
        raw = requests.get(name, limits.get(name))
        if raw is None:
            continue
        try:
            result[name] = parse_quantity(raw)
        except QuantityError:
            continue
    return result
