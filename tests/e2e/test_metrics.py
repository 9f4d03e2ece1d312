"""Metrics: a running job's GPUs, CPU, memory, network and disk as charts that grow while you
watch."""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import pytest
import requests
from playwright.sync_api import expect

from tests.e2e.conftest import sign_in
from tests.waiting import wait_until
from training import permissions

BERT = "/jobs/team-nlp/mpijob/bert-large-pretrain/"
TRACES = "key => { const gd = document.querySelector('#chart-' + key + ' .js-plotly-plot'); " \
         "return gd && gd.data ? gd.data.length : 0; }"
POINTS = "key => document.querySelector('#chart-' + key + ' .js-plotly-plot').data[0].x.length"


def test_alice_watches_bert_gpus_grow(page, live_dashboard, screenshot):
    sign_in(page, live_dashboard, "alice", BERT)
    expect(page.get_by_text(re.compile(r"GPU \d+% avg across 8 workers"))).to_be_visible()

    page.get_by_role("link", name="Metrics", exact=True).first.click()
    expect(page).to_have_url(re.compile(r"tab=metrics"))
    expect(page.get_by_role("heading", name="GPU utilisation per GPU")).to_be_visible()
    wait_until(lambda: page.evaluate(TRACES, "gpu_util") == 8, 30,
               message="one GPU trace per worker")

    page.get_by_role("group", name="Time range").get_by_role("link", name="15m").click()
    expect(page).to_have_url(re.compile(r"range=15m"))
    wait_until(lambda: page.evaluate(TRACES, "gpu_util") == 8, 30,
               message="the 15m charts drawn")
    for key, traces in (("gpu_memory", 8), ("cpu", 9), ("memory", 9), ("network_receive", 9),
                        ("network_transmit", 9), ("disk_read", 9), ("disk_write", 9)):
        assert page.evaluate(TRACES, key) == traces, key  # the launcher has no GPU
    # network I/O per pod drawn in MB/s, its axis saying so
    expect(page.locator("#chart-network_transmit .ytitle")).to_have_text("MB/s")

    before = page.evaluate(POINTS, "gpu_util")
    wait_until(lambda: page.evaluate(POINTS, "gpu_util") > before, 60,
               message=lambda: f"new points after {before} "
                               f"(now {page.evaluate(POINTS, 'gpu_util')})")

    # hovering names each GPU as the table does (Plotly reads names as markup: they are
    # sent escaped, and the hover template names its trace, never pastes the name in)
    chart = page.locator("#chart-gpu_util .js-plotly-plot")
    chart.scroll_into_view_if_needed()  # the mouse hovers only what is on the screen
    box = chart.locator(".nsewdrag").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.9, box["y"] + box["height"] / 2)
    hover = page.locator("#chart-gpu_util .hoverlayer")
    expect(hover).to_contain_text(re.compile(r"worker-3 GPU \d: \d+%"))
    expect(hover).not_to_contain_text("fullData")

    # the numbers, for people who do not see the chart
    page.get_by_text("Numbers: GPU utilisation per GPU").click()
    table = page.get_by_role("table", name="GPU utilisation per GPU, last 15m")
    expect(table.get_by_role("row")).to_have_count(9)
    expect(table.get_by_role("row", name=re.compile(r"worker-3 GPU \d"))).to_contain_text("%")
    screenshot("job-metrics")


def test_bob_gets_no_metrics_of_team_nlp(page, live_dashboard):
    sign_in(page, live_dashboard, "bob")
    response = page.request.get(live_dashboard + BERT + "metrics.json")
    assert response.status == 403


# -- a Prometheus that checks nothing ---------------------------------------------------------
class PlainPrometheus(ThreadingHTTPServer):
    """Prometheus as it is without OpenShift's kube-rbac-proxy and prom-label-proxy: it
    answers anyone, whatever their token, and ignores the tenancy `namespace` parameter.
    (simcluster's, asked with the cluster admin's token.)"""

    def __init__(self, cluster) -> None:
        self.upstream = cluster.prometheus_url
        self.admin_token = cluster.token("admin")
        self.ca_file = str(cluster.ca_file)
        super().__init__(("127.0.0.1", 0), _Forward)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Forward(BaseHTTPRequestHandler):
    server: PlainPrometheus

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        params = [(k, v) for k, v in parse_qsl(parts.query) if k != "namespace"]
        upstream = requests.get(self.server.upstream + parts.path, params=params,
                                headers={"Authorization": f"Bearer {self.server.admin_token}"},
                                verify=self.server.ca_file, timeout=30)
        self.send_response(upstream.status_code)
        self.send_header("Content-Type", upstream.headers.get("Content-Type", "text/plain"))
        self.send_header("Content-Length", str(len(upstream.content)))
        self.end_headers()
        self.wfile.write(upstream.content)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def plain_prometheus(e2e_cluster):
    server = PlainPrometheus(e2e_cluster)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def dashboard_on_plain_prometheus(e2e_cluster, plain_prometheus, settings):
    """The dashboard (in this process, Django's test client) asking that Prometheus."""
    from training import cluster
    settings.CLUSTER_KUBECONFIG = str(e2e_cluster.kubeconfig("dashboard"))
    settings.PROMETHEUS_URL = plain_prometheus.url
    cluster.cluster_config.cache_clear()
    permissions.ANSWERS.clear()
    yield
    cluster.cluster_config.cache_clear()
    permissions.ANSWERS.clear()


def test_bob_gets_no_team_nlp_metrics_even_from_a_prometheus_that_answers_anyone(
        client, db, e2e_cluster, plain_prometheus, dashboard_on_plain_prometheus):
    from tests.dashboard_support import sign_in as signed_in

    # that Prometheus shows team-nlp's GPUs to anyone who asks
    answer = requests.get(plain_prometheus.url + "/api/v1/query", timeout=30, params={
        "query": 'DCGM_FI_DEV_GPU_UTIL{namespace="team-nlp"}'}).json()
    assert answer["data"]["result"]

    signed_in(client, e2e_cluster, "bob")
    response = client.get(BERT + "metrics.json")
    assert response.status_code == 403
    assert "team-nlp" in response.json()["error"]
    assert "charts" not in response.json()

    # alice may see team-nlp's pods: the same Prometheus draws her charts
    signed_in(client, e2e_cluster, "alice")
    response = client.get(BERT + "metrics.json")
    assert response.status_code == 200
    assert len(response.json()["charts"]["gpu_util"]["series"]) == 8


def test_a_job_started_after_its_metrics_tab_opened_gains_a_trace_per_pod(page, live_dashboard,
                                                                          e2e_cluster):
    """Opened while the job waits (suspended): no pod, no series. Once it runs, each pod
    gets its trace and its row of numbers, without a reload."""
    import uuid

    from tests.training_jobs import Jobs, mpijob

    jobs = Jobs(e2e_cluster.api_client("alice"), "team-nlp")
    name = f"e2e-series-{uuid.uuid4().hex[:5]}"
    jobs.create(mpijob(name, workers=2, run_seconds=20_000,
                       runPolicy={"suspend": True}))
    try:
        sign_in(page, live_dashboard, "alice", f"/jobs/team-nlp/mpijob/{name}/?tab=metrics")
        expect(page.get_by_text("The whole run, one point every")).to_be_visible()
        wait_until(lambda: page.evaluate("() => !!document.querySelector("
                                         "'#chart-cpu .js-plotly-plot')"), 30,
                   message="the (empty) CPU chart drawn")
        assert page.evaluate(TRACES, "cpu") == 0
        page.evaluate("window.__notReloaded = true")
        jobs.patch(name, {"spec": {"runPolicy": {"suspend": False}}})
        wait_until(lambda: page.evaluate(TRACES, "cpu") >= 3, 120,
                   message=lambda: f"a CPU trace per pod (now {page.evaluate(TRACES, 'cpu')})")
        assert page.evaluate("window.__notReloaded === true")
        numbers = page.locator("[data-chart-table='cpu'] tbody tr")
        expect(numbers).to_have_count(page.evaluate(TRACES, "cpu"))
        expect(numbers.filter(has_text=f"{name.removeprefix('e2e-')}-worker-1").or_(
            numbers.filter(has_text="worker-1"))).to_have_count(1)
    finally:
        jobs.cleanup()
