"""The process that hosts the watch hub chooses its threads' turns at the GIL (build_hub,
LIVE_SWITCH_INTERVAL_MS); a Hub made or started elsewhere (a test, a library) leaves the
interpreter as it found it."""

from __future__ import annotations

import sys

import pytest

from training.live.hub.building import build_hub


@pytest.fixture
def switch_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    yield
    sys.setswitchinterval(before)


def test_the_hubs_process_takes_the_configured_turns(settings, switch_interval):
    settings.LIVE_SWITCH_INTERVAL_MS = 2
    build_hub(record_history=False)
    assert sys.getswitchinterval() == pytest.approx(0.002)


def test_shorter_turns_already_chosen_are_kept(settings, switch_interval):
    sys.setswitchinterval(0.0005)
    settings.LIVE_SWITCH_INTERVAL_MS = 1
    build_hub(record_history=False)
    assert sys.getswitchinterval() == pytest.approx(0.0005)
