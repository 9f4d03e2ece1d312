"""Network and disk I/O per pod on the Metrics tab: their PromQL, their series, their units,
and which charts are drawn when a cluster's Prometheus has none of them."""

from __future__ import annotations

import pytest

from odh.training.kinds import MPIJOB
from odh.training.metrics import charts as m
from tests.unit.test_training_metrics import (
    JOB,
    NOW,
    FakePrometheus,
    client_with,
    job_answers,
    matrix,
)

SEL = '{namespace="team-nlp",pod=~"bert-large-(launcher(-[a-z0-9]{5})?|worker-[0-9]+)"}'
REAL = SEL[:-1] + ',container!="",container!="POD"}'


def test_network_is_summed_per_pod_without_a_container_matcher():
    # cAdvisor reports a pod's network once, on the pod's cgroup (container="")
    q = m.JobQueries("team-nlp", MPIJOB, JOB, m.time_range("1h"))
    assert q.network(m.NET_RECEIVE) == \
        f"sum by (pod) (rate(container_network_receive_bytes_total{SEL}[2m]))"
    assert q.network(m.NET_TRANSMIT) == \
        f"sum by (pod) (rate(container_network_transmit_bytes_total{SEL}[2m]))"


def test_disk_is_summed_over_the_pods_real_containers():
    q = m.JobQueries("team-nlp", MPIJOB, JOB, m.time_range("6h"))
    assert q.disk(m.FS_READS) == f"sum by (pod) (rate(container_fs_reads_bytes_total{REAL}[2m]))"
    assert q.disk(m.FS_WRITES) == \
        f"sum by (pod) (rate(container_fs_writes_bytes_total{REAL}[2m]))"
    assert "[10m]" in m.JobQueries("team-nlp", MPIJOB, JOB, m.time_range("24h")).disk(
        m.FS_READS)  # two steps of a day's range


def io_answers() -> dict:
    def per_pod(value: str) -> dict:
        return matrix([({"pod": f"{JOB}-worker-1"}, [(NOW - 10, value), (NOW, "NaN")]),
                       ({"pod": f"{JOB}-launcher-x7k2p"}, [(NOW, "51200")]),
                       ({"pod": f"{JOB}-worker-0"}, [(NOW, value)])])
    return {"container_network_receive_bytes_total": per_pod("412000000"),
            "container_network_transmit_bytes_total": per_pod("400000000"),
            "container_fs_reads_bytes_total": per_pod("96000000"),
            "container_fs_writes_bytes_total": per_pod("2500000")}


def test_io_series_are_per_pod_launcher_first_in_bytes_per_second():
    adapter = FakePrometheus({**io_answers(), **job_answers()})
    with client_with(adapter) as client:
        result = m.job_metrics(client, "team-nlp", MPIJOB, JOB, m.time_range("1h"), now=NOW)
    received = result.charts["network_receive"]
    assert received.unit == "bytes_per_second"
    assert received.title == "Network received per pod"
    assert [(s.name, s.y) for s in received.series] == [
        ("launcher", [51200.0]), ("worker-0", [412e6]), ("worker-1", [412e6, None])]
    assert result.charts["disk_write"].series[1].latest == 2.5e6
    assert result.shown() == list(m.CHART_KEYS)
    assert not result.io_missing
    data = result.as_dict()["charts"]
    assert list(data) == list(m.CHART_KEYS)
    assert data["disk_read"]["series"][1] == {"name": "worker-0", "label": "worker-0",
                                              "pod": f"{JOB}-worker-0", "t": [int(NOW)],
                                              "y": [96e6]}


def test_a_prometheus_without_io_series_draws_no_io_chart_and_says_so():
    adapter = FakePrometheus(job_answers())  # GPU, CPU and memory only
    with client_with(adapter) as client:
        result = m.job_metrics(client, "team-nlp", MPIJOB, JOB, m.time_range("1h"), now=NOW)
    assert result.shown() == ["gpu_util", "gpu_memory", "cpu", "memory"]
    assert result.io_missing
    assert result.charts["network_receive"].series == []


def test_a_job_with_no_data_yet_keeps_its_resource_charts_and_says_nothing_of_io():
    with client_with(FakePrometheus()) as client:
        result = m.job_metrics(client, "team-nlp", MPIJOB, JOB, m.time_range("1h"), now=NOW)
    assert result.shown() == ["gpu_util", "gpu_memory", "cpu", "memory"]  # "No data yet"
    assert not result.io_missing


@pytest.mark.parametrize(("value", "text"), [
    (1.234e9, "1.23 GB/s"), (412.34e6, "412.3 MB/s"), (51200, "51 kB/s"), (512, "512 B/s"),
    (0, "0 B/s"), (None, "\u2013")])
def test_rates_are_written_in_decimal_units(value, text):
    assert m.format_value(value, "bytes_per_second") == text
