"""The hub's probe of the API server (training/live/hub/probe.py): the watches' own traffic
proves the server is there; `GET /version` is asked only when they were all quiet."""

from __future__ import annotations

import time

from odh.training import errors
from tests.waiting import wait_until
from training.live.hub.probe import ClusterProbe


def _unreachable():
    raise errors.ClusterUnavailable("the API server did not answer")


def test_a_watch_heard_lately_is_answer_enough():
    probe = ClusterProbe(_unreachable, lambda: None, every=0.05, silent_after=0.2,
                         heard=time.monotonic).start()
    try:
        wait_until(lambda: probe.checks >= 5, 5, message="five checks")
        assert probe.asked == 0 and not probe.silent
    finally:
        probe.stop()


def test_quiet_watches_make_it_ask_and_an_unanswered_question_makes_it_silent():
    recovered = []
    heard = [0.0]
    probe = ClusterProbe(_unreachable, lambda: recovered.append(1), every=0.05,
                         silent_after=0.2, heard=lambda: heard[0]).start()
    try:
        wait_until(lambda: probe.silent and probe.asked >= 2, 5, message="silent")
        assert not recovered
        heard[0] = time.monotonic() + 60  # a watch hears the server again
        wait_until(lambda: recovered and not probe.silent, 5, message="recovered")
    finally:
        probe.stop()
