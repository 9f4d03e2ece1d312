"""Series of a job's charts from the Prometheus query API's answers: one per pod (or per
GPU), named as people read them ("worker-2", "launcher", "worker-2 GPU 0"), launcher
first, with gaps where a value is NaN.

Names come partly from label values (a GPU's `gpu` label) that whoever runs the exporter
chose. Plotly draws trace names (legend, hover) as its own little HTML (`<b>`, `<a href>`,
`<br>`...), so the charts get them with <, > and & escaped (`plotly_text`: the `label` of
`Series.as_dict`), and a hover template names its trace with `%{fullData.name}` rather
than pasting the name in, where a `%{...}` would be read as one of its own. `name` stays
the plain text, for the tables under the charts (which Django escapes)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from odh.training.i18n import _
from odh.training.metrics.promql import ENGINE_ACTIVE


def plotly_text(text: str) -> str:
    """Text that Plotly shows as it is: its HTML-like markup (tags, entities) escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def short_name(pod: str, job: str) -> str:
    """"worker-2" for `<job>-worker-2`, "launcher" for `<job>-launcher-x7k2p`."""
    rest = pod[len(job) + 1:] if pod.startswith(job + "-") else pod
    if rest == "launcher" or re.fullmatch(r"launcher-[a-z0-9]{5}", rest):
        return "launcher"
    return rest


_ROLE_ORDER = ("launcher", "master", "chief", "ps", "worker", "evaluator")


def _natural(name: str) -> tuple:
    """Launcher first, then by role, then by the numbers in the name (worker-2 < worker-10)."""
    role = name.split("-", 1)[0]
    rank = _ROLE_ORDER.index(role) if role in _ROLE_ORDER else len(_ROLE_ORDER)
    return (rank, [int(p) if p.isdecimal() else p for p in re.split(r"(\d+)", name)])


def _number(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


@dataclass
class Series:
    name: str
    pod: str
    t: list[float]  # seconds since the epoch, parallel to y
    y: list[float | None]

    def values(self) -> list[float]:
        return [v for v in self.y if v is not None]

    @property
    def latest(self) -> float | None:
        return next((v for v in reversed(self.y) if v is not None), None)

    @property
    def average(self) -> float | None:
        values = self.values()
        return sum(values) / len(values) if values else None

    @property
    def maximum(self) -> float | None:
        values = self.values()
        return max(values) if values else None

    def as_dict(self) -> dict:
        """For the charts (static/js/metrics.js): `label` is the trace's name for Plotly; `t`
        the instants in whole seconds since the epoch (Prometheus' own steps), a tenth of
        the bytes of RFC 3339 strings and no formatting per point."""
        return {"name": self.name, "label": plotly_text(self.name), "pod": self.pod,
                "t": [int(t) if t.is_integer() else t for t in self.t], "y": list(self.y)}


def parse_matrix(result: list[dict], job: str, scale: float = 1.0, gpu: bool = False,
                 after: float | None = None) -> list[Series]:
    """Series from a `query_range` result (`resultType: matrix`).

    Values are multiplied by `scale`; NaN and infinities become gaps (None). With `gpu`,
    each series is one GPU and named "worker-2 GPU 0" from its `gpu` label. Points at or
    before `after` are left out. Series come launcher first, then workers by index.
    """
    out: list[Series] = []
    for item in result or []:
        metric = item.get("metric") or {}
        pod = str(metric.get("pod") or "")
        name = short_name(pod, job) if pod else "total"
        if gpu:
            name = _("%(pod)s GPU %(gpu)s") % {"pod": name, "gpu": metric.get("gpu", "?")}
        series = Series(name, pod, [], [])
        for point in item.get("values") or []:
            try:
                t = float(point[0])
            except (TypeError, ValueError, IndexError):
                continue
            if after is not None and t <= after:
                continue
            value = _number(point[1])
            series.t.append(t)
            series.y.append(None if value is None else round(value * scale, 4))
        if series.t or after is None:
            out.append(series)
    out.sort(key=lambda s: (_natural(s.name), s.name))
    return out


def parse_vector(result: list[dict], scale: float = 1.0) -> list[tuple[dict, float]]:
    """(labels, value) pairs from an instant query (`resultType: vector`), NaN left out."""
    out = []
    for item in result or []:
        value = _number((item.get("value") or [None, None])[1])
        if value is not None:
            out.append((item.get("metric") or {}, value * scale))
    return out


def gpu_scale(metric: str) -> float:
    """ENGINE_ACTIVE is a 0-1 ratio, GPU_UTIL already percent: both to percent."""
    return 100.0 if metric == ENGINE_ACTIVE else 1.0

