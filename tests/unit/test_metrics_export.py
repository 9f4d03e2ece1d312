"""A job's chart series shaped for export: the dict `get_metrics()` returns and the CSV
`odh training metrics` prints."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest

from odh.training.metrics.charts import Chart, JobMetrics, Series
from odh.training.metrics.export import as_series, chart_names, csv_text, instant
from odh.training.metrics.promql import TimeRange, Window

T0 = datetime(2025, 1, 31, 12, 0, tzinfo=UTC).timestamp()


def metrics() -> JobMetrics:
    charts = {
        "gpu_util": Chart("gpu_util", "GPU", "percent", [
            Series("worker-0 GPU 0", "bert-worker-0", [T0, T0 + 15, T0 + 30], [87.5, None, 90.0])]),
        "gpu_memory": Chart("gpu_memory", "GPU memory", "bytes", []),
        "cpu": Chart("cpu", "CPU", "cores", [
            Series("launcher", "bert-launcher-x7k2p", [T0], [0.25]),
            Series("worker-0", "bert-worker-0", [T0], [6.5])]),
        "memory": Chart("memory", "Memory", "bytes", [
            Series("worker-0", "bert-worker-0", [T0], [129554601.0])]),
    }
    return JobMetrics(TimeRange("export", 60), Window(T0, T0 + 30, 15), "", charts)


def test_series_are_points_by_chart_and_series_with_the_gaps_left_out():
    data = as_series(metrics(), ["gpu_util", "cpu"])
    assert data == {
        "gpu_util": {"worker-0 GPU 0": [{"time": "2025-01-31T12:00:00Z", "value": 87.5},
                                        {"time": "2025-01-31T12:00:30Z", "value": 90.0}]},
        "cpu": {"launcher": [{"time": "2025-01-31T12:00:00Z", "value": 0.25}],
                "worker-0": [{"time": "2025-01-31T12:00:00Z", "value": 6.5}]},
    }


def test_csv_has_a_header_then_a_row_a_point_with_every_digit():
    rows = list(csv.reader(io.StringIO(csv_text(as_series(metrics(), chart_names(None))))))
    # step and epoch: for training points only (tests/unit/test_training_curves.py)
    assert rows == [["series", "time", "value", "step", "epoch"],
                    ["gpu_util/worker-0 GPU 0", "2025-01-31T12:00:00Z", "87.5", "", ""],
                    ["gpu_util/worker-0 GPU 0", "2025-01-31T12:00:30Z", "90", "", ""],
                    ["cpu/launcher", "2025-01-31T12:00:00Z", "0.25", "", ""],
                    ["cpu/worker-0", "2025-01-31T12:00:00Z", "6.5", "", ""],
                    ["memory/worker-0", "2025-01-31T12:00:00Z", "129554601", "", ""]]


def test_a_chart_without_series_is_an_empty_dict_and_no_csv_rows():
    data = as_series(metrics(), ["gpu_memory"])
    assert data == {"gpu_memory": {}}
    assert csv_text(data) == "series,time,value,step,epoch\n"


def test_chart_names_come_in_the_metrics_tabs_order_and_unknown_ones_are_named():
    assert chart_names(None) == ["gpu_util", "gpu_memory", "cpu", "memory", "network_receive",
                                 "network_transmit", "disk_read", "disk_write", "training"]
    assert chart_names(["disk_read", "memory", "gpu_util"]) == ["gpu_util", "memory",
                                                                "disk_read"]
    assert chart_names("cpu") == ["cpu"]
    with pytest.raises(ValueError, match=r"Unknown metric loss: use gpu_util, gpu_memory, "
                                         r"cpu, memory, network_receive, network_transmit, "
                                         r"disk_read, disk_write, training"):
        chart_names(["cpu", "loss"])


def test_times_are_read_from_datetimes_numbers_and_iso_text():
    assert instant(datetime(2025, 1, 31, 12, 0), "start") == T0  # naive: UTC
    assert instant("2025-01-31T12:00:00Z", "start") == T0
    assert instant(T0, "end") == T0
    assert instant(None, "end") is None
    with pytest.raises(ValueError, match="end must be a time such as"):
        instant("tomorrow", "end")
