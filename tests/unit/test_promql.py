"""simcluster's PromQL subset: parser and evaluator on synthetic series (no network)."""

from __future__ import annotations

import math

import pytest

from simcluster.monitoring import promql
from simcluster.monitoring.prometheus import enforce_namespace, format_time, format_value
from simcluster.monitoring.promql_eval import Evaluator, ExecutionError, ListSeries, Scalar, Vector


class ListSource:
    def __init__(self, *series: ListSeries) -> None:
        self.series = list(series)

    def select(self, matchers, lo, hi):
        return [s for s in self.series if promql.matches_all(matchers, s.labels)]


def counter(labels: dict, per_second: float, start: float = 0, end: float = 600,
            interval: float = 15) -> ListSeries:
    points = []
    t = start
    while t <= end:
        points.append((t, per_second * (t - start)))
        t += interval
    return ListSeries(labels, points)


def gauge(labels: dict, value: float, start: float = 0, end: float = 600) -> ListSeries:
    return ListSeries(labels, [(float(t), value) for t in range(int(start), int(end) + 1, 15)])


def gpu(name: str, pod: str, gpu_index: str, value: float, namespace: str = "team-nlp"):
    return gauge({"__name__": name, "namespace": namespace, "pod": pod, "gpu": gpu_index},
                 value)


SOURCE = ListSource(
    gpu("DCGM_FI_DEV_GPU_UTIL", "train-worker-0", "0", 90),
    gpu("DCGM_FI_DEV_GPU_UTIL", "train-worker-0", "1", 80),
    gpu("DCGM_FI_DEV_GPU_UTIL", "train-worker-1", "0", 70),
    gpu("DCGM_FI_DEV_GPU_UTIL", "other", "0", 10, namespace="research"),
    gpu("DCGM_FI_DEV_FB_USED", "train-worker-0", "0", 60000),
    gpu("DCGM_FI_DEV_FB_FREE", "train-worker-0", "0", 20000),
    counter({"__name__": "container_cpu_usage_seconds_total", "namespace": "team-nlp",
             "pod": "train-worker-0", "container": "worker"}, 2.0),
)


def instant(query: str, t: float = 600.0, source=SOURCE):
    return Evaluator(source, [t]).eval(promql.parse(query))


def values(result: Vector) -> dict[tuple, float | None]:
    """{(label values sorted by name, minus __name__): value at the only step}"""
    out = {}
    for labels, vals in result.series.values():
        key = tuple(v for k, v in sorted(labels.items()) if k != "__name__")
        out[key] = vals[0]
    return out


# -- selectors ----------------------------------------------------------------------------
def test_selector_matchers_pick_series():
    assert len(instant("DCGM_FI_DEV_GPU_UTIL").series) == 4
    assert len(instant('DCGM_FI_DEV_GPU_UTIL{namespace="team-nlp"}').series) == 3
    assert len(instant('DCGM_FI_DEV_GPU_UTIL{namespace!="team-nlp"}').series) == 1
    assert len(instant('DCGM_FI_DEV_GPU_UTIL{pod=~"train-.*", gpu="0"}').series) == 2
    assert len(instant('DCGM_FI_DEV_GPU_UTIL{pod!~"train-.*"}').series) == 1
    assert len(instant('{__name__=~"DCGM_FI_DEV_FB_.*"}').series) == 2


def test_regex_matchers_are_anchored():
    assert instant('DCGM_FI_DEV_GPU_UTIL{pod=~"train"}').series == {}
    assert instant('DCGM_FI_DEV_GPU_UTIL{pod=~"train-worker-[01]"}').series


def test_selector_keeps_metric_name_and_value():
    result = instant('DCGM_FI_DEV_GPU_UTIL{pod="train-worker-1"}')
    [(labels, vals)] = result.series.values()
    assert labels["__name__"] == "DCGM_FI_DEV_GPU_UTIL"
    assert vals == [70]


def test_instant_selector_looks_back_five_minutes_only():
    source = ListSource(ListSeries({"__name__": "m"}, [(0.0, 1.0)]))
    assert instant("m", t=299, source=source).series
    assert instant("m", t=300, source=source).series == {}


def test_staleness_marker_ends_a_series_at_once():
    source = ListSource(ListSeries({"__name__": "m"}, [(0.0, 1.0), (15.0, 2.0), (30.0, None)]))
    assert values(instant("m", t=29, source=source)) == {(): 2.0}
    assert instant("m", t=31, source=source).series == {}


# -- range functions ---------------------------------------------------------------------
def test_rate_and_increase_of_a_steady_counter():
    assert values(instant("rate(container_cpu_usage_seconds_total[5m])")) == {
        ("worker", "team-nlp", "train-worker-0"): pytest.approx(2.0)}
    [v] = values(instant("increase(container_cpu_usage_seconds_total[5m])")).values()
    assert v == pytest.approx(600.0)
    [v] = values(instant("irate(container_cpu_usage_seconds_total[1m])")).values()
    assert v == pytest.approx(2.0)


def test_rate_drops_the_metric_name():
    [labels] = [lbl for lbl, _ in instant("rate(container_cpu_usage_seconds_total[5m])")
                .series.values()]
    assert "__name__" not in labels


def test_rate_corrects_counter_resets():
    # restarts every 150 s; each restart has counted 15 s more by its first sample
    points = [(float(t), float(t % 150 + 15)) for t in range(0, 601, 15)]
    source = ListSource(ListSeries({"__name__": "c"}, points))
    [v] = values(instant("rate(c[5m])", source=source)).values()
    assert v == pytest.approx(1.0)


def test_rate_needs_two_samples():
    source = ListSource(ListSeries({"__name__": "c"}, [(590.0, 5.0)]))
    assert instant("rate(c[5m])", source=source).series == {}


def test_over_time_functions():
    points = [(float(t), float(t)) for t in range(0, 601, 15)]
    source = ListSource(ListSeries({"__name__": "g", "pod": "p"}, points))
    assert values(instant("max_over_time(g[1m])", source=source)) == {("p",): 600.0}
    assert values(instant("avg_over_time(g[1m])", source=source)) == {("p",): 577.5}
    # the watcher's early warning: memory over 90% of its limit for the whole window
    assert values(instant("min_over_time(g[1m])", source=source)) == {("p",): 555.0}


def test_range_selector_alone_returns_raw_samples():
    result = instant("DCGM_FI_DEV_GPU_UTIL{pod=\"train-worker-1\"}[1m]")
    [(_labels, points)] = result.series
    assert [t for t, _ in points] == [555.0, 570.0, 585.0, 600.0]


# -- aggregation ------------------------------------------------------------------------
@pytest.mark.parametrize(("query", "expected"), [
    ("sum(DCGM_FI_DEV_GPU_UTIL)", {(): 250.0}),
    ("avg(DCGM_FI_DEV_GPU_UTIL)", {(): 62.5}),
    ("max(DCGM_FI_DEV_GPU_UTIL)", {(): 90.0}),
    ("min(DCGM_FI_DEV_GPU_UTIL)", {(): 10.0}),
    ("count(DCGM_FI_DEV_GPU_UTIL)", {(): 4.0}),
    ("sum by (pod) (DCGM_FI_DEV_GPU_UTIL{namespace=\"team-nlp\"})",
     {("train-worker-0",): 170.0, ("train-worker-1",): 70.0}),
    ("avg(DCGM_FI_DEV_GPU_UTIL{namespace=\"team-nlp\"}) by (pod)",
     {("train-worker-0",): 85.0, ("train-worker-1",): 70.0}),
    ("max without (gpu, pod) (DCGM_FI_DEV_GPU_UTIL)",
     {("team-nlp",): 90.0, ("research",): 10.0}),
    ("count by (namespace) (DCGM_FI_DEV_GPU_UTIL)", {("team-nlp",): 3.0, ("research",): 1.0}),
])
def test_aggregations(query, expected):
    assert values(instant(query)) == expected


def test_aggregation_by_a_missing_label_groups_everything():
    assert values(instant("sum by (node) (DCGM_FI_DEV_GPU_UTIL)")) == {(): 250.0}


def test_sum_of_rates_by_pod():
    result = instant("sum by (pod) (rate(container_cpu_usage_seconds_total[5m]))")
    assert values(result) == {("train-worker-0",): pytest.approx(2.0)}


# -- arithmetic ------------------------------------------------------------------------
def test_scalar_arithmetic_and_precedence():
    assert instant("1 + 2 * 3").values == [7.0]
    assert instant("(1 + 2) * 3").values == [9.0]
    assert instant("10 - 4 - 3").values == [3.0]
    assert instant("-2 * 3").values == [-6.0]
    assert instant("8 / 2 / 2").values == [2.0]


def test_division_by_zero_follows_ieee():
    assert instant("1 / 0").values == [math.inf]
    assert instant("-1 / 0").values == [-math.inf]
    assert math.isnan(instant("0 / 0").values[0])


def test_vector_and_scalar():
    result = instant('DCGM_FI_DEV_GPU_UTIL{pod="train-worker-1"} / 100')
    [(labels, vals)] = result.series.values()
    assert "__name__" not in labels and vals == [0.7]
    result = instant('100 - DCGM_FI_DEV_GPU_UTIL{pod="train-worker-1"}')
    assert [v for _, v in result.series.values()] == [[30.0]]
    result = instant('-DCGM_FI_DEV_GPU_UTIL{pod="train-worker-1"}')
    assert [v for _, v in result.series.values()] == [[-70.0]]


def test_vectors_with_identical_label_sets():
    result = instant("DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)")
    assert values(result) == {("0", "team-nlp", "train-worker-0"): 0.75}


def test_vectors_with_different_label_sets_do_not_match():
    assert instant("DCGM_FI_DEV_GPU_UTIL + container_cpu_usage_seconds_total").series == {}


def test_same_labelset_twice_is_an_execution_error():
    with pytest.raises(ExecutionError, match="same labelset"):
        instant('{__name__=~"DCGM_FI_DEV_FB_.*"} * 2')


def test_too_many_samples_is_an_execution_error():
    with pytest.raises(ExecutionError, match="too many samples"):
        Evaluator(SOURCE, [float(t) for t in range(600)], max_samples=1000).eval(
            promql.parse("DCGM_FI_DEV_GPU_UTIL"))


def test_range_evaluation_over_steps():
    source = ListSource(ListSeries({"__name__": "g"}, [(0.0, 1.0), (60.0, 2.0), (120.0, 3.0)]))
    result = Evaluator(source, [0.0, 30.0, 60.0, 90.0, 120.0]).eval(promql.parse("g * 10"))
    assert isinstance(result, Vector)
    [(_, vals)] = result.series.values()
    assert vals == [10.0, 10.0, 20.0, 20.0, 30.0]
    scalar = Evaluator(source, [0.0, 60.0]).eval(promql.parse("2"))
    assert isinstance(scalar, Scalar) and scalar.values == [2.0, 2.0]


# -- what the subset refuses ---------------------------------------------------------------
@pytest.mark.parametrize(("query", "named"), [
    ("topk(3, DCGM_FI_DEV_GPU_UTIL)", "topk"),
    ("histogram_quantile(0.9, x)", "histogram_quantile"),
    ("label_replace(x, 'a', 'b', 'c', 'd')", "label_replace"),
    ("quantile by (pod) (0.9, x)", "quantile"),
    ("x offset 5m", "offset"),
    ("x @ 100", "@ modifier"),
    ("rate(x[5m:1m])", "subqueries"),
    ("x > 50", "comparison"),
    ("x == bool 1", "comparison"),
    ("x and y", '"and"'),
    ("x or y", '"or"'),
    ("x % 2", '"%"'),
    ("x ^ 2", '"^"'),
    ("a / on(pod) b", "vector matching"),
    ("a * ignoring(gpu) b", "vector matching"),
    ("a + bool b", "bool"),
    ('"text"', "string literals"),
])
def test_unsupported_queries_are_named(query, named):
    with pytest.raises(promql.Unsupported) as err:
        promql.parse(query)
    message = str(err.value)
    assert message.startswith("simcluster's PromQL subset does not support")
    assert named in message


@pytest.mark.parametrize(("query", "fragment"), [
    ("", "no expression found"),
    ("sum(", "unexpected end of input"),
    ("x{pod=}", "expected string"),
    ("x{pod=\"a\"", "unexpected end of input"),
    ("{}", "at least one non-empty matcher"),
    ('{pod=~".*"}', "at least one non-empty matcher"),
    ("nosuchfunction(x)", 'unknown function with name "nosuchfunction"'),
    ("rate(x)", "expected type range vector"),
    ("sum(x[5m])", "expected type instant vector"),
    ("x[5m] + 1", "binary expression must contain only scalar and instant vector"),
    ("x[5x]", "not a valid duration"),
    ('x{a=~"("}', "error parsing regexp"),
    ("rate(x[5m], 1)", "expected 1 argument"),
    ("sum by (pod) (x) by (gpu)", "only have one grouping clause"),
])
def test_malformed_queries(query, fragment):
    with pytest.raises(promql.PromQLError) as err:
        promql.parse(query)
    assert fragment in str(err.value)
    assert not isinstance(err.value, promql.Unsupported)


def test_parse_errors_give_a_position():
    with pytest.raises(promql.PromQLError, match=r"^1:9: parse error"):
        promql.parse("sum(x) +")


def test_durations():
    assert promql.parse_duration("90s") == 90
    assert promql.parse_duration("5m") == 300
    assert promql.parse_duration("1h30m") == 5400
    assert promql.parse_duration("2d") == 172800
    with pytest.raises(promql.PromQLError):
        promql.parse_duration("5 minutes")


def test_strings_and_comments():
    expr = promql.parse("x{pod='a\\'b', ns=`raw\\n`} # the rest is a comment")
    assert isinstance(expr, promql.VectorSelector)
    assert [(m.name, m.value) for m in expr.matchers[1:]] == [("pod", "a'b"), ("ns", "raw\\n")]


# -- tenancy and formatting ---------------------------------------------------------------
def test_enforced_namespace_replaces_any_namespace_matcher():
    expr = promql.parse('sum(rate(c{namespace=~".+", pod="p"}[5m])) / x')
    for sel in promql.selectors(expr):
        sel.matchers = enforce_namespace(sel.matchers, "team-nlp")
    selectors = promql.selectors(expr)
    assert len(selectors) == 2
    for sel in selectors:
        assert [(m.name, m.op, m.value) for m in sel.matchers
                if m.name == "namespace"] == [("namespace", "=", "team-nlp")]
    result = instant('sum(DCGM_FI_DEV_GPU_UTIL{namespace="research"})')
    assert values(result) == {(): 10.0}


def test_value_formatting_as_prometheus():
    assert format_value(5.0) == "5"
    assert format_value(0.1) == "0.1"
    assert format_value(1e-05) == "0.00001"
    assert format_value(-2.5) == "-2.5"
    assert format_value(math.nan) == "NaN"
    assert format_value(math.inf) == "+Inf"
    assert format_value(-math.inf) == "-Inf"
    assert format_time(1700000000.0) == 1700000000
    assert isinstance(format_time(1700000000.0), int)
    assert format_time(1700000000.1234) == 1700000000.123
