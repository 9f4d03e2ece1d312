"""Cost on the demo cluster: an administrator's prices at /cluster/prices/ (refused when
wrong, audited, published for the CLI), the chargeback of /cluster/ and its CSV adding up
to the job history's GPU-hours times the prices, and a project's own page."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

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


@pytest.fixture(autouse=True)
def _no_prices_published():
    """The demo cluster is shared by the session: each test starts and ends with the
    prices ConfigMap saying "no price", as deploy/ and the demo create it."""
    from training import prices
    assert prices.publish(Prices()) == ""
    yield
    assert prices.publish(Prices()) == ""


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
    # the pending pods' share is said apart: the demo's team-nlp has GPU pods waiting
    gpus = re.search(r"GPUs team-quota (\d+)/24 \(\d+%\) (\d+) \((\d+)%\)", quota)
    assert gpus, quota
    assert 0 < int(gpus.group(2)) <= int(gpus.group(1))
    assert round(100 * int(gpus.group(2)) / 24) == int(gpus.group(3))
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


def _set_prices(gpu="2.50", cpu=None, gib=None):
    PriceList.objects.create(currency="USD", gpu={A100: gpu}, cpu_hour=cpu, gib_hour=gib)


def test_the_wizards_review_estimates_the_cost(alice):
    from tests.integration.dashboard.wizard.wizard_flow import fill, start, step_url, unique
    key = start(alice)
    fill(alice, key, name=unique("cost"), namespace="team-cv", workers=2, gpus_per_worker=1,
         cpu_per_worker=4, memory_per_worker="16Gi")
    review = alice.get(step_url(key, "review")).content.decode()
    assert "Estimated cost" not in review  # no price set: no cost anywhere
    _set_prices(gpu="2.50", cpu=Decimal("0.10"))
    review = alice.get(step_url(key, "review")).content.decode()
    assert_valid(review)
    # 2 GPUs x 2.50 + (2 x 4 + 1 Launcher CPU) x 0.10
    assert text_of(review, "estimated-cost-hour") == "5.90 USD"
    # the job names no GPU model: the demo's one model is assumed, and said
    assert A100 in text_of(review, "estimated-cost-basis")
    review = alice.get(step_url(key, "review"), {"hours": "6"}).content.decode()
    assert text_of(review, "estimated-cost-total") == "35.40 USD"
    review = alice.get(step_url(key, "review"), {"hours": "soon"}).content.decode()
    assert "is not a number of hours" in review and 'value="soon"' in review


def _job_page(client, name):
    return client.get(reverse("training-job-detail", args=["team-nlp", "mpijob", name]))


def test_the_job_page_shows_the_cost_so_far_and_the_total(alice, demo_cluster):
    assert 'id="job-cost"' not in _job_page(alice, "bert-large-pretrain").content.decode()
    _set_prices(gpu="2.50")
    running = _job_page(alice, "bert-large-pretrain").content.decode()
    assert_valid(running)
    assert "Cost so far" in text_of(running, "job-cost")
    figure = text_of(running, "job-cost-figure")
    assert figure.endswith(" USD") and Decimal(figure.split()[0].replace(",", "")) > 0
    # finished: its history's GPU-hours times the price
    from kubernetes import client as k8s
    with demo_cluster.api_client("admin") as api:
        job = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
            "kubeflow.org", "v2beta1", "team-nlp", "mpijobs", "gpt2-finetune")
    record, _new = JobHistory.record_once(
        uid=job["metadata"]["uid"], namespace="team-nlp", kind="MPIJob", name="gpt2-finetune",
        outcome="Failed", spec=job, duration_seconds=1800.0, gpu_hours=1.25)
    finished = _job_page(alice, "gpt2-finetune").content.decode()
    assert "Total cost" in text_of(finished, "job-cost")
    expected = (Decimal(str(record.gpu_hours)) * Decimal("2.50")).quantize(
        Decimal("0.01"), rounding=ROUND_HALF_UP)
    assert text_of(finished, "job-cost-figure") == f"{expected} USD"


def test_the_job_list_shows_a_cost_column_where_prices_are_set(alice):
    listing = alice.get(reverse("training-job-list") + "?project=team-nlp").content.decode()
    assert '<th scope="col" class="pf-v6-c-table__th" id="job-cost-column" hidden>' in listing
    _set_prices(gpu="2.50")
    listing = alice.get(reverse("training-job-list") + "?project=team-nlp").content.decode()
    assert_valid(listing)
    assert 'id="job-cost-column">Cost</th>' in listing
    cell = text_of(listing, "row-cost-team-nlp-mpijob-bert-large-pretrain")
    assert cell.endswith(" USD") and Decimal(cell.split()[0].replace(",", "")) > 0


def test_describe_and_the_sdk_tell_the_cost_at_the_published_prices(admin, demo_cluster,
                                                                     tmp_path):
    """The CLI (run as a process, as a person runs it, with alice's kubeconfig) and the SDK
    read the prices the dashboard published; no price, no Cost line."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from odh.training.jobs import MPIJob
    from odh.training.sdk import TrainingClient
    root = Path(__file__).resolve().parents[3]
    env = dict(os.environ, KUBECONFIG=str(demo_cluster.kubeconfig("alice")),
               HOME=str(tmp_path), PYTHONPATH=str(root))

    def describe(*extra: str) -> str:
        done = subprocess.run([sys.executable, "-m", "odh.training.cli", "describe", "mpijob",
                               "gpt2-finetune", "-n", "team-nlp", *extra], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "Cost" not in describe()
    assert json.loads(describe("-o", "json"))["cost"] is None
    with TrainingClient(kubeconfig=str(demo_cluster.kubeconfig("alice"))) as client:
        job = MPIJob.get("gpt2-finetune", "team-nlp", client=client)
        assert job.cost() is None
        _post_prices(admin, gpu="2.50", cpu="0.10")
        out = describe()
        (line,) = [ln for ln in out.splitlines() if ln.strip().startswith("Cost:")]
        spent = job.cost()
    # the failed job: 4 Workers x 1 GPU, 4 x 8 + 2 CPUs (the demo's gpt2-finetune)
    assert spent.currency == "USD" and spent.gpu_model == A100 and spent.assumed
    seconds = job.summary().duration_seconds()
    hours = Decimal(str(seconds)) / 3600
    assert abs(spent.total - hours * (4 * Decimal("2.50") + 34 * Decimal("0.10"))) < \
        Decimal("0.01")
    assert line.split("Cost:")[1].strip() == spent.text
    record = json.loads(describe("-o", "json"))["cost"]
    assert (record["currency"], record["finished"]) == ("USD", True)
    assert record["text"].endswith("USD") and "Decimal" not in record["total"]
    assert A100 in out  # the assumed model is said


def _running_now(body: str) -> tuple[int, Decimal, str]:
    """(jobs, GPU-hours, the rest) of the "Running now" line of a period's figures."""
    import re
    said = text_of(body, "cost-running")
    found = re.search(r": (\d+) jobs?, ([\d.,]+) GPU-hours since (?:it|they) started(.*)", said)
    assert found, said
    return int(found[1]), Decimal(found[2].replace(",", "")), found[3]


def test_jobs_running_now_are_said_apart_from_the_periods_figures(alice, admin):
    """The period's figures count finished jobs (a chargeback does not change once its
    period is over); what runs now is told beside them, from each start to now."""
    body = alice.get(reverse("training-project", args=["team-nlp"])).content.decode()
    jobs, hours, rest = _running_now(body)
    assert jobs >= 1 and hours > 0  # bert-large-pretrain, among others, holds GPUs now
    assert "so far" not in rest  # no price: hours only
    _set_prices(gpu="2.50")
    body = alice.get(reverse("training-project", args=["team-nlp"])).content.decode()
    assert_valid(body)
    _jobs, hours, rest = _running_now(body)
    amount = Decimal(rest.split(",", 1)[1].split()[0].replace(",", ""))
    assert rest.strip().endswith("USD so far.")
    assert abs(amount - hours * Decimal("2.50")) <= Decimal("0.02")  # GPU-hours x price
    overview = admin.get(reverse("training-cluster-overview")).content.decode()
    everywhere, all_hours, _rest = _running_now(overview)
    assert everywhere >= jobs and all_hours >= hours
