"""Advice from history on the Resources step: for a job like the project's past runs (same
image and command), what they used and the size they suggest, each applied to the draft
with one click; nothing for a job unlike them, nor for someone who may not read the
project."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.advice_history import COMMAND, IMAGE, seed
from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard import wizard_flow as flow
from tests.page_text import text_of

NS = "team-nlp"
PEAKED = "Similar runs peaked at 41Gi per Worker: 48Gi is enough."
FASTER = "4 Workers finished 1.8x faster than 2."


@pytest.fixture
def history(db):
    return seed(NS)


def _draft(client, namespace: str = NS, image: str = IMAGE, memory: str = "64Gi") -> str:
    key = flow.start(client)
    flow.post_step(client, key, "configuration", namespace=namespace, name=flow.unique(),
                   image=image, command=COMMAND)
    flow.post_step(client, key, "resources", action="back", workers="2", gpus_per_worker="1",
                   memory_per_worker=memory)
    return key


def _page(client, key: str) -> str:
    return client.get(flow.step_url(key, "resources")).content.decode()


def _advice(page: str) -> str:
    """The text of the Resources step's advice ("" when it offers none)."""
    return text_of(page, "advice") if 'id="advice"' in page else ""


def _apply(client, key: str, field: str, **typed: str):
    url = flow.step_url(key, "resources")
    values = flow.form_values(_page(client, key), url)
    return client.post(reverse("training-job-new-advice", args=[key]),
                       {**values, **typed, "advice": field})


def test_the_resources_step_offers_what_similar_runs_suggest(alice, history):
    key = _draft(alice)
    page = _page(alice, key)
    assert_valid(page)
    advice = _advice(page)
    assert advice.startswith("Advice from similar runs")
    assert "4 similar runs in this project: 4 Succeeded, 0 Failed." in advice
    assert PEAKED in advice and FASTER in advice
    assert "Their GPUs were busy 88% of the time on average." in advice
    # each run: its peak against its limit; the durations by Worker count
    assert "41Gi of 64Gi (64%)" in advice and "38Gi of 64Gi (59%)" in advice
    assert "2 Workers: 2 runs, median 1h 0m 50s" in advice
    assert 'formaction="' + reverse("training-job-new-advice", args=[key]) in page
    assert re.search(r'name="advice" value="memory_per_worker"[^>]*>Use 48Gi per Worker<', page)
    assert re.search(r'name="advice" value="workers"[^>]*>Use 4 Workers<', page)


def test_one_click_applies_the_suggested_memory_to_the_draft(alice, history):
    key = _draft(alice)
    r = _apply(alice, key, "memory_per_worker")
    assert r.status_code == 302
    assert r["Location"] == flow.step_url(key, "resources") + "#advice"
    assert flow.draft(key).data["memory_per_worker"] == "48Gi"
    page = _page(alice, key)
    assert "Applied: Use 48Gi per Worker." in page
    assert PEAKED in _advice(page) and "Use 48Gi per Worker" not in _advice(page)


def test_one_click_applies_the_suggested_workers(alice, history):
    key = _draft(alice)
    assert _apply(alice, key, "workers").status_code == 302
    data = flow.draft(key).data
    assert data["workers"] == "4" and data["memory_per_worker"] == "64Gi"


def test_what_the_form_holds_is_kept_when_advice_is_applied(alice, history):
    key = _draft(alice)
    _apply(alice, key, "memory_per_worker", cpu_per_worker="6")
    data = flow.draft(key).data
    assert data["cpu_per_worker"] == "6" and data["memory_per_worker"] == "48Gi"


def test_a_job_unlike_the_past_runs_gets_no_advice(alice, history):
    key = _draft(alice, image="quay.io/opendatahub/something-else:1")
    assert _advice(_page(alice, key)) == ""
    r = _apply(alice, key, "memory_per_worker")
    assert "That suggestion no longer applies" in alice.get(r["Location"]).content.decode()
    assert flow.draft(key).data["memory_per_worker"] == "64Gi"


def test_too_little_history_tells_what_was_used_without_a_suggestion(alice, db):
    from training.models import JobHistory

    seed(NS)
    JobHistory.objects.filter(name__in=["advice-run-1", "advice-run-2",
                                        "advice-run-3"]).delete()
    page = _page(alice, _draft(alice))
    advice = _advice(page)
    assert "1 similar run in this project: 1 Succeeded, 0 Failed." in advice
    assert "38Gi of 64Gi (59%)" in advice
    assert "peaked" not in advice and 'name="advice"' not in page


def test_bob_sees_no_advice_from_a_project_he_may_not_read(bob, history):
    key = _draft(bob)
    page = _page(bob, key)
    assert _advice(page) == "" and "advice-run" not in page and "41Gi" not in page
    assert _apply(bob, key, "memory_per_worker").status_code == 302
    assert flow.draft(key).data["memory_per_worker"] == "64Gi"
