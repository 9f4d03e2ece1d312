"""Evaluate a parsed PromQL expression (see promql.py for the subset) over a series source.

The evaluator works on all steps of a query at once, as Prometheus' range evaluation does:
an instant vector is a set of series, each a list of values (None = absent) aligned with
the query's timestamps. Semantics follow Prometheus: a 5-minute lookback for instant
selectors, staleness markers end a series at once, `rate`/`increase` extrapolate as
`extrapolatedRate` does and correct counter resets, windows are left-open `(t-r, t]`.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from simcluster.monitoring.promql import (
    Aggregate,
    Binary,
    Call,
    Expr,
    Matcher,
    MatrixSelector,
    NumberLiteral,
    Unary,
    VectorSelector,
)

LOOKBACK = 300.0
# Prometheus refuses queries that touch more than --query.max-samples (50 million); this
# one answers on the API server's event loop, so it draws the line sooner.
MAX_SAMPLES = 5_000_000
TOO_MANY_SAMPLES = ("query processing would load too many samples into memory in query "
                    "execution")
Labels = dict[str, str]
Sample = tuple[float, float | None]  # value None: a staleness marker


class ExecutionError(Exception):
    """A query that parses but cannot be evaluated (Prometheus: 422 `execution`)."""


class Series(Protocol):
    labels: Labels

    def samples(self, lo: float, hi: float) -> list[Sample]:
        """Samples with lo < t <= hi, in time order."""

    def at(self, t: float, lookback: float) -> float | None:
        """What an instant selector sees at t: the latest sample in (t - lookback, t],
        None when there is none or it is a staleness marker."""

    def active(self, lo: float, hi: float) -> bool:
        """Whether the series has a sample in (lo, hi] (cheaper than computing them)."""


class Source(Protocol):
    def select(self, matchers: list[Matcher], lo: float, hi: float) -> Iterable[Series]:
        """Series matching all matchers that may have samples in (lo, hi]."""


@dataclass
class ListSeries:
    """A series given by its samples (tests and fixed data)."""

    labels: Labels
    points: list[Sample]

    def samples(self, lo: float, hi: float) -> list[Sample]:
        return [p for p in self.points if lo < p[0] <= hi]

    def at(self, t: float, lookback: float) -> float | None:
        before = [p for p in self.points if t - lookback < p[0] <= t]
        return before[-1][1] if before else None

    def active(self, lo: float, hi: float) -> bool:
        return any(lo < p[0] <= hi and p[1] is not None for p in self.points)


@dataclass
class Scalar:
    values: list[float]


@dataclass
class Vector:
    series: dict[tuple, tuple[Labels, list[float | None]]]


@dataclass
class Matrix:
    series: list[tuple[Labels, list[tuple[float, float]]]]


Value = Scalar | Vector | Matrix


def label_key(labels: Labels) -> tuple:
    return tuple(sorted(labels.items()))


def without_name(labels: Labels) -> Labels:
    return {k: v for k, v in labels.items() if k != "__name__"}


def _put(out: dict[tuple, tuple[Labels, list[float | None]]], labels: Labels,
         values: list[float | None]) -> None:
    """Add a series; two series with one label set may not both have a value at a step."""
    key = label_key(labels)
    if key not in out:
        out[key] = (labels, values)
        return
    merged = out[key][1]
    for i, v in enumerate(values):
        if v is None:
            continue
        if merged[i] is not None:
            raise ExecutionError("vector cannot contain metrics with the same labelset")
        merged[i] = v


class Evaluator:
    def __init__(self, source: Source, times: list[float],
                 max_samples: int = MAX_SAMPLES) -> None:
        self.source = source
        self.times = times
        self.max_samples = max_samples
        self.loaded = 0

    def _load(self, n: int) -> None:
        self.loaded += n
        if self.loaded > self.max_samples:
            raise ExecutionError(TOO_MANY_SAMPLES)

    def eval(self, node: Expr) -> Value:
        if isinstance(node, NumberLiteral):
            return Scalar([node.value] * len(self.times))
        if isinstance(node, VectorSelector):
            return self.instant_selector(node)
        if isinstance(node, MatrixSelector):
            return self.matrix_selector(node)
        if isinstance(node, Call):
            return self.call(node)
        if isinstance(node, Aggregate):
            return self.aggregate(node)
        if isinstance(node, Unary):
            inner = self.eval(node.expr)
            if isinstance(inner, Scalar):
                return Scalar([-v for v in inner.values])
            assert isinstance(inner, Vector)
            out: dict[tuple, tuple[Labels, list[float | None]]] = {}
            for labels, values in inner.series.values():
                _put(out, without_name(labels), [None if v is None else -v for v in values])
            return Vector(out)
        if isinstance(node, Binary):
            return self.binary(node)
        raise ExecutionError(f"cannot evaluate {type(node).__name__}")

    # -- selectors -------------------------------------------------------------------------
    def instant_selector(self, node: VectorSelector) -> Vector:
        times = self.times
        out: dict[tuple, tuple[Labels, list[float | None]]] = {}
        for series in self.source.select(node.matchers, times[0] - LOOKBACK, times[-1]):
            self._load(len(times))
            values = [series.at(t, LOOKBACK) for t in times]
            if any(v is not None for v in values):
                _put(out, dict(series.labels), values)
        return Vector(out)

    def _range_samples(self, node: MatrixSelector) -> Iterable[tuple[Labels, list[float],
                                                                       list[float]]]:
        lo = self.times[0] - node.range
        for series in self.source.select(node.vector.matchers, lo, self.times[-1]):
            samples = [s for s in series.samples(lo, self.times[-1]) if s[1] is not None]
            self._load(len(samples))
            if samples:
                yield (dict(series.labels), [s[0] for s in samples],
                       [float(s[1]) for s in samples])  # type: ignore[arg-type]

    def matrix_selector(self, node: MatrixSelector) -> Matrix:
        t = self.times[-1]
        result = []
        for labels, stamps, values in self._range_samples(node):
            lo = bisect_right(stamps, t - node.range)
            hi = bisect_right(stamps, t)
            points = list(zip(stamps[lo:hi], values[lo:hi], strict=True))
            if points:
                result.append((labels, points))
        return Matrix(result)

    # -- functions ------------------------------------------------------------------------
    def call(self, node: Call) -> Vector:
        rng = node.arg.range
        out: dict[tuple, tuple[Labels, list[float | None]]] = {}
        for labels, stamps, values in self._range_samples(node.arg):
            result: list[float | None] = []
            for t in self.times:
                lo = bisect_right(stamps, t - rng)
                hi = bisect_right(stamps, t)
                result.append(_range_function(node.func, stamps[lo:hi], values[lo:hi],
                                              t - rng, t, rng))
            if any(v is not None for v in result):
                _put(out, without_name(labels), result)
        return Vector(out)

    # -- aggregation ----------------------------------------------------------------------
    def aggregate(self, node: Aggregate) -> Vector:
        inner = self.eval(node.expr)
        assert isinstance(inner, Vector)
        groups: dict[tuple, tuple[Labels, list[list[float]]]] = {}
        for labels, values in inner.series.values():
            if node.without:
                drop = set(node.grouping) | {"__name__"}
                group = {k: v for k, v in labels.items() if k not in drop}
            else:
                group = {k: labels[k] for k in node.grouping if labels.get(k, "") != ""}
            key = label_key(group)
            if key not in groups:
                groups[key] = (group, [[] for _ in self.times])
            for i, v in enumerate(values):
                if v is not None:
                    groups[key][1][i].append(v)
        out: dict[tuple, tuple[Labels, list[float | None]]] = {}
        for key, (group, per_step) in groups.items():
            out[key] = (group, [_aggregate(node.op, vs) if vs else None for vs in per_step])
        return Vector(out)

    # -- binary operators ---------------------------------------------------------------------
    def binary(self, node: Binary) -> Value:
        lhs = self.eval(node.lhs)
        rhs = self.eval(node.rhs)
        op = node.op
        if isinstance(lhs, Scalar) and isinstance(rhs, Scalar):
            return Scalar([_arith(op, a, b) for a, b in zip(lhs.values, rhs.values,
                                                            strict=True)])
        out: dict[tuple, tuple[Labels, list[float | None]]] = {}
        if isinstance(lhs, Vector) and isinstance(rhs, Scalar):
            for labels, values in lhs.series.values():
                _put(out, without_name(labels), [
                    None if a is None else _arith(op, a, b)
                    for a, b in zip(values, rhs.values, strict=True)])
            return Vector(out)
        if isinstance(lhs, Scalar) and isinstance(rhs, Vector):
            for labels, values in rhs.series.values():
                _put(out, without_name(labels), [
                    None if b is None else _arith(op, a, b)
                    for a, b in zip(lhs.values, values, strict=True)])
            return Vector(out)
        assert isinstance(lhs, Vector) and isinstance(rhs, Vector)
        right: dict[tuple, tuple[Labels, list[float | None]]] = {}
        for labels, values in rhs.series.values():
            try:
                _put(right, without_name(labels), list(values))
            except ExecutionError:
                raise ExecutionError(
                    "found duplicate series for the match group on the right hand-side of "
                    "the operation: many-to-many matching not allowed: matching labels must "
                    "be unique on one side") from None
        for labels, values in lhs.series.values():
            match = without_name(labels)
            other = right.get(label_key(match))
            if other is None:
                continue
            result = [None if a is None or b is None else _arith(op, a, b)
                      for a, b in zip(values, other[1], strict=True)]
            if any(v is not None for v in result):
                try:
                    _put(out, match, result)
                except ExecutionError:
                    raise ExecutionError(
                        "found duplicate series for the match group on the left hand-side "
                        "of the operation: many-to-many matching not allowed: matching "
                        "labels must be unique on one side") from None
        return Vector(out)


def _arith(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:  # IEEE 754, as Go computes it
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * (1 if math.copysign(1, b) > 0 else -1)
    return a / b


def _aggregate(op: str, values: list[float]) -> float:
    if op == "sum":
        return math.fsum(values)
    if op == "avg":
        return math.fsum(values) / len(values)
    if op == "count":
        return float(len(values))
    if op == "max":
        real = [v for v in values if not math.isnan(v)]
        return max(real) if real else math.nan
    real = [v for v in values if not math.isnan(v)]
    return min(real) if real else math.nan


def _range_function(func: str, stamps: list[float], values: list[float], start: float,
                    end: float, rng: float) -> float | None:
    if func == "avg_over_time":
        return math.fsum(values) / len(values) if values else None
    if func == "max_over_time":
        if not values:
            return None
        real = [v for v in values if not math.isnan(v)]
        return max(real) if real else math.nan
    if func == "min_over_time":
        if not values:
            return None
        real = [v for v in values if not math.isnan(v)]
        return min(real) if real else math.nan
    if len(values) < 2:
        return None
    if func == "irate":
        last, prev = values[-1], values[-2]
        delta = last if last < prev else last - prev
        interval = stamps[-1] - stamps[-2]
        return delta / interval if interval > 0 else None
    return _extrapolated_rate(stamps, values, start, end, rng, func == "rate")


def _extrapolated_rate(stamps: list[float], values: list[float], start: float, end: float,
                       rng: float, is_rate: bool) -> float:
    """Prometheus' extrapolatedRate for counters (rate and increase)."""
    result = values[-1] - values[0]
    prev = values[0]
    for v in values[1:]:
        if v < prev:
            result += prev
        prev = v
    to_start = stamps[0] - start
    to_end = end - stamps[-1]
    sampled = stamps[-1] - stamps[0]
    average = sampled / (len(values) - 1)
    if result > 0 and values[0] >= 0:
        to_zero = sampled * (values[0] / result)
        if to_zero < to_start:
            to_start = to_zero
    threshold = average * 1.1
    interval = sampled
    interval += to_start if to_start < threshold else average / 2
    interval += to_end if to_end < threshold else average / 2
    result *= interval / sampled
    if is_rate:
        result /= rng
    return result


def step_times(start: float, end: float, step: float) -> list[float]:
    """The evaluation timestamps of a range query, in whole milliseconds as Prometheus."""
    start_ms, end_ms, step_ms = round(start * 1000), round(end * 1000), round(step * 1000)
    return [t / 1000 for t in range(start_ms, end_ms + 1, max(1, step_ms))]
