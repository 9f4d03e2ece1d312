"""Jobs side by side (/jobs/compare/): live jobs, history records, jobs that are gone."""

from __future__ import annotations

import copy
import html
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from tests.html_checks import assert_valid

COMPARE = reverse("training-job-compare")
GPT2 = "team-nlp/mpijob/gpt2-finetune"
BERT = "team-nlp/mpijob/bert-large-pretrain"


def _text(body: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))


def _row(body: str, label: str) -> str:
    match = re.search(rf"<tr[^>]*>\s*<th scope=\"row\"[^>]*>{re.escape(label)}\b.*?</tr>",
                      body, re.S)
    assert match, f"no row {label}"
    return match.group(0)


def _cells(row: str) -> tuple[str, list[str]]:
    """A table row's header and its cells, as text."""
    header = re.search(r"<th[^>]*>(.*?)</th>", row, re.S)
    assert header, row
    return (_text(header.group(1)).strip(),
            [_text(cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)])


def _card(body: str, title: str) -> str:
    """The chart card under the heading `title`."""
    match = re.search(rf"<section class=\"pf-v6-c-card dash-chart-card\">(?:(?!</section>).)*?"
                      rf"<h3[^>]*>{re.escape(title)}</h3>.*?</section>", body, re.S)
    assert match, f"no chart card {title}"
    return match.group(0)


def _chart_data(body: str) -> dict:
    match = re.search(r'<script id="compare-chart-data" type="application/json">(.*?)</script>',
                      body, re.S)
    assert match, "no chart data"
    return json.loads(match.group(1))


@pytest.fixture
def succeeded_record(db, alice):
    """A successful earlier run of gpt2-finetune's configuration, with more memory."""
    from odh.training.kinds import MPIJOB
    from odh.training.status.queries import job_detail
    from tests.dashboard_support import session_token
    from training.cluster import client_for_token
    from training.models import JobHistory

    with client_for_token(session_token(alice)) as client:
        job = job_detail(client, MPIJOB, "team-nlp", "gpt2-finetune").job
    spec = copy.deepcopy(job)
    spec.pop("status", None)
    worker = spec["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    worker["resources"]["limits"]["memory"] = "96Gi"
    now = datetime.now(UTC)
    record, _created = JobHistory.record_once(
        uid="uid-gpt2-finetune-v1", namespace="team-nlp", kind="MPIJob",
        name="gpt2-finetune-v1", outcome="Succeeded", created_by="alice", spec=spec,
        started=now - timedelta(hours=6), finished=now - timedelta(hours=4),
        duration_seconds=7200.0, gpu_hours=8.0)
    return record


def test_two_live_jobs_side_by_side_with_the_differences_marked(alice):
    response = alice.get(COMPARE, {"job": [GPT2, BERT]})
    assert response.status_code == 200
    body = response.content.decode()
    assert_valid(body)
    memory = _row(body, "Memory per worker")
    assert 'class="pf-v6-c-table__tr dash-differs"' in memory
    # the setting's name in its row header, each job's value in a cell of its own
    assert _cells(memory) == ("Memory per worker (differs)", ["48Gi", "64Gi"])
    # the mark is an icon and a word (on a line of its own), not the row's colour alone
    assert re.search(r'<span class="dash-differs__text"><i class="fas fa-not-equal" '
                     r'aria-hidden="true"></i> \(differs\)</span></th>', memory)
    slots = _row(body, "Slots per worker")
    assert "dash-differs" not in slots and "(differs)" not in slots
    assert _cells(slots) == ("Slots per worker", ["1", "1"])
    outcome = _text(body)
    assert "Worker 2 ran out of memory and was killed (exit code 137)" in outcome
    assert "GPU-hours" in outcome


def test_a_history_record_compares_like_a_job_and_the_failed_page_offers_it(alice,
                                                                           succeeded_record):
    page = alice.get(reverse("training-job-detail", args=GPT2.split("/"))).content.decode()
    offer = re.search(r'href="([^"]*history%3Auid-gpt2-finetune-v1[^"]*)"', page)
    assert offer, "the failed job's card offers no comparison with the successful run"
    card = _text(page)
    assert "Compare with gpt2-finetune-v1, a similar run that succeeded (Memory per worker " \
        "96Gi)" in card
    body = alice.get(html.unescape(offer.group(1))).content.decode()
    assert_valid(body)
    memory = _row(body, "Memory per worker")
    assert _cells(memory) == ("Memory per worker (differs)", ["48Gi", "96Gi"])
    assert "(history)" in body
    # a history record keeps no logs: said under the chart, not left out without a word
    progress = _text(_card(body, "Training done (%)"))
    assert "gpt2-finetune-v1 is a history record: its logs, where progress is read from, " \
        "are gone." in progress


def test_a_job_that_is_gone_is_said_to_be_gone(alice):
    body = alice.get(COMPARE, {"job": [GPT2, "team-nlp/mpijob/never-was-here"]}).content
    text = _text(body.decode())
    assert "never-was-here" in text
    assert "no longer exists, and it has no history record to compare with" in text


def test_bad_references_and_other_peoples_jobs_are_said_not_500(alice, bob):
    text = _text(alice.get(COMPARE, {"job": ["nonsense", "history:nope"]}).content.decode())
    assert "does not name a job" in text
    assert "There is no history record “nope”." in text
    refused = _text(bob.get(COMPARE, {"job": [GPT2]}).content.decode())
    assert "You may not see this job." in refused


def test_one_job_offers_others_to_compare_with(alice):
    body = alice.get(COMPARE, {"job": [GPT2]}).content.decode()
    assert_valid(body)
    assert re.search(r'<label[^>]*for="compare-add"', body)
    assert 'value="team-nlp/mpijob/bert-large-pretrain"' in body


def test_every_setting_is_a_table_row_of_a_header_and_cells(alice):
    body = alice.get(COMPARE, {"job": [GPT2, BERT]}).content.decode()
    config = re.search(r'aria-labelledby="compare-config-title">(.*?)</table>', body, re.S)
    assert config
    rows = re.findall(r"<tr[^>]*>.*?</tr>", config.group(1), re.S)
    assert len(rows) > 10
    for row in rows:
        # PatternFly's row: padded cells with a rule between rows, and on a phone each
        # cell under the job's name (data-label), not run into the setting's name
        assert row.startswith('<tr class="pf-v6-c-table__tr'), row[:80]
    for row in rows[1:]:
        header, cells = _cells(row)
        assert header and len(cells) == 2, row
        assert re.findall(r'<td data-label="([^"]*)"', row) == ["gpt2-finetune",
                                                                 "bert-large-pretrain"]


def test_a_chart_with_nothing_to_draw_says_why_in_its_place(alice, demo_cluster, settings):
    settings.PROMETHEUS_URL = demo_cluster.prometheus_url
    body = alice.get(COMPARE, {"job": [GPT2, "team-nlp/mpijob/llama-13b-pretrain"]})
    body = body.content.decode()
    assert_valid(body)
    # no job logged progress: sentences in place of the chart, no empty chart
    progress = _card(body, "Training done (%)")
    assert 'class="dash-chart-empty"' in progress and 'id="compare-chart-progress"' not in progress
    said = _text(progress)
    assert "No progress was read from the logs of gpt2-finetune." in said
    assert "llama-13b-pretrain has not started: no progress yet." in said
    assert _chart_data(body)["progress"] == []
    # gpt2-finetune's GPUs are drawn; the job that has not started is named under them
    gpu = _card(body, "GPU utilization (%)")
    assert 'id="compare-chart-gpu"' in gpu and "dash-chart-empty" not in gpu
    assert "llama-13b-pretrain has not started: no GPU utilization yet." in _text(gpu)
    assert [s["name"] for s in _chart_data(body)["gpu"]] == ["gpt2-finetune"]


def test_without_prometheus_the_gpu_chart_says_so(alice, settings):
    settings.PROMETHEUS_URL = ""
    body = alice.get(COMPARE, {"job": [GPT2, BERT]}).content.decode()
    gpu = _card(body, "GPU utilization (%)")
    assert 'id="compare-chart-gpu"' not in gpu
    assert "Metrics are not set up: PROMETHEUS_URL is not configured." in _text(gpu)


def test_each_job_keeps_its_colour_and_a_job_without_progress_is_named(alice, demo_cluster,
                                                                      settings):
    settings.PROMETHEUS_URL = demo_cluster.prometheus_url
    body = alice.get(COMPARE, {"job": [GPT2, BERT]}).content.decode()
    data = _chart_data(body)
    assert [(s["name"], s["colour"]) for s in data["gpu"]] == [("gpt2-finetune", 0),
                                                                ("bert-large-pretrain", 1)]
    # gpt2-finetune logged no progress: bert-large-pretrain keeps its colour of the GPU chart
    assert [(s["name"], s["colour"]) for s in data["progress"]] == [("bert-large-pretrain", 1)]
    progress = _card(body, "Training done (%)")
    assert 'id="compare-chart-progress"' in progress
    assert "No progress was read from the logs of gpt2-finetune." in _text(progress)
