"""Cost on the demo cluster: an administrator's prices at /cluster/prices/ (refused when
wrong, audited, published for the CLI), the chargeback of /cluster/ and its CSV adding up
to the job history's GPU-hours times the prices, and a project's own page."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from odh.training.cost import PRICES_CONFIGMAP, PRICES_KEY, Prices
from odh.training.kinds.mpijob.model import MPIJobSpec
from odh.training.spec import build_manifest
from tests.dashboard_support import sign_in
from tests.html_checks import assert_valid
from tests.page_text import text_of
from training.models import AuditEvent, JobHistory, PriceList

A100 = "NVIDIA-A100-SXM4-80GB"
PRICES = reverse("training-cluster-prices")


def _post_prices(client, gpu="2.50", cpu="", gib="", currency="USD"):
    page = client.get(PRICES).content.decode()
    assert 'name="gpu_model_0" value="NVIDIA-A100-SXM4-80GB"' in page
    return client.post(PRICES, {"currency": currency, "gpu_count": "1",
                                "gpu_model_0": A100, "gpu_price_0": gpu,
                                "cpu_hour": cpu, "gib_hour": gib})


def _finished(uid, namespace, name, person, gpu_hours, seconds, days_ago=1, workers=2):
    spec = MPIJobSpec(name=name, namespace=namespace, image="quay.io/x/train:1",
                      command=["horovodrun", "python", "t.py"], workers=workers,
                      cpu_per_worker="8", memory_per_worker="32Gi", gpus_per_worker=1)
    finished = datetime.now(UTC) - timedelta(days=days_ago)
    return JobHistory.objects.create(
        uid=uid, namespace=namespace, kind="MPIJob", name=name, created_by=person,
        spec=build_manifest(spec), outcome="Succeeded", started=finished - timedelta(
            seconds=seconds), finished=finished, duration_seconds=seconds, gpu_hours=gpu_hours)


def test_the_admin_sets_prices_and_every_change_is_audited(admin, demo_cluster):
    page = admin.get(PRICES)
    assert page.status_code == 200
    assert_valid(page.content.decode())
    r = _post_prices(admin, gpu="2.50", cpu="0.04", gib="0.005", currency="eur")
    assert r.status_code == 302
    saved = admin.get(r["Location"]).content.decode()
    assert "The prices are saved" in saved and 'value="2.5"' in saved
    row = PriceList.objects.get()
    assert row.currency == "EUR" and row.gpu == {A100: "2.5"}
    event = AuditEvent.objects.get(verb="set_prices", outcome="success")
    assert event.username == "admin"
    assert json.loads(event.detail)[f"gpu:{A100}"] == [None, "2.5"]
    # published for the CLI and SDK, read back as anyone signed in reads it
    api = demo_cluster.api_client("alice")
    from kubernetes import client as k8s
    cm = k8s.CoreV1Api(api).read_namespaced_config_map(PRICES_CONFIGMAP, "mpijob-dashboard")
    assert Prices.from_json(cm.data[PRICES_KEY]).gpu == {A100: Decimal("2.5")}


@pytest.mark.parametrize("field, typed, reason", [
    ("gpu", "cheap", "is not a number"), ("gpu", "-3", "cannot be negative"),
    ("currency", "DOLLARS", "ISO 4217")])
def test_a_bad_price_is_refused_with_the_reason_keeping_what_was_typed(admin, field, typed,
                                                                      reason):
    values = {"gpu": "2.50", "currency": "USD"} | {field: typed}
    r = _post_prices(admin, **values)
    assert r.status_code == 400
    body = r.content.decode()
    assert reason in body and f'value="{typed}"' in body
    assert "Nothing was saved" in body
    assert not PriceList.objects.exists()
    assert AuditEvent.objects.get(verb="set_prices").outcome == "failed"


def test_prices_are_for_administrators_only(alice):
    assert alice.get(PRICES).status_code == 403
    assert alice.post(PRICES, {"currency": "USD"}).status_code == 403
    assert not PriceList.objects.exists()


def test_the_chargeback_adds_up_to_the_history_gpu_hours_times_the_prices(admin):
    _finished("uid-cb-1", "team-nlp", "bert-a", "alice", 4.0, 7200)
    _finished("uid-cb-2", "team-cv", "yolo-b", "alice", 1.5, 2700, workers=1)
    _finished("uid-cb-3", "research", "probe-c", "bob", 0.5, 1800, workers=1)
    _finished("uid-cb-old", "research", "old", "bob", 10.0, 36000, days_ago=60)
    overview = admin.get(reverse("training-cluster-overview")).content.decode()
    assert "No price is set, so no cost is shown." in overview
    assert 'id="chargeback-csv"' not in overview
    _post_prices(admin, gpu="3", cpu="0.05")
    page = admin.get(reverse("training-cluster-overview") + "?period=30d")
    body = page.content.decode()
    assert_valid(body)
    # 6 GPU-hours x 3; CPU: (2x8+1) x 2h + (8+1) x 0.75h + (8+1) x 0.5h, x 0.05
    cpu_hours = Decimal(17 * 2) + Decimal(9) * Decimal("0.75") + Decimal(9) * Decimal("0.5")
    total = 6 * Decimal(3) + cpu_hours * Decimal("0.05")
    assert f"{total.quantize(Decimal('0.01'))} USD" in text_of(body, "cost-totals")
    assert "team-nlp" in text_of(body, "cost-by-project")
    assert "bob" in text_of(body, "cost-by-person")
    r = admin.get(reverse("training-cluster-chargeback") + "?period=30d")
    assert r["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(r.content.decode())))
    jobs, last = rows[1:-1], rows[-1]
    assert {row[4] for row in jobs} == {"uid-cb-1", "uid-cb-2", "uid-cb-3"}
    history = sum(Decimal(str(h)) for h in JobHistory.objects.filter(
        uid__in=["uid-cb-1", "uid-cb-2", "uid-cb-3"]).values_list("gpu_hours", flat=True))
    assert sum(Decimal(row[7]) for row in jobs) == Decimal(last[7]) == history
    assert Decimal(last[10]) == total
    assert sum(Decimal(row[10]) for row in jobs) == total
    # a chosen period: the old job only
    r = admin.get(reverse("training-cluster-chargeback"), {
        "period": "custom", "since": (datetime.now(UTC) - timedelta(days=61)).date(),
        "until": (datetime.now(UTC) - timedelta(days=59)).date()})
    rows = list(csv.reader(io.StringIO(r.content.decode())))
    assert [row[4] for row in rows[1:-1]] == ["uid-cb-old"]


def test_the_chargeback_is_for_administrators_only(alice):
    assert alice.get(reverse("training-cluster-chargeback")).status_code == 403


def test_alice_sees_her_projects_page(alice):
    _finished("uid-pp-1", "team-nlp", "bert-pp", "alice", 2.0, 3600)
    r = alice.get(reverse("training-project", args=["team-nlp"]))
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    quota = text_of(body, "table-project-quota")
    assert "GPUs" in quota and "/24" in quota
    statuses = text_of(body, "project-status-counts")
    assert "Running" in statuses and "Pending" in statuses
    assert "alice" in text_of(body, "cost-by-person")
    assert "team-nlp/bert-pp" in text_of(body, "cost-by-job")
    assert "2.00" in text_of(body, "cost-totals")
    assert "Cost" not in text_of(body, "cost-totals")  # no price set: no cost
    # the masthead's Project menu links to it
    listing = alice.get(reverse("training-job-list") + "?project=team-nlp").content.decode()
    assert reverse("training-project", args=["team-nlp"]) in listing


def test_a_price_shows_on_the_projects_page(admin, demo_cluster):
    _finished("uid-pp-2", "team-nlp", "bert-pq", "alice", 2.0, 3600)
    _post_prices(admin, gpu="2.50")
    alice = Client()
    sign_in(alice, demo_cluster, "alice")
    body = alice.get(reverse("training-project", args=["team-nlp"])).content.decode()
    assert "5.00 USD" in text_of(body, "cost-totals")


def test_the_project_page_is_refused_to_who_may_not_list_its_jobs(bob, charlie):
    for client in (bob, charlie):
        r = client.get(reverse("training-project", args=["team-nlp"]))
        assert r.status_code == 403
        assert "may not list the training jobs of project team-nlp" in r.content.decode()
