"""The audit trail viewer at /cluster/audit/: what people did through the dashboard, with
filters, pages, and a CSV export of exactly what the filters select."""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.urls import reverse

from tests.dashboard_support import sign_in
from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard.wizard_flow import create, fill, start, unique
from tests.page_text import ids_starting, text_of
from tests.waiting import wait_until
from tests.wizard_cluster import ClusterJobs
from training.models import AuditEvent
from training.views.cluster.audit_trail import spreadsheet_safe

URL = reverse("training-cluster-audit")
EXPORT = reverse("training-cluster-audit-export")
NS = "team-cv"


def _export(client, **params) -> list[dict]:
    response = client.get(EXPORT, params)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="audit-trail-')
    body = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(body)))


@pytest.fixture
def alice_changes(alice, demo_cluster):
    """alice, through the dashboard: creates a job with the wizard, suspends it, deletes it.
    Returns the job's name."""
    with demo_cluster.api_client("admin") as api:
        jobs = ClusterJobs(api)
        key = start(alice)
        name = unique("audit-view")
        fill(alice, key, name=name, namespace=NS, workers=1)
        jobs.track(NS, name)
        assert create(alice, key).status_code == 302
        wait_until(lambda: jobs.get(NS, name), 20, message="the created job")
        detail = reverse("training-job-detail", args=[NS, "mpijob", name])
        assert alice.post(detail + "suspend/").status_code == 302
        assert alice.post(detail + "delete/").status_code == 302
        yield name
        jobs.cleanup()


@pytest.fixture
def admin_client(db, demo_cluster):
    client = Client()
    sign_in(client, demo_cluster, "admin")
    return client


def test_the_audit_page_lists_alices_create_suspend_and_delete(alice_changes, admin_client):
    name = alice_changes
    response = admin_client.get(URL, {"user": "alice", "project": NS})
    assert response.status_code == 200
    html = response.content.decode()
    assert_valid(html)
    rows = [text_of(html, row_id) for row_id in ids_starting(html, "audit-")
            if row_id[len("audit-"):].isdigit()]
    mine = [r for r in rows if name in r]
    assert len(mine) == 3
    # newest first: delete, suspend, create; each a success, each linking to the job
    # actions as people read them (translated), the verb stays in the URL and the export
    # (a row reads: date, time, zone, user, action, ...: dates in the person's zone)
    assert [r.split()[4] for r in mine] == ["Delete", "Suspend", "Create"]
    assert '<option value="delete">Delete</option>' in html
    for r in mine:
        assert r.split()[3] == "alice" and "Success" in r and NS in r
    assert html.count(f'href="/jobs/{NS}/mpijob/{name}/"') == 3
    # the job is gone: its page says so
    gone = admin_client.get(f"/jobs/{NS}/mpijob/{name}/")
    assert gone.status_code == 404
    assert "no longer exists" in gone.content.decode()


def test_filters_select_by_user_project_action_outcome_and_dates(alice_changes, admin_client):
    name = alice_changes
    AuditEvent.objects.create(username="bob", groups=[], project="research", kind="PyTorchJob",
                              name="bert-classifier-ddp", verb="delete", outcome="denied",
                              detail="forbidden")

    def names(**params) -> list[str]:
        html = admin_client.get(URL, params).content.decode()
        return [text_of(html, i) for i in ids_starting(html, "audit-") if i[6:].isdigit()]

    assert len([r for r in names(user="alice", verb="create") if name in r]) == 1
    assert all(" Create " in f" {r} " for r in names(verb="create"))
    assert names(user="bob") and all(" bob " in f" {r} " for r in names(user="bob"))
    assert [r for r in names(outcome="denied") if "bert-classifier-ddp" in r]
    denied = admin_client.get(URL, {"outcome": "denied"}).content.decode()
    assert re.search(r'pf-m-orange dash-status" data-status="denied">.*?fa-ban.*?Denied</span>',
                     denied)
    assert not [r for r in names(outcome="success") if "bob" in r.split()]
    today = datetime.now(UTC).date()
    assert [r for r in names(user="alice", since=today.isoformat(), until=today.isoformat())
            if name in r]
    assert not names(user="alice", until=(today - timedelta(days=1)).isoformat())
    assert not names(user="alice", since=(today + timedelta(days=1)).isoformat())
    html = admin_client.get(URL, {"since": today.isoformat(),
                                  "until": (today - timedelta(days=2)).isoformat()}
                            ).content.decode()
    assert "“To” must be on or after “From”." in html
    assert "0 entries match these filters" in text_of(html, "audit-table")


def test_the_csv_export_applies_the_same_filters(alice_changes, admin_client):
    name = alice_changes
    AuditEvent.objects.create(username="bob", groups=[], project="research", kind="PyTorchJob",
                              name="bert-classifier-ddp", verb="delete", outcome="denied")
    page = admin_client.get(URL, {"user": "alice", "verb": "create"}).content.decode()
    assert f'href="{EXPORT}?user=alice&amp;verb=create"' in page
    rows = _export(admin_client, user="alice", verb="create")
    assert rows and all(r["user"] == "alice" and r["verb"] == "create" for r in rows)
    [row] = [r for r in rows if r["name"] == name]
    assert (row["project"], row["kind"], row["outcome"]) == (NS, "MPIJob", "success")
    assert row["job_url"] == f"/jobs/{NS}/mpijob/{name}/"
    assert datetime.fromisoformat(row["time"]).tzinfo is not None
    everything = _export(admin_client)
    assert len(everything) == AuditEvent.objects.count()
    assert {r["verb"] for r in everything if r["name"] == name} == {
        "create", "suspend", "delete"}


def test_the_export_defuses_spreadsheet_formulas(admin_client):
    AuditEvent.objects.create(username="=HYPERLINK(\"http://evil\")", groups=["+x"],
                              project="team-nlp", kind="MPIJob", name="job",
                              verb="delete", outcome="failed", detail="-2+3",
                              user_agent="@SUM(A1)", request_id="\tx")
    [row] = _export(admin_client, project="team-nlp", outcome="failed")
    assert row["user"] == "'=HYPERLINK(\"http://evil\")"
    assert (row["groups"], row["detail"], row["user_agent"], row["request_id"]) == (
        "'+x", "'-2+3", "'@SUM(A1)", "'\tx")
    assert spreadsheet_safe("plain") == "plain" and spreadsheet_safe(None) == ""


def test_pages_of_fifty(admin_client):
    AuditEvent.objects.bulk_create([
        AuditEvent(username="paging", project="team-nlp", kind="MPIJob", name=f"job-{i:03}",
                   verb="delete", outcome="success") for i in range(60)])
    first = admin_client.get(URL, {"user": "paging"}).content.decode()
    assert "60 entries match these filters" in first and "Page 1 of 2" in first
    assert len([i for i in ids_starting(first, "audit-") if i[6:].isdigit()]) == 50
    second = admin_client.get(URL, {"user": "paging", "page": 2}).content.decode()
    assert len([i for i in ids_starting(second, "audit-") if i[6:].isdigit()]) == 10
    assert 'href="?user=paging&amp;page=1"' in second
    # the export link leaves the page out: it exports every match
    assert f'href="{EXPORT}?user=paging"' in second
    assert len(_export(admin_client, user="paging")) == 60


def test_an_htmx_filter_change_gets_the_table_only(admin_client):
    response = admin_client.get(URL, {"verb": "delete"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="audit-table"') and "<html" not in html


@pytest.mark.django_db(transaction=True)  # the async view reads from another thread
def test_the_csv_streams_under_asgi(admin_client):
    """Under daphne the export is an async stream (rows read as they are sent)."""
    import asyncio

    from django.test import AsyncClient

    AuditEvent.objects.create(username="async", project="team-nlp", kind="MPIJob",
                              name="job", verb="delete", outcome="success")
    async_client = AsyncClient()
    async_client.cookies = admin_client.cookies

    async def fetch():
        response = await async_client.get(EXPORT, {"user": "async"})
        assert response.is_async
        return b"".join([chunk async for chunk in response.streaming_content])

    body = asyncio.run(fetch()).decode()
    assert body.splitlines()[0].startswith("time,user,groups,project")
    assert "async" in body.splitlines()[1]
