"""The job list's filters by creator, creation date and label selector, in the address:
a link reproduces the view (issue 26 item 4)."""

from __future__ import annotations

import uuid
from datetime import date, timedelta

import pytest
from django.urls import reverse

from tests.html_checks import assert_valid
from tests.training_jobs import Jobs, mpijob

URL = reverse("training-job-list")
NS = "team-nlp"


@pytest.fixture
def labelled_jobs(demo_cluster):
    """Three of alice's team-nlp jobs carrying a label of this test run: two of one tier,
    one made for a "dora" (its creator annotation); deleted afterwards."""
    run = uuid.uuid4().hex[:6]
    with demo_cluster.api_client("alice") as api:
        jobs = Jobs(api, NS)
        made = {}
        for name, tier, creator in (("filt-a", "test", "alice"), ("filt-b", "prod", "alice"),
                                    ("filt-c", "test", "dora")):
            body = mpijob(f"{name}-{run}", workers=1, run_seconds=3600,
                          annotations={"opendatahub.io/username": creator})
            body["metadata"]["labels"] = {"suite": run, "tier": tier}
            made[name] = jobs.create(body)["metadata"]
        yield run, made
        jobs.cleanup()


def _shown(body: str, run: str) -> set[str]:
    return {name for name in ("filt-a", "filt-b", "filt-c") if f"{name}-{run}" in body}


def test_a_label_selector_in_the_address_filters_the_list(alice, labelled_jobs):
    run, _made = labelled_jobs
    body = alice.get(URL, {"project": "", "labels": f"suite={run}"}).content.decode()
    assert _shown(body, run) == {"filt-a", "filt-b", "filt-c"}
    body = alice.get(URL, {"project": "", "labels": f"suite={run},tier!=prod"}).content.decode()
    assert _shown(body, run) == {"filt-a", "filt-c"}
    assert f"Labels: suite={run},tier!=prod" in body  # its chip
    assert f'value="suite={run},tier!=prod"' in body  # the field, as typed


def test_the_creator_filter_keeps_what_one_person_created(alice, labelled_jobs):
    run, _made = labelled_jobs
    body = alice.get(URL, {"project": "", "labels": f"suite={run}", "user": "dora"}
                     ).content.decode()
    assert _shown(body, run) == {"filt-c"}
    assert "Created by: dora" in body
    assert '<option value="dora"></option>' in body  # offered among the creators listed


def test_a_date_range_keeps_the_jobs_created_in_it(alice, labelled_jobs):
    run, made = labelled_jobs
    day = date.fromisoformat(made["filt-a"]["creationTimestamp"][:10])
    inside = alice.get(URL, {"project": "", "labels": f"suite={run}",
                             "from": day.isoformat(), "to": day.isoformat()}).content.decode()
    assert _shown(inside, run) == {"filt-a", "filt-b", "filt-c"}
    later = alice.get(URL, {"project": "", "labels": f"suite={run}",
                            "from": (day + timedelta(days=1)).isoformat()}).content.decode()
    assert _shown(later, run) == set()
    assert "No jobs match these filters" in later
    before = alice.get(URL, {"project": "", "to": (day - timedelta(days=1)).isoformat(),
                             "labels": f"suite={run}"}).content.decode()
    assert _shown(before, run) == set()


def test_the_new_filters_combine_with_the_others_and_the_htmx_table(alice, labelled_jobs):
    run, _made = labelled_jobs
    r = alice.get(URL, {"project": NS, "labels": f"suite={run}", "q": "filt-b"},
                  HTTP_HX_REQUEST="true")
    body = r.content.decode()
    assert body.lstrip().startswith('<div id="job-table"')
    assert _shown(body, run) == {"filt-b"}
    assert_valid(body, page=False)


def test_a_selector_that_cannot_be_read_says_how_and_keeps_what_was_typed(alice):
    body = alice.get(URL, {"labels": "team in nlp", "q": "bert"}).content.decode()
    assert 'value="team in nlp"' in body  # kept as typed, marked, explained
    assert_valid(body)
    assert 'aria-invalid="true"' in body
    assert "“team in nlp” is not a label selector: write KEY=VALUE" in body
    assert "bert-large-pretrain" in body  # the other filters still apply
    bad_date = alice.get(URL, {"from": "30/11/2026"}).content.decode()
    assert "is not a date: write YYYY-MM-DD" in bad_date
