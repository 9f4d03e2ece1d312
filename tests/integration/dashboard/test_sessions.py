"""People's OpenShift tokens in their sessions: sealed in the session row, a row that has
been tampered with signs the person out, and expired sessions are deleted daily."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.urls import reverse
from django.utils import timezone

from tests.dashboard_support import session_token
from tests.waiting import wait_until
from training.accounts import session as cluster_session

JOBS = reverse("training-job-list")


def _row(client) -> Session:
    return Session.objects.get(pk=client.session.session_key)


def test_the_session_row_does_not_hold_the_token(alice):
    token = session_token(alice)
    assert token.startswith("sha256~")
    row = _row(alice)
    assert token not in row.session_data
    assert token[len("sha256~"):] not in row.session_data
    decoded = row.get_decoded()  # what anyone reading the table could decode
    assert token not in repr(decoded)
    sealed = decoded[cluster_session.KEY][cluster_session.SEALED]
    assert cluster_session.unseal(sealed) == token
    assert alice.get(JOBS).status_code == 200  # and the dashboard still works with it


def test_a_tampered_token_signs_the_person_out(alice):
    session = alice.session
    sealed = session[cluster_session.KEY][cluster_session.SEALED]
    session[cluster_session.KEY] = {**session[cluster_session.KEY],
                                    cluster_session.SEALED: sealed[:-6] + "AAAAAA"}
    session.save()
    r = alice.get(JOBS)
    assert r.status_code == 302
    assert r["Location"].startswith(reverse("training-login"))


def test_a_plain_token_from_before_sealing_is_no_token(alice):
    session = alice.session
    token = session_token(alice)
    session[cluster_session.KEY] = {"token": token, "expires_at": None, "username": "alice",
                                    "groups": []}
    session.save()
    assert alice.get(JOBS).status_code == 302


def test_a_token_sealed_under_another_secret_key_does_not_open(settings):
    sealed = cluster_session.seal("sha256~abc")
    assert cluster_session.unseal(sealed) == "sha256~abc"
    old_key = settings.SECRET_KEY
    settings.SECRET_KEY = "another-secret-key-entirely-" + "x" * 30
    assert cluster_session.unseal(sealed) == ""
    # ...unless the old key is still a fallback (rotating SECRET_KEY)
    settings.SECRET_KEY_FALLBACKS = [old_key]
    assert cluster_session.unseal(sealed) == "sha256~abc"


@pytest.mark.parametrize("value", [None, "", 42, "not-fernet", "gAAAA" + "A" * 80])
def test_unsealing_garbage_gives_no_token(value):
    assert cluster_session.unseal(value) == ""


# -- expired sessions are deleted --------------------------------------------------------------
def _session_rows(expired: int, live: int) -> tuple[list[str], list[str]]:
    from django.contrib.sessions.backends.db import SessionStore

    def make(expires_in: timedelta) -> str:
        store = SessionStore()
        store[cluster_session.KEY] = cluster_session.session_data("sha256~secret", 60,
                                                                  "someone", [])
        store.create()
        Session.objects.filter(pk=store.session_key).update(
            expire_date=timezone.now() + expires_in)
        return store.session_key

    return ([make(-timedelta(hours=1)) for _ in range(expired)],
            [make(timedelta(hours=1)) for _ in range(live)])


def test_a_sweep_deletes_the_expired_sessions_only(db):
    from training.live.hub.sessions import SessionSweeper

    expired, live = _session_rows(expired=3, live=2)
    sweeper = SessionSweeper()
    sweeper.sweep()
    remaining = set(Session.objects.values_list("session_key", flat=True))
    assert not remaining & set(expired)
    assert set(live) <= remaining
    assert sweeper.stats()["sweeps"] == 1


@pytest.mark.django_db(transaction=True)  # the sweeper's thread has its own connection
def test_the_hubs_sweeper_runs_in_its_thread_and_keeps_going_after_a_failure():
    from training.live.hub.sessions import SessionSweeper, clear_expired_sessions

    expired, live = _session_rows(expired=2, live=1)
    calls = []

    def clear():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("database away")
        clear_expired_sessions()

    sweeper = SessionSweeper(clear, first_after=0.01, every=0.01).start()
    try:
        wait_until(lambda: sweeper.sweeps >= 1, 10, message="a sweep after the failed one")
    finally:
        sweeper.stop()
    assert sweeper.errors == 1 and "database away" in sweeper.last_error
    remaining = set(Session.objects.values_list("session_key", flat=True))
    assert not remaining & set(expired) and set(live) <= remaining


def test_the_hub_of_runwatcher_and_of_the_web_process_sweeps_sessions(db):
    from training.live.hub.building import build_hub
    from training.live.hub.sessions import SWEEP_SECONDS, SessionSweeper

    hub = build_hub()
    try:
        assert isinstance(hub.sessions, SessionSweeper)
        assert hub.sessions.every == SWEEP_SECONDS == 24 * 3600
    finally:
        hub.publisher.close()
