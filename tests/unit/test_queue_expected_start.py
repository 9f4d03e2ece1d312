"""When a queued job should start (odh/training/queues/standing.py `expected_start`)."""

from __future__ import annotations

from decimal import Decimal as D

from odh.training.queues.standing import Running, expected_start


def test_it_starts_now_when_it_fits():
    assert expected_start(D(8), D(8), [], []).seconds == 0.0


def test_it_waits_for_the_first_running_jobs_to_end():
    running = [Running("a", D(8), 600.0), Running("b", D(8), 300.0)]
    # needs 16 with 0 free: b ends at 300 s (8 free), a at 600 s (16 free)
    assert expected_start(D(16), D(0), running, []).seconds == 600.0
    assert expected_start(D(8), D(0), running, []).seconds == 300.0


def test_the_jobs_ahead_go_first_and_keep_what_they_take():
    running = [Running("a", D(8), 100.0), Running("b", D(8), 200.0)]
    # one job ahead needs 8: it takes a's 8 at 100 s; ours (8) waits for b at 200 s
    assert expected_start(D(8), D(0), running, [D(8)]).seconds == 200.0


def test_unknown_when_an_end_that_matters_cannot_be_estimated():
    running = [Running("a", D(8), 100.0), Running("hang", D(8), None)]
    result = expected_start(D(16), D(0), running, [])
    assert result.seconds is None
    assert result.assumptions == ["unknown: the end of hang cannot be estimated"]
    # an unknown end that does not matter: a's release is enough
    assert expected_start(D(8), D(0), running, []).seconds == 100.0


def test_a_job_that_can_never_fit_has_no_expected_start():
    result = expected_start(D(32), D(8), [Running("a", D(8), 10.0)], [])
    assert result.seconds is None and "can never fit" in result.assumptions[0]


def test_unknown_when_it_waits_for_a_job_ahead_to_finish():
    # the job ahead takes all 16 once a ends; ours fits only after that one ends
    result = expected_start(D(16), D(8), [Running("a", D(8), 600.0)], [D(16)])
    assert result.seconds is None
    assert "wait for jobs ahead of it to finish" in result.assumptions[0]
