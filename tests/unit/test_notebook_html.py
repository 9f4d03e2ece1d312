"""The SDK in a notebook: a job, its status and its diagnosis as rich HTML (escaped, status
as colour + symbol + word), and the plain progress line `wait_for_completion` prints."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta

import pytest

from odh.training import MPIJob, ResourceSpec, i18n
from odh.training.diagnosis import Action, Culprit, Diagnosis, Evidence, Severity, Suggestion
from odh.training.jobs import notebook
from odh.training.jobstatus import JobStatus, Phase
from odh.training.logs.progress import EPOCH, STEP, Progress

NOW = datetime(2025, 1, 31, 12, 0, tzinfo=UTC)
EVIL = '<script>alert("x")</script> & <img src=x onerror=alert(1)>'


def status(phase: Phase = Phase.RUNNING, **kw) -> JobStatus:
    values = {"workers_running": 3, "workers_pending": 1, "workers_failed": 0,
              "start_time": NOW - timedelta(minutes=5), "completion_time": None,
              "workers_total": 4, "created_time": NOW - timedelta(minutes=6),
              "headline": "Training", **kw}
    return JobStatus(phase, **values)


def no_raw_markup(html: str) -> None:
    """Nothing of EVIL survives as markup: only its escaped text."""
    assert "<script" not in html and "<img" not in html and "onerror=alert(1)>" not in html
    assert "&lt;script&gt;" in html


@pytest.mark.parametrize(("phase", "symbol", "colour"), [
    (Phase.PENDING, "\u25f7", "#795600"), (Phase.RUNNING, "\u21bb", "#004080"),
    (Phase.SUCCEEDED, "\u2713", "#1e4f18"), (Phase.FAILED, "\u2717", "#7d1007"),
    (Phase.SUSPENDED, "\u2016", "#4f5255")])
def test_a_status_is_colour_symbol_and_word(phase, symbol, colour):
    html = status(phase)._repr_html_()
    badge = re.search(r'<span style="display: inline-block; color: ([^;]+);.*?</span> ([A-Za-z]+)'
                      r"</span>", html)
    assert badge and badge.group(1) == colour and badge.group(2) == phase.value
    assert f'<span aria-hidden="true">{symbol}</span>' in html  # read as its word


def test_a_status_says_its_workers_times_and_reason_escaped():
    html = status(Phase.FAILED, headline=EVIL, message=EVIL, reason="BackoffLimitExceeded",
                  completion_time=NOW)._repr_html_()
    no_raw_markup(html)
    assert "3 of 4 running, 1 pending, 0 failed" in html
    assert ">2025-01-31T11:55:00Z<" in html and ">2025-01-31T12:00:00Z<" in html
    assert ">5m 0s<" in html
    assert "BackoffLimitExceeded &lt;script&gt;" in html
    assert "Finished" not in status()._repr_html_()  # not finished: no empty row


def test_a_status_in_french():
    before = (i18n._translate, i18n._translate_plural)
    try:
        i18n.set_translator(lambda s: {"Running": "En cours", "Workers": "Workers FR"}.get(s, s))
        html = status()._repr_html_()
    finally:
        i18n.set_translator(*before)
    assert "</span> En cours</span>" in html and "Workers FR" in html


def test_a_diagnosis_shows_severity_cause_evidence_and_what_to_do_escaped():
    found = Diagnosis(
        "oom-killed", Severity.ERROR, Culprit.CONFIGURATION, f"Worker 2 {EVIL}",
        evidence=[Evidence("log", f"Killed {EVIL}", "Worker 2"), Evidence("event", "OOMKilled")],
        affected_labels=["Worker 2"],
        suggestions=[Suggestion(Action.ADVICE, "Give the Workers more memory"),
                     Suggestion(Action.ADVICE, "Look at its pods", command=f"oc get pods {EVIL}")],
        raw_reason="OOMKilled", raw_message=EVIL, unread=["the Launcher's log"])
    html = found._repr_html_()
    no_raw_markup(html)
    assert '<span aria-hidden="true">\u2717</span> Error</span>' in html
    assert "Your configuration" in html and "Worker 2" in html
    assert re.search(r"<li><span[^>]*>Worker 2: </span><code[^>]*>Killed &lt;script", html)
    steps = re.search(r"<ol[^>]*>(.*?)</ol>", html).group(1)
    assert steps.count("<li>") == 2 and "<code" in steps.split("<li>")[2]
    assert "the Launcher&#x27;s log" in html


def test_a_warning_is_not_an_error():
    html = Diagnosis("hang", Severity.WARNING, Culprit.UNKNOWN, "May be stuck")._repr_html_()
    assert '<span aria-hidden="true">\u26a0\ufe0e</span> Warning</span>' in html


def test_a_described_job_shows_what_it_runs_without_asking_the_cluster():
    job = MPIJob(name="bert", namespace="team-nlp", workers=4, image="quay.io/team/bert:1",
                 command=["horovodrun", "-np", "4", "python", "t.py", "--tag", EVIL],
                 worker_resources=ResourceSpec(cpu="8", memory="32Gi", gpus=1),
                 kubeconfig="/nonexistent/kubeconfig")  # a call would fail on it
    html = job._repr_html_()
    no_raw_markup(html)
    assert ">MPIJob bert<" in html and "Not created yet" in html
    assert "4 \u00d7 8 CPU, 32Gi, 1 GPU" in html
    assert ">Slots per worker<" in html


# -- progress as text --------------------------------------------------------------------------
def test_progress_says_the_epoch_share_and_time_left():
    progress = Progress(current=12, total=40, unit=EPOCH, fraction=0.3, eta_seconds=3723,
                        done=12, as_of=NOW)
    assert notebook.progress_words(status(), progress, NOW) == \
        "Epoch 12 of 40 (30%), about 1h 2m 3s left"
    assert notebook.progress_line("bert", status(), None) == "bert: Running \u00b7 Training"
    steps = Progress(current=1200, total=None, unit=STEP, fraction=None, eta_seconds=None)
    assert notebook.progress_words(status(), steps, NOW) == "Step 1,200"
    done = status(Phase.SUCCEEDED, headline="Completed in 1h 33m")
    assert notebook.progress_line("bert", done, progress) == \
        "bert: Succeeded \u00b7 Completed in 1h 33m"


def test_the_text_display_prints_a_line_only_when_it_changes():
    out = io.StringIO()
    shown = notebook.TextProgress("bert", out)
    shown(status(Phase.PENDING, headline="Waiting for 4 Workers"), None)
    shown(status(Phase.PENDING, headline="Waiting for 4 Workers"), None)
    shown(status(), None)
    assert out.getvalue().splitlines() == ["bert: Pending \u00b7 Waiting for 4 Workers",
                                           "bert: Running \u00b7 Training"]


def test_show_progress_picks_tqdm_where_installed_and_text_on_request():
    assert notebook.choose(True) == notebook.TQDM  # a test dependency here
    assert notebook.choose("text") == notebook.TEXT
    with pytest.raises(ValueError, match='True, False, "text" or "tqdm"'):
        notebook.choose("bar")
