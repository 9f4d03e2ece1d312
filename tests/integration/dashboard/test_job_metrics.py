"""The Metrics tab, its JSON feed and the Overview's GPU line, against simcluster's Prometheus.

The demo's bert-large-pretrain runs 8 Workers with 1 GPU each on A100 nodes.
"""

from __future__ import annotations

import html
import json
import re
import time
from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from django.urls import reverse

from odh.training.metrics.charts import parse_iso
from tests.html_checks import assert_valid
from tests.simcluster_process import free_port

BERT = reverse("training-job-detail", args=["team-nlp", "mpijob", "bert-large-pretrain"])
BERT_JSON = reverse("training-job-metrics", args=["team-nlp", "mpijob", "bert-large-pretrain"])
RESNET_JSON = reverse("training-job-metrics", args=["team-cv", "mpijob", "resnet50-imagenet"])


@pytest.fixture(autouse=True)
def _prometheus(demo_cluster, settings):
    settings.PROMETHEUS_URL = demo_cluster.prometheus_url
    cache.clear()  # the Overview remembers GPU lines and an unreachable Prometheus briefly
    yield
    cache.clear()


def _meta(body: str) -> dict:
    """What the Metrics tab tells its script: which metrics.json to fetch, and its words."""
    return json.loads(re.search(r'<script id="metrics-meta" type="application/json">(.*?)'
                                r"</script>", body, re.S).group(1))


def test_metrics_json_refuses_a_bad_end(alice):
    r = alice.get(BERT_JSON, {"range": "15m", "end": "yesterday-ish"})
    assert r.status_code == 400
    assert "end" in r.json()["error"]


def _text(body: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))


def test_metrics_json_has_one_gpu_trace_per_worker(alice):
    r = alice.get(BERT_JSON, {"range": "15m"})
    assert r.status_code == 200
    assert r["Content-Type"] == "application/json"
    data = r.json()
    assert data["range"] == "15m"
    assert data["gpu_metric"] == "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
    gpu = data["charts"]["gpu_util"]["series"]
    assert sorted(s["pod"] for s in gpu) == [f"bert-large-pretrain-worker-{i}" for i in range(8)]
    assert [s["name"].split(" GPU ")[0] for s in gpu] == [f"worker-{i}" for i in range(8)]
    for s in gpu:
        assert s["t"] and len(s["t"]) == len(s["y"])
        assert all(isinstance(t, int) for t in s["t"])  # seconds: compact, not RFC 3339
        assert all(0 <= y <= 100 for y in s["y"] if y is not None)  # percent, not a ratio
    memory = data["charts"]["gpu_memory"]
    assert len(memory["series"]) == 8
    assert set(memory["capacity"].values()) == {80 * 1024 ** 3}  # A100 80GB, in bytes
    assert all(0 < s["y"][-1] <= 80 * 1024 ** 3 for s in memory["series"])
    pods = [s["name"] for s in data["charts"]["cpu"]["series"]]
    assert pods == ["launcher"] + [f"worker-{i}" for i in range(8)]
    assert [s["name"] for s in data["charts"]["memory"]["series"]] == pods


def test_metrics_json_since_returns_only_newer_points(alice):
    first = alice.get(BERT_JSON, {"range": "15m"}).json()
    trace = first["charts"]["gpu_util"]["series"][0]
    cut = trace["t"][-4]
    since = datetime.fromtimestamp(cut, UTC).isoformat().replace("+00:00", "Z")
    r = alice.get(BERT_JSON, {"range": "15m", "since": since})
    assert r.status_code == 200
    newer = r.json()
    for chart in newer["charts"].values():
        for s in chart["series"]:
            assert all(t > cut for t in s["t"]), (chart["key"], s["name"])
    gpu = newer["charts"]["gpu_util"]["series"]
    assert len(gpu) == 8
    assert all(s["t"] for s in gpu)
    assert len(gpu[0]["t"]) < len(trace["t"])
    assert gpu[0]["t"][:3] == trace["t"][-3:]  # the same instants as the first answer


def test_metrics_json_refuses_a_bad_since(alice):
    r = alice.get(BERT_JSON, {"since": "yesterday"})
    assert r.status_code == 400
    assert "since" in r.json()["error"]


def test_bob_may_not_read_team_nlp_metrics(bob):
    r = bob.get(BERT_JSON)
    assert r.status_code == 403
    assert "team-nlp" in r.json()["error"]


def test_metrics_json_says_when_prometheus_is_not_set_up(alice, settings):
    settings.PROMETHEUS_URL = ""
    r = alice.get(BERT_JSON)
    assert r.status_code == 503
    assert "PROMETHEUS_URL" in r.json()["error"]


def test_metrics_json_says_when_prometheus_is_unreachable(alice, settings):
    settings.PROMETHEUS_URL = f"https://127.0.0.1:{free_port()}"
    r = alice.get(BERT_JSON)
    assert r.status_code == 503
    assert "Prometheus" in r.json()["error"]


def test_metrics_tab_draws_four_charts_with_their_numbers(alice):
    r = alice.get(BERT, {"tab": "metrics", "range": "1h"})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    assert 'aria-current="page"' in re.search(r'<a[^>]*href="\?tab=metrics".*?</a>', body,
                                              re.S).group(0)
    for key in ("gpu_util", "gpu_memory", "cpu", "memory"):
        assert f'data-chart="{key}"' in body
        assert f'data-chart-table="{key}"' in body
    # Plotly from the plotly package, loaded without defer, then our script
    assert re.search(r'<script src="/static/plotly/plotly-basic\.min\.js"></script>', body)
    assert '/static/js/metrics.js' in body
    meta = _meta(body)
    assert meta["query"] == {"range": "1h"}  # the points come from metrics.json...
    assert meta["units"] == {"cpu": "CPU", "gib": "GiB", "mib": "MiB", "bps": "B/s",
                             "kbps": "kB/s", "mbps": "MB/s", "gbps": "GB/s"}  # for the script
    assert '"series"' not in body  # ...not inside the page
    assert len(alice.get(BERT_JSON, meta["query"]).json()["charts"]["gpu_util"]["series"]) == 8
    # the numbers as text: one row per GPU with latest, average and maximum
    table = re.search(r'<table[^>]*data-chart-table="gpu_util".*?</table>', body, re.S).group(0)
    rows = re.findall(r'<tr data-series="([^"]+)"[^>]*>(.*?)</tr>', table, re.S)
    assert [name.split(" GPU ")[0] for name, _ in rows] == [f"worker-{i}" for i in range(8)]
    assert all(re.search(r">\d+%<", cells) for _, cells in rows)
    cpu = re.search(r'<table[^>]*data-chart-table="cpu".*?</table>', body, re.S).group(0)
    assert re.search(r"\d+\.\d\d CPU", cpu)
    # the range buttons are plain links
    for key in ("job", "15m", "1h", "6h", "24h"):
        assert f'href="?tab=metrics&amp;range={key}"' in body
    assert re.search(r'range=1h"[^>]*aria-current="true"', body)


def test_the_tabs_series_are_read_once_for_its_tables_and_its_charts(alice, monkeypatch):
    """The page parses the range's points for its tables; its script's first fetch of the
    same range gets them without Prometheus being asked (and the points parsed) again."""
    from odh.training.metrics import charts

    real, calls = charts.job_metrics, []

    def counted(*args, **kwargs):
        calls.append(kwargs.get("since"))
        return real(*args, **kwargs)

    monkeypatch.setattr(charts, "job_metrics", counted)
    body = alice.get(BERT, {"tab": "metrics", "range": "6h"}).content.decode()
    drawn = alice.get(BERT_JSON, _meta(body)["query"]).json()
    assert len(drawn["charts"]["gpu_util"]["series"]) == 8
    assert calls == [None]  # read once, for both
    since = drawn["end"]
    alice.get(BERT_JSON, {**_meta(body)["query"], "since": since})
    assert calls == [None, charts.parse_iso(since)]  # a poll asks for what is new


def test_the_plotly_asset_is_served(alice):
    r = alice.get("/static/plotly/plotly-basic.min.js")
    assert r.status_code == 200
    assert b"plotly.js" in b"".join(r.streaming_content)[:400]


def test_metrics_tab_explains_when_prometheus_is_not_set_up(alice, settings):
    settings.PROMETHEUS_URL = ""
    r = alice.get(BERT, {"tab": "metrics"})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    text = _text(body)
    assert "Metrics are not set up" in text
    assert "PROMETHEUS_URL" in text
    assert "bert-large-pretrain" in text  # the rest of the page is there
    assert "plotly-basic.min.js" not in body


def test_metrics_tab_explains_when_prometheus_is_unreachable(alice, settings):
    settings.PROMETHEUS_URL = f"https://127.0.0.1:{free_port()}"
    r = alice.get(BERT, {"tab": "metrics"})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    text = _text(body)
    assert "Metrics are unavailable right now" in text
    assert "Prometheus" in text and "could not be reached" in text
    assert "Everything else on this page still works" in text


def test_metrics_tab_of_a_finished_job_says_there_is_no_recent_data(alice):
    # resnet50-imagenet finished hours ago: nothing of it in the last 15 minutes
    r = alice.get(reverse("training-job-detail", args=["team-cv", "mpijob",
                                                       "resnet50-imagenet"]),
                  {"tab": "metrics", "range": "15m"})
    assert r.status_code == 200
    assert_valid(r.content.decode())
    assert "No data in this time range." in _text(r.content.decode())
    assert alice.get(RESNET_JSON, {"range": "15m"}).status_code == 200


def test_metrics_tab_of_a_finished_job_opens_on_its_whole_run(alice):
    """resnet50-imagenet finished hours ago: without a range chosen, the charts cover its
    run, start to finish, instead of an empty last hour."""
    r = alice.get(reverse("training-job-detail", args=["team-cv", "mpijob",
                                                       "resnet50-imagenet"]),
                  {"tab": "metrics"})
    body = r.content.decode()
    assert_valid(body)
    assert "The whole run, one point every" in _text(body)
    assert re.search(r'range=job"[^>]*aria-current="true"', body)
    query = _meta(body)["query"]
    assert query["range"].startswith("job:")
    assert parse_iso(query["end"]) < time.time() - 3600  # the run's end, not now
    data = alice.get(RESNET_JSON, query).json()
    assert all(chart["series"] for chart in data["charts"].values()), "the run is charted"
    assert 'class="dash-chart-empty"' not in body
    # the later points a page asks for fall on the same instants
    later = alice.get(RESNET_JSON, {"range": data["range"], "since": data["end"]}).json()
    assert later["step"] == data["step"] and later["range"] == data["range"]


def test_metrics_tab_swaps_in_through_htmx(alice):
    r = alice.get(BERT, {"tab": "metrics", "range": "15m"}, HTTP_HX_REQUEST="true")
    assert r.status_code == 200
    body = r.content.decode()
    assert re.match(r'\s*<title>[^<]+</title>\s*<div id="tab-content"', body)  # title for htmx
    assert 'data-metrics' in body
    assert_valid(body, page=False)


def test_overview_shows_the_gpu_line(alice):
    r = alice.get(BERT)
    assert r.status_code == 200
    text = _text(r.content.decode())
    assert re.search(r"GPU \d+% avg across 8 workers", text), text[:2000]


def test_overview_leaves_the_gpu_line_out_without_prometheus(alice, settings, caplog):
    settings.PROMETHEUS_URL = f"https://127.0.0.1:{free_port()}"
    with caplog.at_level("INFO", logger="training.metrics"):
        r = alice.get(BERT)
    assert r.status_code == 200
    assert "avg across" not in _text(r.content.decode())
    assert any("GPU summary" in rec.getMessage() for rec in caplog.records)
    settings.PROMETHEUS_URL = ""
    r = alice.get(BERT)
    assert r.status_code == 200
    assert "avg across" not in _text(r.content.decode())


def test_metrics_tab_says_which_time_zone_its_times_are_in(alice):
    """The charts' times are in the browser's time zone: the page says the zone the dashboard
    has for the person (the browser's, sent as a cookie; UTC before that), and gives the
    script the sentence to name the browser's zone with."""
    body = alice.get(BERT, {"tab": "metrics", "range": "1h"}).content.decode()
    assert_valid(body)
    assert "Times are in the UTC time zone." in _text(body)
    assert "in UTC" not in _text(body)
    assert 'data-text-zone="Times are in the %(zone)s time zone."' in body
    alice.cookies["dashboard_tz"] = "Asia/Tokyo"
    body = alice.get(BERT, {"tab": "metrics", "range": "1h"}).content.decode()
    assert "Last 1h, one point every" in _text(body)
    assert "Times are in the Asia/Tokyo time zone." in _text(body)


def test_the_tabs_data_downloads_as_csv_and_json_for_the_range_shown(alice):
    """The Metrics tab's "Download as CSV" / "Download as JSON": the charts' points over
    the range the tab shows, as files; the CSV's rows are the JSON's points."""
    import csv
    import io

    tab = alice.get(BERT, {"tab": "metrics", "range": "15m"}).content.decode()
    csv_url = re.search(r'<a href="([^"]*metrics\.csv[^"]*)" download>Download as CSV</a>',
                        tab).group(1)
    json_url = re.search(r'<a href="([^"]*metrics\.json[^"]*)" download>Download as JSON</a>',
                         tab).group(1)
    assert "range=15m" in csv_url and "range=15m" in json_url
    got = alice.get(html.unescape(csv_url))
    assert got.status_code == 200 and got["Content-Type"].startswith("text/csv")
    assert got["Content-Disposition"] == 'attachment; filename="bert-large-pretrain-metrics.csv"'
    rows = list(csv.DictReader(io.StringIO(got.content.decode())))
    data = alice.get(html.unescape(json_url))
    assert data["Content-Disposition"].startswith("attachment;")
    charts = data.json()["charts"]
    points = {(f"{key}/{s['name']}", t) for key, chart in charts.items()
              for s in chart["series"] for t, y in zip(s["t"], s["y"], strict=True)
              if y is not None}
    assert rows and {"series", "time", "value", "step", "epoch"} == set(rows[0])
    from odh.training.metrics.charts import parse_iso
    assert {(r["series"], round(parse_iso(r["time"]))) for r in rows} == points
    assert {r["series"].split("/")[0] for r in rows} == {
        "gpu_util", "gpu_memory", "cpu", "memory", "network_receive", "network_transmit",
        "disk_read", "disk_write"}


def test_each_chart_downloads_its_own_data_as_csv_and_json(alice):
    """A chart card's own "CSV" and "JSON": that chart's points over the range shown, the
    same points as in the whole tab's files, and nothing of the other charts."""
    import csv
    import io

    tab = alice.get(BERT, {"tab": "metrics", "range": "15m"}).content.decode()
    csv_url = re.search(r'<a href="([^"]*metrics\.csv[^"]*metric=cpu)" download '
                        r'aria-label="Download CPU per pod as CSV">CSV</a>', tab)
    json_url = re.search(r'<a href="([^"]*metrics\.json[^"]*metric=cpu&amp;download=1)" '
                         r'download aria-label="Download CPU per pod as JSON">JSON</a>', tab)
    assert csv_url and json_url, re.findall(r'class="dash-chart-export">.*?</p>', tab)[:2]
    got = alice.get(html.unescape(csv_url.group(1)))
    assert got.status_code == 200
    assert got["Content-Disposition"] == 'attachment; filename="bert-large-pretrain-cpu.csv"'
    rows = list(csv.DictReader(io.StringIO(got.content.decode())))
    assert rows and {r["series"].split("/")[0] for r in rows} == {"cpu"}
    data = alice.get(html.unescape(json_url.group(1)))
    assert data["Content-Disposition"] == \
        'attachment; filename="bert-large-pretrain-cpu.json"'
    charts = data.json()["charts"]
    assert list(charts) == ["cpu"] and "training" not in data.json()
    from odh.training.metrics.charts import parse_iso
    points = {(f"cpu/{s['name']}", t) for s in charts["cpu"]["series"]
              for t, y in zip(s["t"], s["y"], strict=True) if y is not None}
    assert {(r["series"], round(parse_iso(r["time"]))) for r in rows} == points
    # a chart that does not exist: said, with the ones that do
    url = reverse("training-job-metrics-csv", args=["team-nlp", "mpijob", "bert-large-pretrain"])
    wrong = alice.get(url, {"range": "15m", "metric": "loss!"})
    assert wrong.status_code == 400
    assert "There is no chart called “loss!”: use one of gpu_util" in wrong.content.decode()


def test_bob_may_not_download_team_nlps_metrics(bob):
    url = reverse("training-job-metrics-csv", args=["team-nlp", "mpijob", "bert-large-pretrain"])
    got = bob.get(url, {"range": "15m"})
    assert got.status_code == 403
    assert got["Content-Type"].startswith("text/plain") and "team-nlp" in got.content.decode()
