"""Training curves a job pushed to Prometheus (through a Pushgateway, or an endpoint
Prometheus scrapes), read instead of the log's where Prometheus has them: exact numbers,
whatever the wording of the log.

The convention (docs/training-metrics.md): gauges named `training_<metric>`
(`training_loss`, `training_accuracy`, `training_learning_rate`...) with the labels
`namespace="<project>"` and `job="<job name>"` (a Pushgateway's grouping key, kept by a
scrape with `honor_labels: true`), and beside them the gauge `training_step`, the step
the values are at (`training_epoch`, the epoch, if the job has one). They are read over
the job's run at the query step, as the Metrics tab reads every series (with the
person's token and the project as the tenancy `namespace`); each sample is placed at the
step `training_step` had at the same instant. A metric pushed without `training_step` is
not read: a chart by step needs its steps. The metric's name is what follows the prefix
(`training_loss` is "loss"): where the log has a metric of that name, Prometheus' series
replaces the log's (both of its series: during epochs and at their ends).
"""

from __future__ import annotations

import logging
import math
from datetime import UTC, datetime

from odh.training import errors
from odh.training.logs.curves import STEP, CurveReader, Point, Series
from odh.training.metrics.promql import quote, step_for

log = logging.getLogger("odh.training.metrics")

PREFIX = "training_"
STEP_SERIES, EPOCH_SERIES = PREFIX + "step", PREFIX + "epoch"


def pushed_query(namespace: str, job: str) -> str:
    return ('{__name__=~' + quote(PREFIX + ".+") + ",namespace=" + quote(namespace) +
            ",job=" + quote(job) + "}")


def _samples(item: dict) -> dict[float, float]:
    found: dict[float, float] = {}
    for pair in item.get("values") or []:
        try:
            t, v = float(pair[0]), float(pair[1])
        except (TypeError, ValueError, IndexError):
            continue
        if math.isfinite(v):
            found[t] = v
    return found


def pushed_curves(result: list[dict]) -> dict[str, list[Point]]:
    """The curves in a `query_range` answer (`resultType: matrix`) of `pushed_query`:
    {metric: points (step, epoch, value, time)}, in the order of time; a step seen again
    keeps its newest value."""
    steps: dict[float, float] = {}
    epochs: dict[float, float] = {}
    metrics: dict[str, dict[float, float]] = {}
    for item in result or []:
        name = str((item.get("metric") or {}).get("__name__") or "")
        if name == STEP_SERIES:
            steps.update(_samples(item))
        elif name == EPOCH_SERIES:
            epochs.update(_samples(item))
        elif name.startswith(PREFIX) and len(name) > len(PREFIX):
            metrics.setdefault(name[len(PREFIX):], {}).update(_samples(item))
    curves: dict[str, list[Point]] = {}
    for name, samples in metrics.items():
        by_step: dict[float, Point] = {}
        for t in sorted(samples):
            if t in steps:
                step = steps[t]
                by_step.pop(step, None)
                by_step[step] = (int(step) if step.is_integer() else step, epochs.get(t),
                                 samples[t], t)
        if by_step:
            curves[name] = sorted(by_step.values(), key=lambda q: q[0])  # type: ignore[arg-type, return-value]
    return curves


def read_pushed(client, namespace: str, job: str, start: float, end: float
                ) -> dict[str, list[Point]]:
    """The job's pushed curves between `start` and `end` (seconds since the epoch), read
    with `client` (odh.training.metrics.prometheus.PrometheusClient)."""
    if end <= start:
        return {}
    return pushed_curves(client.query_range(pushed_query(namespace, job), namespace, start,
                                            end, step_for(end - start)))


def pushed_over_run(client, namespace: str, job: str, started: datetime | None,
                    finished: datetime | None) -> dict[str, list[Point]]:
    """The curves the job pushed over its run (from `started` to `finished`, or to now
    while it runs), {} when none, or when Prometheus would not say: the log's curves
    stand then."""
    if started is None:
        return {}
    end = (finished or datetime.now(UTC)).timestamp()
    try:
        return read_pushed(client, namespace, job, started.timestamp(), end)
    except errors.ClusterError as e:
        log.info("no pushed training curves of %s/%s: %s", namespace, job, e.message)
        return {}


def with_pushed(reader: CurveReader | None, pushed: dict[str, list[Point]]
                ) -> CurveReader | None:
    """The log's curves with Prometheus' in place of those of the same name."""
    if not pushed:
        return reader
    merged = CurveReader(reader.state() if reader is not None else None)
    merged.series = {k: s for k, s in merged.series.items() if s.name not in pushed}
    for name, points in pushed.items():
        merged.series[f"{name}@{STEP}"] = Series(name, STEP, list(points))
    return merged
