"""A connecting socket's snapshot comes from the embedded hub's index: after the access
review, no API read per viewer (training/hub/snapshots.py); without a hub, from the API."""

from __future__ import annotations

import re
from collections import Counter

import requests

import training.hub.snapshots
from tests.integration.hub.conftest import NS
from training import subscriptions
from training.subscriptions import ViewState

BERT = f"{NS}/mpijob/bert-large-pretrain"


def reads(sim) -> Counter:
    """GET and LIST requests the API server has answered, by resource."""
    text = requests.get(f"{sim.api_url}/metrics", verify=str(sim.ca_file), timeout=10,
                        headers={"Authorization": f"Bearer {sim.token('admin')}"}).text
    found = Counter()
    for labels, value in re.findall(r"^apiserver_request_total\{([^}]*)\} (\S+)$", text, re.M):
        seen = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if seen.get("verb") in ("GET", "LIST"):
            found[seen.get("resource", "")] += int(float(value))
    return found


def _snapshot(token: str, kind: str, value: str) -> list:
    subs = [subscriptions.parse(kind, value)]
    view = ViewState()
    subscriptions.check_access(token, subs, view)  # the reviews: not what is counted
    return subs, view


def test_a_jobs_snapshot_reads_nothing_from_the_api(hub, demo):
    token = demo.token("alice")
    subs, view = _snapshot(token, "job", BERT)
    before = reads(demo)
    frames = subscriptions.snapshots(token, subs, view)
    after = reads(demo)
    assert {r: after[r] - before[r] for r in ("mpijobs", "pods", "events")} == {
        "mpijobs": 0, "pods": 0, "events": 0}
    assert any("job-header-status" in str(f) and "Running" in str(f) for f in frames)


def test_a_projects_snapshot_reads_nothing_from_the_api(hub, demo):
    token = demo.token("alice")
    subs, view = _snapshot(token, "ns", NS)
    before = reads(demo)
    frames = subscriptions.snapshots(token, subs, view)
    after = reads(demo)
    assert after["mpijobs"] - before["mpijobs"] == 0 and after["pods"] - before["pods"] == 0
    assert any("job-row-team-nlp-mpijob-bert-large-pretrain" in str(f) for f in frames)


def test_without_a_hub_the_snapshot_is_read_from_the_api(demo, monkeypatch):
    monkeypatch.setattr(training.hub.snapshots, "get_hub", lambda: None)
    token = demo.token("alice")
    subs, view = _snapshot(token, "job", BERT)
    before = reads(demo)
    frames = subscriptions.snapshots(token, subs, view)
    assert reads(demo)["mpijobs"] - before["mpijobs"] == 1
    assert any("Running" in str(f) for f in frames)
