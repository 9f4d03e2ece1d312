"""Advice from history in the browser: a job like the project's past runs is offered the
size they suggest on the Resources step, and one click writes it into the form."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest
from playwright.sync_api import expect

from tests.advice_history import COMMAND, IMAGE
from tests.e2e.conftest import dashboard_on, sign_in
from tests.simcluster_process import ROOT

NS = "team-nlp"


@pytest.fixture(scope="module")
def dashboard_with_history(e2e_cluster, tmp_path_factory):
    """A dashboard of its own whose database remembers four similar runs in team-nlp
    (tests/advice_history.py), written there as the watcher would have."""
    workdir = tmp_path_factory.mktemp("advice-dashboard")
    with dashboard_on(e2e_cluster, workdir) as url:
        env = dict(os.environ, DJANGO_SETTINGS_MODULE="dashboard.settings",
                   DATABASE_URL=f"sqlite:///{workdir / 'db.sqlite3'}", PYTHONPATH=str(ROOT))
        subprocess.run([sys.executable, "manage.py", "shell", "-c",
                        f"from tests.advice_history import seed; seed({NS!r})"],
                       cwd=ROOT, env=env, check=True, timeout=120)
        yield url


def test_the_wizard_offers_the_size_similar_runs_suggest_and_applies_it(
        page, dashboard_with_history, screenshot):
    sign_in(page, dashboard_with_history, "alice", next_path="/jobs/new/")
    page.get_by_role("button", name="Create an MPIJob").click()
    page.get_by_label("Project").select_option(NS)
    page.get_by_label("Job name").fill(f"advice-{uuid.uuid4().hex[:5]}")
    page.get_by_label("Training image").fill(IMAGE)
    page.get_by_label("Command").fill(COMMAND)
    page.get_by_role("button", name="Next").click()

    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    expect(page.get_by_label("Memory per worker")).not_to_have_value("48Gi")
    advice = page.get_by_role("region", name="Advice from similar runs")
    expect(advice).to_contain_text("Similar runs peaked at 41Gi per Worker: 48Gi is enough.")
    expect(advice).to_contain_text("4 similar runs in this project: 4 Succeeded, 0 Failed.")
    screenshot("wizard-advice")
    advice.get_by_role("button", name="Use 48Gi per Worker").click()

    expect(page.get_by_text("Applied: Use 48Gi per Worker.")).to_be_visible()
    expect(page.get_by_label("Memory per worker")).to_have_value("48Gi")
    expect(page.get_by_role("region", name="Advice from similar runs")).not_to_contain_text(
        "Use 48Gi per Worker")
    screenshot("wizard-advice-applied")
