"""A Prometheus Pushgateway beside simcluster's Prometheus, and the series Prometheus
scrapes from it: what a training script pushes (its loss, its step...) becomes series
of the query API, as on a cluster whose Prometheus scrapes a Pushgateway with
`honor_labels: true`.

Pushing, as the Pushgateway's API (and prometheus_client's `push_to_gateway`) does it, on
the Prometheus port (no token: a Pushgateway is reached inside the cluster):

- `PUT /metrics/job/<job>{/<label>/<value>}`: the group's metrics become those of the
  body (the text exposition format: `name value` or `name{label="v",...} value` lines,
  `#` comments ignored);
- `POST` on the same path: the body's metrics replace those of the same name, the others
  stay;
- `DELETE`: the group is gone (its series end, with a staleness marker).

Answers: `200` (a push), `202` (a delete), `400` with a plain-text reason.

Series: each metric of a group, labelled with the group's grouping key (`job`,
`namespace`...) and its own labels, plus `instance="pushgateway"`. Prometheus scrapes the
Pushgateway on the scrape grid (metrics_model.scrape_interval at the clock's speed) from
the group's first push; a scrape sees the newest value pushed before it.
"""

from __future__ import annotations

import bisect
import math
import re
import threading
from dataclasses import dataclass, field

from aiohttp import web

from simcluster.monitoring.metrics_model import scrape_interval
from simcluster.monitoring.metrics_series import GeneratedSeries

INSTANCE = "pushgateway"
_LINE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?\Z")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")


class BadPush(ValueError):
    pass


@dataclass
class _Metric:
    times: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)


@dataclass
class _Group:
    key: dict[str, str]
    first: float
    deleted: float | None = None
    metrics: dict[tuple[str, tuple[tuple[str, str], ...]], _Metric] = field(default_factory=dict)


def parse_text(body: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The samples of a body in the text exposition format: {(name, labels): value}."""
    found: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for number, raw in enumerate(body.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            raise BadPush(f"text format parsing error in line {number}: {line[:80]}")
        labels: list[tuple[str, str]] = []
        rest = m.group(2) or ""
        while rest.strip():
            pair = _LABEL.match(rest)
            if pair is None:
                raise BadPush(f"text format parsing error in line {number}: bad labels")
            labels.append((pair.group(1), pair.group(2).replace('\\"', '"')))
            rest = rest[pair.end():]
        try:
            value = float(m.group(3))
        except ValueError:
            raise BadPush(f"text format parsing error in line {number}: "
                          f"bad value {m.group(3)!r}") from None
        found[(m.group(1), tuple(sorted(labels)))] = value
    return found


class Pushgateway:
    def __init__(self, now, speed) -> None:
        self.now = now  # the cluster clock's now()
        self.speed = speed  # the cluster clock's speed
        self._groups: dict[tuple[tuple[str, str], ...], _Group] = {}
        self._lock = threading.Lock()

    def push(self, key: dict[str, str], body: str, replace: bool) -> None:
        samples = parse_text(body)
        at = self.now()
        with self._lock:
            group_key = tuple(sorted(key.items()))
            group = self._groups.get(group_key)
            if group is None or group.deleted is not None:
                group = self._groups[group_key] = _Group(dict(key), at)
            if replace:  # a PUT: what is not in the body is no longer pushed
                for metric_key in list(group.metrics):
                    if metric_key not in samples:
                        del group.metrics[metric_key]
            for metric_key, value in samples.items():
                metric = group.metrics.setdefault(metric_key, _Metric())
                metric.times.append(at)
                metric.values.append(value)

    def delete(self, key: dict[str, str]) -> None:
        with self._lock:
            group = self._groups.get(tuple(sorted(key.items())))
            if group is not None and group.deleted is None:
                group.deleted = self.now()

    def series(self, now: float) -> list[GeneratedSeries]:
        """Every pushed metric as Prometheus has scraped it until `now`."""
        interval = scrape_interval(self.speed())
        out: list[GeneratedSeries] = []
        with self._lock:
            for group in self._groups.values():
                for (name, labels), metric in group.metrics.items():
                    series_labels = {**dict(labels), **group.key, "instance": INSTANCE,
                                     "__name__": name}
                    out.append(GeneratedSeries(series_labels, [(group.first, group.deleted)],
                                               _frozen(metric), now, interval))
        return out


def _frozen(metric: _Metric):
    times, values = list(metric.times), list(metric.values)

    def value(t: float) -> float:
        i = bisect.bisect_right(times, t) - 1
        v = values[max(i, 0)]
        return v if math.isfinite(v) else math.nan
    return value


def _grouping_key(path: str) -> dict[str, str]:
    parts = [p for p in path.split("/") if p]
    if len(parts) < 2 or parts[0] != "job" or len(parts) % 2:
        raise BadPush("the path is /metrics/job/<job>{/<label>/<value>}")
    key = {}
    for name, value in zip(parts[::2], parts[1::2], strict=True):
        if not _LABEL_NAME.match(name) or not value:
            raise BadPush(f"invalid label name or empty value in the grouping key: {name}")
        key[name] = value
    return key


def add_routes(app: web.Application, gateway: Pushgateway) -> None:
    async def handle(request: web.Request) -> web.Response:
        try:
            key = _grouping_key(request.match_info["key"])
            if request.method == "DELETE":
                gateway.delete(key)
                return web.Response(status=202)
            gateway.push(key, await request.text(), replace=request.method == "PUT")
            return web.Response(status=200)
        except BadPush as e:
            return web.Response(status=400, text=f"{e}\n")

    for method in ("PUT", "POST", "DELETE"):
        app.router.add_route(method, "/metrics/{key:job/.+}", handle)
