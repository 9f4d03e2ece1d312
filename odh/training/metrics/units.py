"""Chart values as people read them: "87%", "6.45 CPU", "41.2 GiB", "350 MiB", "412 MB/s".

Memory is in binary units (GiB, MiB), as Kubernetes sizes it; I/O rates in decimal ones
(kB/s, MB/s, GB/s), as network and disk speeds are quoted. The unit words go through
gettext; the Metrics tab's script gets the same words (`unit_labels`), so the numbers it
writes as points arrive read as the page's."""

from __future__ import annotations

from odh.training.i18n import _

MIB = 1024 ** 2
GIB = 1024 ** 3
KB, MB, GB = 1e3, 1e6, 1e9
# what each chart's values are ("bytes_per_second": an I/O rate)
PERCENT, CORES, BYTES, RATE = "percent", "cores", "bytes", "bytes_per_second"


def unit_labels() -> dict[str, str]:
    """The words after chart values, translated: what the Metrics tab's script writes too
    (passed to it with the series, so it writes the same words)."""
    return {"cpu": _("CPU"), "gib": _("GiB"), "mib": _("MiB"), "bps": _("B/s"),
            "kbps": _("kB/s"), "mbps": _("MB/s"), "gbps": _("GB/s")}


def format_value(value: float | None, unit: str) -> str:
    """A chart value for people: "87%", "6.45 CPU", "41.2 GiB", "350 MiB", "412.3 MB/s";
    "\u2013" for none."""
    if value is None:
        return "\u2013"
    if unit == PERCENT:
        return f"{value:.0f}%"
    labels = unit_labels()
    if unit == CORES:
        return f"{value:.2f} {labels['cpu']}"
    if unit == BYTES:
        if abs(value) >= GIB:
            return f"{value / GIB:.1f} {labels['gib']}"
        return f"{value / MIB:.0f} {labels['mib']}"
    if unit == RATE:
        if abs(value) >= GB:
            return f"{value / GB:.2f} {labels['gbps']}"
        if abs(value) >= MB:
            return f"{value / MB:.1f} {labels['mbps']}"
        if abs(value) >= KB:
            return f"{value / KB:.0f} {labels['kbps']}"
        return f"{value:.0f} {labels['bps']}"
    return f"{value:g}"
