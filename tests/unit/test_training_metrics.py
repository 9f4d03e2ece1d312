"""odh.training.metrics.charts: PromQL for a job's charts, Prometheus responses, the GPU line."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from requests.adapters import BaseAdapter

from odh.training import errors
from odh.training.kinds import MPIJOB, PYTORCHJOB, TFJOB
from odh.training.metrics import charts as m

NOW = 1_714_557_600.0  # 2024-05-01T10:00:00Z
JOB = "bert-large"


# -- Prometheus answers as the Thanos querier sends them ------------------------------------------
def dcgm_labels(metric: str, pod: str, gpu: int) -> dict:
    return {"__name__": metric, "DCGM_FI_DRIVER_VERSION": "550.127.05", "Hostname": "gpu-a100-0",
            "UUID": f"GPU-5e30d6b4-cf8b-587e-a229-b8525d781e3{gpu}", "container": "worker",
            "device": f"nvidia{gpu}", "gpu": str(gpu), "instance": "10.128.2.17:9400",
            "job": "nvidia-dcgm-exporter", "modelName": "NVIDIA A100-SXM4-80GB",
            "namespace": "team-nlp", "pci_bus_id": "00000000:07:00.0", "pod": pod}


def matrix(series: list[tuple[dict, list[tuple[float, str]]]]) -> dict:
    return {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": labels, "values": [[t, v] for t, v in points]} for labels, points in series]}}


def vector(samples: list[tuple[dict, str]], at: float = NOW) -> dict:
    return {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": labels, "value": [at, v]} for labels, v in samples]}}


EMPTY_MATRIX = {"status": "success", "data": {"resultType": "matrix", "result": []}}
EMPTY_VECTOR = {"status": "success", "data": {"resultType": "vector", "result": []}}


class FakePrometheus(BaseAdapter):
    """Answers by the metric names in the query; records every request."""

    def __init__(self, answers: dict[str, object] | None = None, status: int = 200,
                 text: str | None = None, error: Exception | None = None) -> None:
        super().__init__()
        self.answers = answers or {}
        self.status = status
        self.text = text
        self.error = error
        self.requests: list[requests.PreparedRequest] = []
        self.kwargs: list[dict] = []

    def params(self, i: int = -1) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(urlsplit(self.requests[i].url).query).items()}

    def send(self, request, **kwargs):
        self.requests.append(request)
        self.kwargs.append(kwargs)
        if self.error is not None:
            raise self.error
        response = requests.Response()
        response.status_code = self.status
        response.request = request
        response.url = request.url
        if self.text is not None:
            body = self.text.encode()
            response.headers["Content-Type"] = "text/plain; charset=utf-8"
        else:
            query = self.params()["query"]
            answer = next((a for key, a in self.answers.items() if key in query), None)
            if answer is None:
                answer = EMPTY_VECTOR if request.url.split("?")[0].endswith("/query") \
                    else EMPTY_MATRIX
            body = json.dumps(answer).encode()
            response.headers["Content-Type"] = "application/json"
        response._content = body
        return response

    def close(self):
        pass


def client_with(adapter: FakePrometheus, **kw) -> m.PrometheusClient:
    client = m.PrometheusClient("https://thanos-querier.openshift-monitoring.svc:9092/",
                                "sha256~person", **kw)
    client.session.mount("https://", adapter)
    return client


# -- ranges and steps ------------------------------------------------------------------------------
@pytest.mark.parametrize(("key", "step", "points"), [
    ("15m", 3, 301), ("1h", 10, 361), ("6h", 60, 361), ("24h", 300, 289)])
def test_each_range_has_a_round_step_and_200_to_400_points(key, step, points):
    rng = m.time_range(key)
    assert rng.key == key
    assert rng.step == step
    assert rng.points == points
    assert 200 <= rng.points <= 401


def test_unknown_ranges_fall_back_to_an_hour():
    assert m.time_range("7d").key == "1h"
    assert m.time_range(None).key == "1h"
    for bad in ("job:", "job:12", "job:abc", "job:99999999", "job:-600", "job:6e2"):
        assert m.time_range(bad).key == "1h", bad


def test_a_whole_run_range_carries_its_length():
    rng = m.time_range("job:5400")
    assert (rng.key, rng.seconds) == ("job:5400", 5400)
    assert 200 <= rng.points <= 400


def test_a_finished_jobs_range_covers_start_to_finish():
    start = 1_700_000_000.0
    rng, end = m.job_time_range(start, start + 20 * 60 + 30, now=start + 86400)
    assert rng.seconds == 21 * 60  # whole minutes, the finish included
    assert end == start + 20 * 60 + 30 + rng.step  # the last point after the finish
    window = m.window(rng, end)
    assert window.start <= start + rng.step and window.end >= start + 20 * 60 + 30


def test_a_running_jobs_range_ends_now_and_a_young_one_shows_five_minutes():
    start = 1_700_000_000.0
    rng, end = m.job_time_range(start, None, now=start + 3 * 3600)
    assert rng.seconds == 3 * 3600 and end == start + 3 * 3600 + rng.step
    young, _end = m.job_time_range(start, None, now=start + 40)
    assert young.seconds == 5 * 60
    unknown, _end = m.job_time_range(None, None, now=start)
    assert unknown.seconds == 5 * 60
    ancient, _end = m.job_time_range(start - 90 * 86400, None, now=start)
    assert ancient.seconds == 14 * 86400
    assert m.time_range("").key == "1h"


def test_step_for_keeps_under_the_point_budget():
    assert m.step_for(60) == 1
    assert m.step_for(7 * 86400) == 1800  # 336 points
    decade = 10 * 365 * 86400  # beyond the round steps: still at most 400 points
    assert decade / m.step_for(decade) <= 400


def test_rate_window_covers_two_steps_and_at_least_two_minutes():
    assert m.time_range("15m").rate_window == "2m"
    assert m.time_range("1h").rate_window == "2m"
    assert m.time_range("6h").rate_window == "2m"
    assert m.time_range("24h").rate_window == "10m"


def test_window_is_aligned_to_the_step():
    w = m.window(m.time_range("1h"), NOW + 7.3)
    assert w.step == 10
    assert w.end == NOW
    assert w.start == NOW - 3600
    assert not w.empty


def test_window_since_starts_after_the_last_point_seen():
    rng = m.time_range("15m")
    w = m.window(rng, NOW + 14, since=NOW)
    assert (w.start, w.end) == (NOW + 3, NOW + 12)
    # a `since` between instants starts at the next instant
    assert m.window(rng, NOW + 14, since=NOW - 1).start == NOW
    # nothing new yet
    assert m.window(rng, NOW + 2, since=NOW).empty
    # a `since` older than the range does not widen it
    assert m.window(rng, NOW, since=NOW - 86400).start == NOW - 900


def test_iso_and_parse_iso_round_trip():
    assert m.iso(NOW) == "2024-05-01T10:00:00Z"
    assert m.iso(NOW + 0.25) == "2024-05-01T10:00:00.250Z"
    assert m.parse_iso("2024-05-01T10:00:00Z") == NOW
    assert m.parse_iso("2024-05-01T12:00:00+02:00") == NOW
    assert m.parse_iso(str(NOW)) == NOW
    assert m.parse_iso("yesterday") is None
    assert m.parse_iso("") is None
    assert m.parse_iso("nan") is None


# -- PromQL ----------------------------------------------------------------------------------------
def test_pod_regex_of_an_mpijob_matches_its_launcher_and_workers_only():
    regex = re.compile(m.pod_regex(MPIJOB, JOB))
    for pod in ("bert-large-launcher-x7k2p", "bert-large-launcher", "bert-large-worker-0",
                "bert-large-worker-12"):
        assert regex.fullmatch(pod), pod
    for pod in ("bert-large-2-worker-0", "bert-large-worker-x", "bert-large-master-0",
                "other-worker-0", "bert-large-launcher-x7k2p-worker-0"):
        assert not regex.fullmatch(pod), pod


@pytest.mark.parametrize("kind", [PYTORCHJOB, TFJOB])
def test_pod_regex_of_v1_kinds(kind):
    regex = re.compile(m.pod_regex(kind, JOB))
    assert regex.fullmatch("bert-large-master-0")
    assert regex.fullmatch("bert-large-worker-3")
    assert not regex.fullmatch("bert-large-launcher-x7k2p")
    if kind == TFJOB:
        for role in ("chief", "ps", "evaluator"):
            assert regex.fullmatch(f"bert-large-{role}-0")


def test_dots_in_job_names_match_only_dots():
    regex = re.compile(m.pod_regex(MPIJOB, "bert.v2"))
    assert regex.fullmatch("bert.v2-worker-0")
    assert not regex.fullmatch("bertxv2-worker-0")


def test_queries_pin_the_namespace_and_the_pods():
    q = m.JobQueries("team-nlp", MPIJOB, JOB, m.time_range("1h"))
    sel = ('{namespace="team-nlp",pod=~"bert-large-(launcher(-[a-z0-9]{5})?|'
           'worker-[0-9]+)"}')
    assert q.gpu_util() == "DCGM_FI_PROF_GR_ENGINE_ACTIVE" + sel
    assert q.gpu_util(m.GPU_UTIL) == "DCGM_FI_DEV_GPU_UTIL" + sel
    assert q.gpu_memory_used() == f"sum by (pod) (DCGM_FI_DEV_FB_USED{sel})"
    assert q.gpu_memory_total() == (f"sum by (pod) (DCGM_FI_DEV_FB_USED{sel} + "
                                    f"DCGM_FI_DEV_FB_FREE{sel})")
    real = sel[:-1] + ',container!="",container!="POD"}'
    assert q.cpu() == f"sum by (pod) (rate(container_cpu_usage_seconds_total{real}[2m]))"
    assert q.memory() == f"sum by (pod) (container_memory_working_set_bytes{real})"
    assert q.gpu_util_average() == f"avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE{sel}[5m])"


def test_quote_escapes_backslashes_and_quotes():
    assert m.quote(r'a\.b"c') == r'"a\\.b\"c"'


# -- parsing ---------------------------------------------------------------------------------------
def test_gpu_series_are_named_by_worker_and_gpu_in_worker_order():
    result = matrix([
        (dcgm_labels(m.ENGINE_ACTIVE, "bert-large-worker-10", 1), [(NOW, "0.5")]),
        (dcgm_labels(m.ENGINE_ACTIVE, "bert-large-worker-2", 0), [(NOW, "0.9")]),
        (dcgm_labels(m.ENGINE_ACTIVE, "bert-large-worker-2", 1), [(NOW, "0.8")]),
    ])["data"]["result"]
    series = m.parse_matrix(result, JOB, m.gpu_scale(m.ENGINE_ACTIVE), gpu=True)
    assert [s.name for s in series] == ["worker-2 GPU 0", "worker-2 GPU 1", "worker-10 GPU 1"]
    assert series[0].pod == "bert-large-worker-2"
    assert series[0].y == [90.0]
    assert series[0].t == [NOW]
    assert series[0].as_dict()["t"] == [int(NOW)]  # whole seconds, as the charts read them


def test_pod_series_put_the_launcher_first():
    result = matrix([({"pod": "bert-large-worker-1"}, [(NOW, "6.5")]),
                     ({"pod": "bert-large-launcher-x7k2p"}, [(NOW, "0.1")]),
                     ({"pod": "bert-large-worker-0"}, [(NOW, "7")])])["data"]["result"]
    assert [s.name for s in m.parse_matrix(result, JOB)] == ["launcher", "worker-0", "worker-1"]


def test_nan_and_infinities_become_gaps():
    result = matrix([({"pod": "bert-large-worker-0"},
                      [(NOW, "1.5"), (NOW + 15, "NaN"), (NOW + 30, "+Inf"), (NOW + 45, "2")])])
    series = m.parse_matrix(result["data"]["result"], JOB)[0]
    assert series.y == [1.5, None, None, 2.0]
    assert (series.latest, series.average, series.maximum) == (2.0, 1.75, 2.0)


def test_points_at_or_before_after_are_left_out():
    result = matrix([({"pod": "bert-large-worker-0"}, [(NOW, "1"), (NOW + 15, "2"),
                                                       (NOW + 30, "3")]),
                     ({"pod": "bert-large-worker-1"}, [(NOW, "1")])])
    series = m.parse_matrix(result["data"]["result"], JOB, after=NOW + 15)
    assert [(s.name, s.y) for s in series] == [("worker-0", [3.0])]


def test_parse_vector_skips_nan():
    samples = m.parse_vector(vector([({"pod": "a"}, "0.5"), ({"pod": "b"}, "NaN")])
                             ["data"]["result"], 100)
    assert samples == [({"pod": "a"}, 50.0)]


def test_short_names():
    assert m.short_name("bert-large-launcher-x7k2p", JOB) == "launcher"
    assert m.short_name("bert-large-worker-3", JOB) == "worker-3"
    assert m.short_name("bert-large-master-0", JOB) == "master-0"
    assert m.short_name("elsewhere-0", JOB) == "elsewhere-0"


# -- a job's charts through the HTTP client ---------------------------------------------------
def job_answers(gpu_metric: str = m.ENGINE_ACTIVE) -> dict:
    ratio = gpu_metric == m.ENGINE_ACTIVE
    gpu = matrix([(dcgm_labels(gpu_metric, f"{JOB}-worker-{i}", i),
                   [(NOW - 10, "0.8" if ratio else "80"), (NOW, "0.9" if ratio else "90")])
                  for i in range(2)])
    return {
        gpu_metric + "{": gpu,
        "sum by (pod) (DCGM_FI_DEV_FB_USED{namespace=\"team-nlp\",pod=~\"bert-large-(launcher"
        "(-[a-z0-9]{5})?|worker-[0-9]+)\"} + ": matrix(
            [({"pod": f"{JOB}-worker-{i}"}, [(NOW - 10, "81920"), (NOW, "81920")])
             for i in range(2)]),
        "sum by (pod) (DCGM_FI_DEV_FB_USED": matrix(
            [({"pod": f"{JOB}-worker-{i}"}, [(NOW - 10, "40960"), (NOW, "41984")])
             for i in range(2)]),
        "container_cpu_usage_seconds_total": matrix(
            [({"pod": f"{JOB}-launcher-x7k2p"}, [(NOW, "0.1")]),
             ({"pod": f"{JOB}-worker-0"}, [(NOW, "6.5")])]),
        "container_memory_working_set_bytes": matrix(
            [({"pod": f"{JOB}-worker-0"}, [(NOW, str(40 * m.GIB))])]),
    }


def test_job_metrics_in_percent_and_bytes_with_the_tenancy_parameter():
    adapter = FakePrometheus(job_answers())
    with client_with(adapter) as client:
        result = m.job_metrics(client, "team-nlp", MPIJOB, JOB, m.time_range("1h"), now=NOW)
    assert result.gpu_metric == m.ENGINE_ACTIVE
    gpu = result.charts["gpu_util"].series
    assert [(s.name, s.y) for s in gpu] == [("worker-0 GPU 0", [80.0, 90.0]),
                                            ("worker-1 GPU 1", [80.0, 90.0])]
    memory = result.charts["gpu_memory"]
    assert memory.series[0].y == [40 * m.GIB, 41 * m.GIB]  # MiB -> bytes
    assert memory.capacity == {f"{JOB}-worker-0": 80 * m.GIB, f"{JOB}-worker-1": 80 * m.GIB}
    assert [s.name for s in result.charts["cpu"].series] == ["launcher", "worker-0"]
    assert result.charts["memory"].series[0].latest == 40 * m.GIB
    for i, request in enumerate(adapter.requests):
        assert request.url.startswith(
            "https://thanos-querier.openshift-monitoring.svc:9092/api/v1/query_range?")
        assert request.headers["Authorization"] == "Bearer sha256~person"
        params = adapter.params(i)
        assert params["namespace"] == "team-nlp"
        assert params["step"] == "10"
        assert float(params["end"]) == NOW
        assert float(params["start"]) == NOW - 3600
    data = result.as_dict()
    assert data["range"] == "1h" and data["step"] == 10 and data["points"] == 361
    assert data["end"] == "2024-05-01T10:00:00Z"
    assert data["charts"]["gpu_memory"]["capacity"] == {"worker-0": 80 * m.GIB,
                                                        "worker-1": 80 * m.GIB}
    assert json.loads(json.dumps(data)) == data  # plain JSON


def test_gpu_utilisation_falls_back_to_gpu_util_in_percent():
    answers = job_answers(m.GPU_UTIL)
    adapter = FakePrometheus(answers)
    with client_with(adapter) as client:
        result = m.job_metrics(client, "team-nlp", MPIJOB, JOB, m.time_range("1h"), now=NOW)
    assert result.gpu_metric == m.GPU_UTIL
    assert result.charts["gpu_util"].series[0].y == [80.0, 90.0]  # already percent
    queried = [adapter.params(i)["query"] for i in range(len(adapter.requests))]
    assert queried[0].startswith(m.ENGINE_ACTIVE + "{")
    assert queried[1].startswith(m.GPU_UTIL + "{")


def test_a_job_without_gpu_series_skips_the_memory_queries():
    answers = {k: v for k, v in job_answers().items() if k.startswith("container_")}
    adapter = FakePrometheus(answers)
    with client_with(adapter) as client:
        result = m.job_metrics(client, "team-nlp", MPIJOB, JOB, m.time_range("1h"), now=NOW)
    assert result.gpu_metric == ""
    assert result.charts["gpu_util"].series == []
    assert result.charts["gpu_memory"].series == []
    assert result.charts["cpu"].series
    assert not any("FB_" in adapter.params(i)["query"] for i in range(len(adapter.requests)))


def test_since_asks_only_for_new_instants():
    adapter = FakePrometheus(job_answers())
    with client_with(adapter) as client:
        result = m.job_metrics(client, "team-nlp", MPIJOB, JOB, m.time_range("1h"),
                               now=NOW + 5, since=NOW - 10)
    assert float(adapter.params(0)["start"]) == NOW
    assert [s.y for s in result.charts["gpu_util"].series] == [[90.0], [90.0]]


def test_nothing_new_asks_nothing():
    adapter = FakePrometheus(job_answers())
    with client_with(adapter) as client:
        result = m.job_metrics(client, "team-nlp", MPIJOB, JOB, m.time_range("1h"),
                               now=NOW + 5, since=NOW)
    assert adapter.requests == []
    assert not result.has_data


# -- errors ----------------------------------------------------------------------------------------
def test_401_is_unauthorized():
    with client_with(FakePrometheus(status=401, text="Unauthorized\n")) as client, \
            pytest.raises(errors.Unauthorized):
        client.query("up", "team-nlp")


def test_403_is_forbidden_and_names_the_project():
    text = "Forbidden (user=bob, verb=get, resource=pods, subresource=)\n"
    with client_with(FakePrometheus(status=403, text=text)) as client, \
            pytest.raises(errors.Forbidden) as caught:
        client.query("up", "team-nlp")
    assert "team-nlp" in caught.value.message
    assert "user=bob" in caught.value.message
    assert caught.value.namespace == "team-nlp"


@pytest.mark.parametrize("error", [requests.ConnectionError("refused"),
                                   requests.ReadTimeout("slow")])
def test_no_answer_is_cluster_unavailable_naming_prometheus(error):
    with client_with(FakePrometheus(error=error)) as client, \
            pytest.raises(errors.ClusterUnavailable) as caught:
        client.query_range("up", "team-nlp", NOW - 60, NOW, 15)
    assert "Prometheus at https://thanos-querier.openshift-monitoring.svc:9092" in \
        caught.value.message


def test_an_untrusted_certificate_says_which_setting_to_use():
    with client_with(FakePrometheus(error=requests.exceptions.SSLError("bad cert"))) as client, \
            pytest.raises(errors.ClusterUnavailable) as caught:
        client.query("up", "team-nlp")
    assert "PROMETHEUS_CA_FILE" in caught.value.message


def test_503_from_the_router_is_unavailable():
    with client_with(FakePrometheus(status=503, text="<html>Application is not available"
                                    "</html>")) as client, \
            pytest.raises(errors.ClusterUnavailable):
        client.query("up", "team-nlp")


def test_a_refused_query_carries_prometheus_reason():
    body = {"status": "error", "errorType": "bad_data",
            "error": 'invalid parameter "query": 1:5: parse error: unexpected "}"'}
    adapter = FakePrometheus({"up": body}, status=400)
    with client_with(adapter) as client, pytest.raises(errors.ClusterError) as caught:
        client.query("up}", "team-nlp")
    assert type(caught.value) is errors.ClusterError
    assert "parse error" in caught.value.message


def test_the_ca_file_is_what_verifies_prometheus():
    adapter = FakePrometheus()
    with client_with(adapter, ca_file="/etc/ca/service-ca.crt") as client:
        client.query("up", "team-nlp")
    assert adapter.kwargs[0]["verify"] == "/etc/ca/service-ca.crt"
    adapter = FakePrometheus()
    with client_with(adapter, verify=False) as client:
        client.query("up", "team-nlp")
    assert adapter.kwargs[0]["verify"] is False


def test_an_instant_query_at_a_time():
    adapter = FakePrometheus()
    with client_with(adapter) as client:
        assert client.query("up", "team-nlp", at=NOW) == []
    assert adapter.params()["time"] == f"{NOW:.3f}"
    assert adapter.requests[0].url.split("?")[0].endswith("/api/v1/query")


# -- the Overview line -----------------------------------------------------------------------------
def test_summary_text():
    assert m.summary_text(87.4, 8) == "GPU 87% avg across 8 workers"
    assert m.summary_text(99.6, 1) == "GPU 100% avg across 1 worker"


def test_gpu_summary_averages_every_gpu_and_counts_workers():
    answers = {"avg_over_time(" + m.ENGINE_ACTIVE: vector(
        [(dcgm_labels(m.ENGINE_ACTIVE, f"{JOB}-worker-0", 0), "0.8"),
         (dcgm_labels(m.ENGINE_ACTIVE, f"{JOB}-worker-0", 1), "0.9"),
         (dcgm_labels(m.ENGINE_ACTIVE, f"{JOB}-worker-1", 2), "1")])}
    adapter = FakePrometheus(answers)
    with client_with(adapter) as client:
        assert m.gpu_summary(client, "team-nlp", MPIJOB, JOB) == "GPU 90% avg across 2 workers"
    assert adapter.params()["namespace"] == "team-nlp"


def test_gpu_summary_falls_back_to_gpu_util():
    answers = {"avg_over_time(" + m.GPU_UTIL: vector(
        [(dcgm_labels(m.GPU_UTIL, f"{JOB}-worker-{i}", i), "75") for i in range(4)])}
    with client_with(FakePrometheus(answers)) as client:
        assert m.gpu_summary(client, "team-nlp", MPIJOB, JOB) == "GPU 75% avg across 4 workers"


def test_gpu_summary_without_data_is_empty():
    with client_with(FakePrometheus()) as client:
        assert m.gpu_summary(client, "team-nlp", MPIJOB, JOB) == ""


def test_summary_goes_through_the_translator():
    from odh.training import i18n
    before = (i18n._translate, i18n._translate_plural)
    try:
        i18n.set_translator(lambda s: s.replace("avg across", "Ø über"),
                            lambda s, p, n: (s if n == 1 else p).replace("avg across", "Ø über"))
        assert m.summary_text(50, 2) == "GPU 50% Ø über 2 workers"
    finally:
        i18n.set_translator(*before)


# -- numbers as text -------------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "unit", "text"), [
    (87.4, "percent", "87%"), (6.456, "cores", "6.46 CPU"), (41.25 * m.GIB, "bytes", "41.2 GiB"),
    (350 * m.MIB, "bytes", "350 MiB"), (None, "percent", "\u2013")])
def test_format_value(value, unit, text):
    assert m.format_value(value, unit) == text


def test_unit_words_are_translated_where_values_are_written():
    from odh.training import i18n
    before = (i18n._translate, i18n._translate_plural)
    try:
        i18n.set_translator(lambda s: {"CPU": "Kerne", "GiB": "Gio", "MiB": "Mio",
                                       "MB/s": "Mo/s"}.get(s, s))
        assert m.unit_labels() == {"cpu": "Kerne", "gib": "Gio", "mib": "Mio", "bps": "B/s",
                                   "kbps": "kB/s", "mbps": "Mo/s", "gbps": "GB/s"}
        assert m.format_value(412.34e6, "bytes_per_second") == "412.3 Mo/s"
        assert m.format_value(6.456, "cores") == "6.46 Kerne"
        assert m.format_value(41.25 * m.GIB, "bytes") == "41.2 Gio"
        assert m.format_value(350 * m.MIB, "bytes") == "350 Mio"
    finally:
        i18n.set_translator(*before)
