"""Network and disk I/O per pod on the Metrics tab, against simcluster's Prometheus: the
charts' points are what Prometheus answers to the rate of cAdvisor's counters, the tables
say MB/s, and the downloads carry them.

The demo's bert-large-pretrain runs 8 Workers that exchange gradients while they train."""

from __future__ import annotations

import csv
import io
import re

import pytest
import requests
from django.urls import reverse

from tests.html_checks import assert_valid

pytestmark = pytest.mark.usefixtures("demo_prometheus")
BERT = reverse("training-job-detail", args=["team-nlp", "mpijob", "bert-large-pretrain"])
BERT_JSON = reverse("training-job-metrics", args=["team-nlp", "mpijob", "bert-large-pretrain"])
BERT_CSV = reverse("training-job-metrics-csv", args=["team-nlp", "mpijob",
                                                     "bert-large-pretrain"])
PODS = 'pod=~"bert-large-pretrain-(launcher(-[a-z0-9]{5})?|worker-[0-9]+)"'
IO = {"network_receive": f'container_network_receive_bytes_total{{namespace="team-nlp",{PODS}}}',
      "network_transmit": f'container_network_transmit_bytes_total{{namespace="team-nlp",{PODS}}}',
      "disk_read": f'container_fs_reads_bytes_total{{namespace="team-nlp",{PODS},'
                   'container!="",container!="POD"}',
      "disk_write": f'container_fs_writes_bytes_total{{namespace="team-nlp",{PODS},'
                    'container!="",container!="POD"}'}




def asked(cluster, promql: str, start: str, end: str, step: int) -> dict[str, list]:
    """Prometheus' own answer to `promql` over the range, as alice: values by pod."""
    got = requests.get(cluster.prometheus_url + "/api/v1/query_range", params={
        "query": promql, "start": start, "end": end, "step": step, "namespace": "team-nlp"},
        headers={"Authorization": f"Bearer {cluster.token('alice')}"},
        verify=str(cluster.ca_file), timeout=30)
    assert got.status_code == 200, got.text
    return {s["metric"]["pod"]: [(float(t), float(v)) for t, v in s["values"]]
            for s in got.json()["data"]["result"]}


def test_the_io_charts_points_are_what_prometheus_answered(alice, demo_cluster):
    data = alice.get(BERT_JSON, {"range": "15m"}).json()
    for key, selector in IO.items():
        chart = data["charts"][key]
        assert chart["unit"] == "bytes_per_second"
        answer = asked(demo_cluster, f"sum by (pod) (rate({selector}[2m]))", data["start"],
                       data["end"], data["step"])
        assert answer, key
        drawn = {s["pod"]: [(t, y) for t, y in zip(s["t"], s["y"], strict=True)
                            if y is not None] for s in chart["series"]}
        assert drawn == {pod: [(t, round(v, 4)) for t, v in points]
                         for pod, points in answer.items()}, key
        names = [s["name"] for s in chart["series"]]
        assert names == ["launcher"] + [f"worker-{i}" for i in range(8)]
    # training Workers move hundreds of MB/s; the Launcher only talks ssh
    received = {s["name"]: s["y"][-1] for s in data["charts"]["network_receive"]["series"]}
    assert all(received[f"worker-{i}"] > 100e6 for i in range(8))
    assert received["launcher"] < 1e6


def test_the_tab_draws_network_and_disk_beside_cpu_and_memory_in_mb_per_second(alice):
    body = alice.get(BERT, {"tab": "metrics", "range": "15m"}).content.decode()
    assert_valid(body)
    keys = re.findall(r'data-chart="([a-z_]+)"', body)
    assert keys == ["gpu_util", "gpu_memory", "cpu", "memory", "network_receive",
                    "network_transmit", "disk_read", "disk_write"]
    assert "Network received per pod" in body and "Disk writes per pod" in body
    table = re.search(r'<table[^>]*data-chart-table="network_transmit".*?</table>', body,
                      re.S).group(0)
    rows = dict(re.findall(r'<tr data-series="([^"]+)".*?data-stat="latest"[^>]*>([^<]+)<',
                           table, re.S))
    assert re.fullmatch(r"\d+\.\d MB/s", rows["worker-0"]), rows
    assert rows["launcher"].endswith("kB/s")
    assert "data-metrics-io-missing" not in body
    units = re.search(r'"units": (\{[^}]*\})', body).group(1)
    assert '"mbps": "MB/s"' in units


def test_the_csv_download_carries_the_io_series(alice):
    rows = list(csv.DictReader(io.StringIO(alice.get(BERT_CSV, {"range": "15m"})
                                           .content.decode())))
    charts = {r["series"].split("/")[0] for r in rows}
    assert {"network_receive", "network_transmit", "disk_read", "disk_write"} <= charts
    assert any(r["series"] == "disk_read/worker-3" and float(r["value"]) > 1e6 for r in rows)


def test_the_tab_in_french_writes_rates_in_its_units(alice, settings):
    alice.cookies[settings.LANGUAGE_COOKIE_NAME] = "fr"
    body = alice.get(BERT, {"tab": "metrics", "range": "15m"}).content.decode()
    table = re.search(r'<table[^>]*data-chart-table="disk_read".*?</table>', body,
                      re.S).group(0)
    assert re.search(r">\d+[.,]\d Mo/s<", table), table[:600]
