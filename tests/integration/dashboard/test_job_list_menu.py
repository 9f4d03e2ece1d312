"""Each row's menu in the job list holds View logs, View metrics, Export YAML, Suspend or
Resume, Clone, Retry and Delete, each only where the person may (issue 26 item 4)."""

from __future__ import annotations

import uuid

from django.urls import reverse

from tests.integration.dashboard.test_job_list import row_menu
from tests.training_jobs import Jobs, mpijob
from tests.waiting import wait_until
from training.models import AuditEvent

URL = reverse("training-job-list")


def test_bob_who_only_views_research_may_read_and_export_nothing_more(bob):
    body = bob.get(URL).content.decode()
    for row in ("research-pytorchjob-bert-classifier-ddp", "research-tfjob-mnist-tf-dist"):
        assert row_menu(body, row) == ["View logs", "View metrics", "Export YAML"]


def test_the_menu_links_lead_to_the_job_s_tabs_and_its_export(alice):
    body = alice.get(URL, {"q": "bert-large"}).content.decode()
    base = reverse("training-job-detail", args=["team-nlp", "mpijob", "bert-large-pretrain"])
    assert f'href="{base}?tab=logs"' in body and f'href="{base}?tab=metrics"' in body
    export = reverse("training-job-export", args=["team-nlp", "mpijob", "bert-large-pretrain"])
    assert f'href="{export}?format=yaml" download' in body
    assert 'aria-label="Actions for bert-large-pretrain"' in body


def test_suspend_from_the_menu_comes_back_to_the_list_as_it_was_and_offers_resume(
        alice, demo_cluster):
    name = f"menu-{uuid.uuid4().hex[:6]}"
    with demo_cluster.api_client("alice") as api:
        jobs = Jobs(api, "team-nlp")
        jobs.create(mpijob(name, workers=1, run_seconds=3600))
        try:
            listed = f"{URL}?project=team-nlp&q={name}"
            body = alice.get(listed).content.decode()
            assert "Suspend" in row_menu(body, f"team-nlp-mpijob-{name}")
            assert f'name="next" value="{listed.replace("&", "&amp;")}"' in body
            r = alice.post(reverse("training-job-suspend", args=["team-nlp", "mpijob", name]),
                           {"next": listed})
            assert r.status_code == 302 and r["Location"] == listed
            assert AuditEvent.objects.get(name=name, verb="suspend").outcome == "success"
            wait_until(lambda: jobs.get(name)["spec"]["runPolicy"]["suspend"] is True, 30,
                       message=f"{name} to be suspended")
            again = alice.get(listed).content.decode()
            assert row_menu(again, f"team-nlp-mpijob-{name}")[3] == "Resume"
            elsewhere = alice.post(reverse("training-job-resume",
                                           args=["team-nlp", "mpijob", name]),
                                   {"next": "https://evil.example/"})
            assert elsewhere["Location"] == reverse("training-job-detail",
                                                    args=["team-nlp", "mpijob", name])
        finally:
            jobs.cleanup()
