"""Training curves against the demo simcluster: a hub with its curve keeper reads a new
job's Launcher log as the job runs; the Metrics tab's Training group shows what the log
said (whether Prometheus is there or not), its CSV is the chart's data, the curves stay
after the job is deleted (its history page), and a job whose log has no metrics shows no
Training group."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.urls import reverse

from tests.html_checks import assert_valid
from tests.integration.hub.conftest import dashboard_client
from tests.training_jobs import Jobs, mpijob
from tests.waiting import wait_until

NS = "team-nlp"
EPOCH_LINE = re.compile(r"Epoch (\d+)/\d+: loss ([\d.]+), accuracy ([\d.]+)")
STEP_LINE = re.compile(r"Epoch (\d+)/\d+ step (\d+)/(\d+): loss ([\d.]+), lr ([\d.]+)")


@pytest.fixture
def hub(alice, demo_cluster):
    """A hub with a curve keeper (and the history), once it has read what it found: its
    threads share SQLite's in-memory test database with the test, signed in first."""
    from channels.layers import InMemoryChannelLayer

    from training.live.hub.hub import Hub, Publisher
    from training.live.hub.keepers.curves import CurveKeeper
    from training.live.hub.keepers.transitions import TransitionRecorder

    def factory():
        return dashboard_client(demo_cluster)
    hub = Hub(factory, Publisher(InMemoryChannelLayer()), transitions=TransitionRecorder(),
              curves=CurveKeeper(factory, every=0.3)).start()
    assert hub.ready.wait(30)
    wait_until(lambda: hub.transitions.idle() and hub.curves.idle(), 60,
               message=lambda: str(hub.stats()))
    yield hub
    hub.stop()


@pytest.fixture
def jobs(demo_cluster):
    helper = Jobs(demo_cluster.api_client("alice"), NS)
    yield helper
    helper.cleanup()


def kept(uid: str):
    from training.curves.models import TrainingCurves
    return TrainingCurves.objects.filter(job_uid=uid, finished=True).first()


def chart_data(body: str) -> list[dict]:
    found = re.search(r'<script id="training-curves" type="application/json">(.*?)</script>',
                      body, re.S)
    return json.loads(found.group(1)) if found else []


def run(jobs: Jobs, *bodies: dict) -> list[str]:
    """Create the jobs, wait for them to succeed and for their curves to be kept: their
    uids."""
    uids = [jobs.create(body)["metadata"]["uid"] for body in bodies]
    for body, uid in zip(bodies, uids, strict=True):
        jobs.wait_condition(body["metadata"]["name"], "Succeeded", timeout=90)
        wait_until(lambda uid=uid: kept(uid), 60, message=f"the curves of {uid} kept")
    return uids


@pytest.mark.django_db(transaction=True)
def test_the_training_group_shows_what_the_log_said_and_stays_after_deletion(
        hub, jobs, alice, demo_cluster, settings):
    from training.models import JobHistory

    settings.PROMETHEUS_URL = ""  # the Training group needs no Prometheus
    name = "curves-run"
    uid, other = run(jobs, mpijob(name, workers=1, run_seconds=4,
                                  annotations={"simcluster.io/epochs": "5"}),
                     mpijob("curves-other", workers=1, run_seconds=3,
                            annotations={"simcluster.io/epochs": "3"}))
    launcher = jobs.job_pods(name, "launcher")[0].metadata.name
    with dashboard_client(demo_cluster) as client:
        lines = str(client.read_log(NS, launcher, tail_lines=None)).splitlines()
    epochs = [m for m in map(EPOCH_LINE.search, lines) if m]
    steps = [m for m in map(STEP_LINE.search, lines) if m]
    assert len(epochs) == len(steps) == 5

    page = alice.get(reverse("training-job-detail", args=[NS, "mpijob", name]),
                     {"tab": "metrics"})
    assert page.status_code == 200
    body = page.content.decode()
    assert_valid(body)
    assert "Metrics are not set up" in body and ">Training</h2>" in body
    charts = {c["name"]: c for c in chart_data(body)}
    assert list(charts)[:4] == ["loss", "lr", "img/sec", "accuracy"]
    loss = charts["loss"]
    assert loss["axis"] == "step"
    during, summaries = loss["traces"]
    # during epochs: the step lines' loss at their global step; the epoch lines' at its end
    assert during["x"] == [(int(m[1]) - 1) * int(m[3]) + int(m[2]) for m in steps]
    assert during["y"] == [float(m[4]) for m in steps]
    per_epoch = int(steps[0][3])
    assert summaries["x"] == [int(m[1]) * per_epoch for m in epochs]
    assert summaries["y"] == [float(m[2]) for m in epochs]
    assert charts["accuracy"]["traces"][0]["y"] == [float(m[3]) for m in epochs]
    assert charts["lr"]["traces"][0]["y"] == [float(m[5]) for m in steps]

    # with Prometheus: its charts too, and it is asked for curves the job pushed (it has
    # none: simcluster's jobs only log them), so the Training group stays the log's
    settings.PROMETHEUS_URL = demo_cluster.prometheus_url
    with_prometheus = alice.get(reverse("training-job-detail", args=[NS, "mpijob", name]),
                                {"tab": "metrics"}).content.decode()
    assert "Metrics are not set up" not in with_prometheus
    assert "From Prometheus" not in with_prometheus
    assert chart_data(with_prometheus) == chart_data(body)
    settings.PROMETHEUS_URL = ""

    # the CSV is the chart's data
    csv_url = reverse("training-job-metrics-csv", args=[NS, "mpijob", name])
    assert f'href="{csv_url}?metric=training"' in body
    answer = alice.get(csv_url, {"metric": "training"})
    assert answer.status_code == 200
    rows = list(csv.reader(io.StringIO(answer.content.decode())))
    assert rows[0] == ["series", "time", "value", "step", "epoch"]
    for series, trace in (("training/loss", during), ("training/loss@epoch", summaries)):
        mine = [r for r in rows[1:] if r[0] == series]
        assert [float(r[3]) for r in mine] == trace["x"]
        assert [float(r[2]) for r in mine] == trace["y"]
        assert all(r[1].endswith("Z") for r in mine)

    # compared with another run: the same curves, overlaid on shared axes
    compare = alice.get(reverse("training-job-compare"),
                        {"job": [f"{NS}/mpijob/{name}", f"{NS}/mpijob/curves-other"]})
    data = json.loads(re.search(r'<script id="compare-chart-data" type="application/json">'
                                r"(.*?)</script>", compare.content.decode(), re.S).group(1))
    overlaid = {c["name"]: c for c in data["training"]}
    assert [s["name"] for s in overlaid["loss"]["series"]] == [name, "curves-other"]
    assert overlaid["loss"]["axis_title"] == "Step"
    assert overlaid["loss"]["series"][0]["x"] == during["x"]
    assert overlaid["loss"]["series"][0]["y"] == during["y"]
    assert len(overlaid["loss"]["series"][1]["x"]) == 3
    assert [s["name"] for s in overlaid["accuracy"]["series"]] == [name, "curves-other"]

    # deleted: its history record's page keeps the same curves
    wait_until(lambda: JobHistory.objects.filter(uid=uid).exists(), 60, message="history")
    jobs.delete(name)
    wait_until(lambda: alice.get(reverse("training-job-detail", args=[NS, "mpijob", name]))
               .status_code == 404, 60, message="the job gone")
    history = alice.get(reverse("training-job-history", args=[NS, "mpijob", name, uid]))
    assert history.status_code == 200
    assert_valid(history.content.decode())
    assert {c["name"]: c for c in chart_data(history.content.decode())} == charts
    assert kept(other) is not None


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_log_has_no_metrics_shows_no_training_group(hub, jobs, alice, settings):
    settings.PROMETHEUS_URL = ""
    name = "curves-none"
    [uid] = run(jobs, mpijob(name, workers=1, launcher_command=[
        "sh", "-c", "echo preparing the data; sleep 1; echo step 3 of the setup done"]))
    assert kept(uid).points == 0
    body = alice.get(reverse("training-job-detail", args=[NS, "mpijob", name]),
                     {"tab": "metrics"}).content.decode()
    assert "Metrics are not set up" in body
    assert chart_data(body) == [] and ">Training</h2>" not in body
    assert "data-training-curves" not in body
    assert '<div id="training-curves-group">' in body  # ended: not asking again


@pytest.mark.django_db(transaction=True)
def test_a_running_jobs_training_group_grows_and_stops_asking_when_it_ends(
        hub, jobs, alice, settings):
    from training.curves.models import TrainingCurves

    settings.PROMETHEUS_URL = ""
    name = "curves-live"
    uid = jobs.create(mpijob(name, workers=1, run_seconds=160,
                             annotations={"simcluster.io/epochs": "4"}))["metadata"]["uid"]

    def points() -> int:
        row = TrainingCurves.objects.filter(job_uid=uid).first()
        return row.points if row is not None and not row.finished else 0
    first = wait_until(points, 60, message="the first points of the running job")
    body = alice.get(reverse("training-job-detail", args=[NS, "mpijob", name]),
                     {"tab": "metrics"}).content.decode()
    shown = sum(len(t["x"]) for c in chart_data(body) for t in c["traces"])
    part = reverse("training-job-curves", args=[NS, "mpijob", name])
    asks = re.search(r'hx-get="([^"]+)" hx-trigger="every (\d+)s"', body)
    assert asks and asks.group(1).startswith(part + "?points=")
    assert shown >= first

    # new points: the group again, with them, still asking
    wait_until(lambda: points() > shown, 60, message="more points")
    again = alice.get(asks.group(1).replace("&amp;", "&"))
    assert again.status_code == 200
    grown = again.content.decode()
    assert sum(len(t["x"]) for c in chart_data(grown) for t in c["traces"]) > shown
    count = re.search(r'hx-get="[^"]+\?points=(\d+)"', grown).group(1)
    # nothing new since: nothing to draw again (asked at once, between two log lines)
    def unchanged() -> bool:
        shows = re.search(r"\?points=(\d+)", alice.get(part, {"points": "-1"}).content.decode())
        return alice.get(part, {"points": shows.group(1)}).status_code == 204
    wait_until(unchanged, 30, interval=0.2, message="204 for the points shown")

    # ended: the group as the log ended it, no longer asking
    jobs.wait_condition(name, "Succeeded", timeout=120)
    wait_until(lambda: kept(uid), 60, message="the curves read to the end")
    final = alice.get(part, {"points": count}).content.decode()
    assert "hx-get" not in final and ">Training</h2>" in final
    assert len({c["name"]: c for c in chart_data(final)}["loss"]["traces"][1]["x"]) == 4


@pytest.mark.django_db(transaction=True)
def test_a_jobs_own_patterns_chart_what_its_log_says_in_its_own_words(
        hub, jobs, alice, settings):
    from odh.training.manifests.metric_patterns import ANNOTATION
    settings.PROMETHEUS_URL = ""
    name = "curves-declared"
    script = "; ".join(f"echo 'Iter {s} | bleu {b} | wps {w}'" for s, b, w in
                       ((100, 12.5, 5400), (200, 17.25, 5550), (300, 19.0, 5600)))
    run(jobs, mpijob(name, workers=1, annotations={
        ANNOTATION: "Iter {step} | bleu {bleu} | wps {words_per_sec}\n"},
        launcher_command=["sh", "-c", script + "; sleep 1"]))
    body = alice.get(reverse("training-job-detail", args=[NS, "mpijob", name]),
                     {"tab": "metrics"}).content.decode()
    charts = {c["name"]: c for c in chart_data(body)}
    assert list(charts) == ["bleu", "words_per_sec"]
    assert charts["bleu"]["axis"] == "step"
    assert charts["bleu"]["traces"][0]["x"] == [100, 200, 300]
    assert charts["bleu"]["traces"][0]["y"] == [12.5, 17.25, 19.0]
    assert charts["words_per_sec"]["traces"][0]["y"] == [5400, 5550, 5600]


@pytest.mark.django_db(transaction=True)
def test_curves_the_job_pushed_to_prometheus_replace_the_logs_on_the_tab(
        hub, jobs, alice, settings, demo_cluster):
    """A script that pushes its loss to the Pushgateway: the Training group charts
    Prometheus' numbers for it and says so; the log's other metrics stay."""
    import requests
    name = "curves-pushed"
    jobs.create(mpijob(name, workers=1, run_seconds=600))
    jobs.wait_condition(name, "Running", timeout=60)
    gateway = f"{demo_cluster.prometheus_url}/metrics/job/{name}/namespace/{NS}"
    url = reverse("training-job-detail", args=[NS, "mpijob", name])
    settings.PROMETHEUS_URL = demo_cluster.prometheus_url
    pushed = {10: 0.5, 20: 0.25}
    for step, loss in pushed.items():
        answer = requests.put(gateway, data=f"training_loss {loss}\ntraining_step {step}\n",
                              verify=str(demo_cluster.ca_file), timeout=10)
        assert answer.status_code == 200, answer.text
        wait_until(lambda step=step: (c := {c["name"]: c for c in chart_data(alice.get(
            url, {"tab": "metrics"}).content.decode())}).get("loss") and
            c["loss"]["traces"][0]["x"][-1] == step, 60, message=f"step {step} on the tab")
    body = alice.get(url, {"tab": "metrics"}).content.decode()
    charts = {c["name"]: c for c in chart_data(body)}
    assert charts["loss"]["traces"][0]["x"] == list(pushed)
    assert charts["loss"]["traces"][0]["y"] == list(pushed.values())
    assert "From Prometheus, where the job pushed them: loss." in body
    wait_until(lambda: "lr" in {c["name"] for c in chart_data(alice.get(
        url, {"tab": "metrics"}).content.decode())}, 60, message="the log's curves too")
