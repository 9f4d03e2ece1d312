"""The Events tab's timeline in words: each pod's start-up one line, the cluster's rows kept
behind a disclosure."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

from django.urls import reverse

from odh.training.kinds import MPIJOB
from tests.html_checks import assert_valid
from training.live import pushes as live

GPT2 = reverse("training-job-detail", args=["team-nlp", "mpijob", "gpt2-finetune"])
BERT = reverse("training-job-detail", args=["team-nlp", "mpijob", "bert-large-pretrain"])


def _timeline(body: str) -> list[str]:
    """The timeline's lines, as text."""
    found = re.search(r'<ol class="dash-timeline__list"[^>]*>(.*?)</ol>', body, re.S)
    assert found, "no timeline"
    lines = re.findall(r"<li .*?</li>", found.group(1), re.S)
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", line)).split()) for line in lines]


def _rows(body: str) -> list[str]:
    tbody = re.search(r'<tbody id="job-event-rows"[^>]*>(.*?)</tbody>', body, re.S)
    assert tbody, "no events table"
    return re.findall(r"<tr .*?</tr>", tbody.group(1), re.S)


def test_a_running_jobs_events_read_as_a_timeline_with_the_raw_rows_kept(alice):
    body = alice.get(BERT, {"tab": "events"}).content.decode()
    assert_valid(body)
    lines, rows = _timeline(body), _rows(body)
    assert 'aria-label="Timeline of events, oldest first"' in body
    assert len(lines) < len(rows) / 2  # 8 Workers' start-ups, four or five rows each
    # a Worker's start is one line, in our words, with its type as icon and word
    [worker] = [line for line in lines if "Worker 3 started" in line]
    assert re.fullmatch(r"\S+( \S+)? ago Normal Worker 3 started \(placed on node \S+, "
                        r"image [^)]*, container created and started\) \d events", worker)
    assert [line for line in lines if "Launcher started" in line]
    assert not any("Pulled" in line or "master" in line.lower() for line in lines)
    # the job's own events and Kueue's stay lines of their own, in the cluster's words
    assert any("Job MPIJobCreated" in line for line in lines)
    assert any("Admitted by clusterQueue team-nlp-a100" in line for line in lines)
    # every row from the cluster, one disclosure away (a <summary> the keyboard reaches)
    raw = re.search(r'<details [^>]*id="job-events-raw"[^>]*>\s*<summary [^>]*>(.*?)</summary>'
                    r'.*?<tbody id="job-event-rows"', body, re.S)
    assert raw, "the rows are not in the disclosure"
    assert "All events from the cluster" in raw.group(1)
    assert f'id="job-events-count" class="pf-v6-c-badge pf-m-read">{len(rows)}<' in raw.group(1)


def test_the_timeline_keeps_to_the_tabs_filter(alice):
    body = alice.get(GPT2, {"tab": "events", "type": "Warning"}).content.decode()
    assert_valid(body)
    lines = _timeline(body)
    assert lines and all(" Warning " in f" {line} " for line in lines)
    assert any("BackoffLimitExceeded" in line for line in lines)
    assert 'data-event-filter="Warning"' in body
    assert "Warning events from the cluster" in body


def test_the_pushed_timeline_escapes_the_clusters_words(db):
    now = datetime(2024, 5, 1, 10, 5, tzinfo=UTC)
    job = {"metadata": {"name": "bert", "namespace": "team-nlp"}}
    sneaky = {"involvedObject": {"kind": "Pod", "name": "bert-worker-0"}, "type": "Warning",
              "reason": "<b>BackOff</b>", "message": '<img src=x onerror="alert(1)">',
              "lastTimestamp": "2024-05-01T10:00:00Z", "count": 3}
    pushed = live.render_event_timeline(MPIJOB, job, [], [sneaky], now)
    assert pushed.startswith('<div id="job-event-timeline" hx-swap-oob="true"')
    assert "<img" not in pushed and "<b>" not in pushed
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in pushed
    assert "Worker 0" in pushed and "\N{MULTIPLICATION SIGN}3" in pushed
    assert "3 times" in pushed  # what a screen reader says for it
