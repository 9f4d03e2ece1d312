"""The Overview's Launcher and Workers table: CPU and memory per pod (used now, from
Prometheus as the Metrics tab reads it, against the pod's requests and limits), a link to
each pod in the OpenShift console where CONSOLE_URL is set, and the job's description.

The demo's bert-large-pretrain runs 8 Workers in team-nlp."""

from __future__ import annotations

import html
import re
import uuid
from decimal import Decimal

import requests
from django.urls import reverse
from kubernetes import client as k8s

from odh.training.quantity import display_memory, parse_quantity
from tests.html_checks import assert_valid
from tests.page_text import text_of
from tests.training_jobs import mpijob
from tests.waiting import wait_until

NS = "team-nlp"
BERT = reverse("training-job-detail", args=[NS, "mpijob", "bert-large-pretrain"])
WORKER = "bert-large-pretrain-worker-0"
SELECTOR = f'{{namespace="{NS}",pod="{WORKER}",container!="",container!="POD"}}'
CPU = f"sum by (pod) (rate(container_cpu_usage_seconds_total{SELECTOR}[5m]))"
MEMORY = f"sum by (pod) (container_memory_working_set_bytes{SELECTOR})"


def _prometheus(cluster, promql: str) -> Decimal:
    """Prometheus' own answer now, as alice."""
    got = requests.get(cluster.prometheus_url + "/api/v1/query",
                       params={"query": promql, "namespace": NS},
                       headers={"Authorization": f"Bearer {cluster.token('alice')}"},
                       verify=str(cluster.ca_file), timeout=30)
    assert got.status_code == 200, got.text
    return Decimal(got.json()["data"]["result"][0]["value"][1])


def _spec(cluster) -> tuple[str, str, str, str]:
    """(CPU requested, CPU limit, memory requested, memory limit) of the Worker's pod."""
    with cluster.api_client("admin") as api:
        pod = k8s.CoreV1Api(api).read_namespaced_pod(WORKER, NS)
    res = pod.spec.containers[0].resources
    return (res.requests["cpu"], res.limits["cpu"], res.requests["memory"], res.limits["memory"])


def _cpu(value: Decimal) -> str:
    return format(value.quantize(Decimal("0.01")).normalize(), "f")


def test_each_pod_shows_the_cpu_and_memory_prometheus_says_it_uses(
        alice, demo_cluster, demo_prometheus):
    cpu_before, memory_before = (_prometheus(demo_cluster, CPU),
                                 _prometheus(demo_cluster, MEMORY))
    page = alice.get(BERT).content.decode()
    cpu_after, memory_after = _prometheus(demo_cluster, CPU), _prometheus(demo_cluster, MEMORY)
    assert_valid(page)
    cpu_req, cpu_limit, mem_req, mem_limit = _spec(demo_cluster)
    cpu_cell = text_of(page, f"replica-{WORKER}-cpu")
    used, rest = cpu_cell.split(" / ")
    assert rest == f"{_cpu(parse_quantity(cpu_req))} (limit {_cpu(parse_quantity(cpu_limit))})"
    # what Prometheus answered just before or just after the page was made
    assert used in {_cpu(cpu_before), _cpu(cpu_after)}, (used, cpu_before, cpu_after)
    assert Decimal(used) > 0
    memory_cell = text_of(page, f"replica-{WORKER}-memory")
    assert memory_cell in {
        f"{display_memory(m)} / {display_memory(parse_quantity(mem_req))} "
        f"(limit {display_memory(parse_quantity(mem_limit))})"
        for m in (memory_before, memory_after)}, memory_cell
    assert "CPU (used / requested)" in page and "Memory (used / requested)" in page


def test_without_prometheus_the_use_is_a_dash_beside_the_requests(alice, demo_cluster,
                                                                   settings):
    settings.PROMETHEUS_URL = ""
    page = alice.get(BERT).content.decode()
    cpu_req, cpu_limit, _mem_req, _mem_limit = _spec(demo_cluster)
    assert text_of(page, f"replica-{WORKER}-cpu") == (
        f"- / {_cpu(parse_quantity(cpu_req))} (limit {_cpu(parse_quantity(cpu_limit))})")
    assert text_of(page, f"replica-{WORKER}-memory").startswith("- / ")


def test_the_console_link_only_with_console_url(alice, settings):
    settings.CONSOLE_URL = ""
    assert "/k8s/ns/" not in alice.get(BERT).content.decode()
    settings.CONSOLE_URL = "https://console-openshift-console.apps.example.com"
    page = alice.get(BERT).content.decode()
    assert (f'href="https://console-openshift-console.apps.example.com/k8s/ns/{NS}/pods/'
            f'{WORKER}"') in page
    assert "Open in the OpenShift console" in text_of(page, f"replica-{WORKER}")


def test_the_description_is_shown_escaped(alice, demo_cluster):
    name = f"described-{uuid.uuid4().hex[:6]}"
    body = mpijob(name, annotations={
        "opendatahub.io/description": "Fine-tune <b>BERT</b> & <script>alert(1)</script>\n"
                                      "second line"})
    with demo_cluster.api_client("admin") as api:
        custom = k8s.CustomObjectsApi(api)
        custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", NS, "mpijobs", body)
        try:
            url = reverse("training-job-detail", args=[NS, "mpijob", name])
            page = wait_until(lambda: (r := alice.get(url)).status_code == 200
                              and r.content.decode(), 30, message="the job's page")
            assert_valid(page)
            shown = re.search(r'<p class="dash-job-description">(.*?)</p>', page, re.S).group(1)
            assert shown == ("Fine-tune &lt;b&gt;BERT&lt;/b&gt; &amp; "
                             "&lt;script&gt;alert(1)&lt;/script&gt;<br>second line")
            assert html.unescape(text_of(page, "job-description")).startswith(
                "Description Fine-tune <b>BERT</b>")
        finally:
            custom.delete_namespaced_custom_object("kubeflow.org", "v2beta1", NS, "mpijobs",
                                                   name)
    plain = alice.get(BERT).content.decode()
    assert 'id="job-description"' not in plain  # no annotation, no section
