"""Access reviews for live updates, cached briefly per person (odh.training.cluster.access)."""

from __future__ import annotations

import pytest

from odh.training import errors
from odh.training.cluster import access


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeClient:
    """Answers can_i from a table; counts the reviews it is asked."""

    def __init__(self, allowed: set[str] | None = None, unauthorized: bool = False) -> None:
        self.allowed = allowed or set()
        self.unauthorized = unauthorized
        self.asked: list[tuple] = []

    def can_i(self, verb, resource, group="", namespace="", name="", subresource=""):
        self.asked.append((verb, resource, group, namespace, subresource))
        if self.unauthorized:
            raise errors.Unauthorized("Unauthorized", status=401)
        return namespace in self.allowed


def test_an_answer_is_reused_until_it_expires():
    clock = FakeClock()
    cache = access.AccessCache(ttl=60, clock=clock)
    client = FakeClient({"team-nlp"})
    assert access.allowed(client, "tok-a", "team-nlp", access.GET_JOBS, cache)
    clock.now += 59
    assert access.allowed(client, "tok-a", "team-nlp", access.GET_JOBS, cache)
    assert client.asked == [("get", "mpijobs", "kubeflow.org", "team-nlp", "")]
    clock.now += 1
    client.allowed.clear()  # revoked meanwhile
    assert not access.allowed(client, "tok-a", "team-nlp", access.GET_JOBS, cache)
    assert len(client.asked) == 2


def test_answers_are_per_person_project_and_question():
    cache = access.AccessCache(ttl=60, clock=FakeClock())
    client = FakeClient({"team-nlp"})
    access.allowed(client, "tok-a", "team-nlp", access.GET_JOBS, cache)
    access.allowed(client, "tok-b", "team-nlp", access.GET_JOBS, cache)
    access.allowed(client, "tok-a", "research", access.GET_JOBS, cache)
    logs = access.Access("get", "pods", "", "log")
    access.allowed(client, "tok-a", "team-nlp", logs, cache)
    assert len(client.asked) == 4


def test_a_refusal_is_cached_too():
    cache = access.AccessCache(ttl=60, clock=FakeClock())
    client = FakeClient()
    assert not access.allowed(client, "tok", "team-nlp", access.GET_JOBS, cache)
    assert not access.allowed(client, "tok", "team-nlp", access.GET_JOBS, cache)
    assert len(client.asked) == 1


def test_an_expired_token_raises_and_is_not_cached():
    cache = access.AccessCache(ttl=60, clock=FakeClock())
    client = FakeClient(unauthorized=True)
    for _ in range(2):
        with pytest.raises(errors.Unauthorized):
            access.allowed(client, "tok", "team-nlp", access.GET_JOBS, cache)
    assert len(client.asked) == 2


def test_the_cache_holds_no_token_and_stays_bounded():
    clock = FakeClock()
    cache = access.AccessCache(ttl=60, clock=clock, max_entries=3)
    client = FakeClient({"ns"})
    for i in range(5):
        clock.now += 1
        access.allowed(client, f"secret-token-{i}", "ns", access.GET_JOBS, cache)
    keys = list(cache._answers)
    assert len(keys) == 3
    assert not any("secret-token" in str(k) for k in keys)
    # the oldest went first
    assert access.identity("secret-token-4") in {k[0] for k in keys}
    assert access.identity("secret-token-0") not in {k[0] for k in keys}


def test_viewers_asking_at_once_share_one_review():
    import threading

    arrived = threading.Barrier(8)
    release = threading.Event()

    entered = threading.Event()

    class SlowClient(FakeClient):
        def can_i(self, *args, **kwargs):
            entered.set()
            release.wait(5)
            return super().can_i(*args, **kwargs)

    cache = access.AccessCache(ttl=60, clock=FakeClock())
    client = SlowClient({"team-nlp"})
    answers = []

    def viewer():
        arrived.wait(5)
        answers.append(access.allowed(client, "tok-a", "team-nlp", access.GET_JOBS, cache))

    threads = [threading.Thread(target=viewer) for _ in range(8)]
    for t in threads:
        t.start()
    assert entered.wait(5)  # one viewer is asking; the others arrive meanwhile
    release.set()
    for t in threads:
        t.join(10)
    assert answers == [True] * 8
    assert len(client.asked) == 1


def test_no_lock_is_kept_for_a_question_once_it_is_answered():
    """One lock per question asked would grow with every person and project until the
    answers filled up: a question's lock goes with its last caller."""
    clock = FakeClock()
    cache = access.AccessCache(ttl=60, clock=clock)
    client = FakeClient({"ns-1"})
    for i in range(50):
        access.allowed(client, f"tok-{i}", f"ns-{i % 3}", access.GET_JOBS, cache)
    assert cache.questions_being_asked() == 0
    # a refused token (raises) leaves no lock behind either
    with pytest.raises(errors.Unauthorized):
        access.allowed(FakeClient(unauthorized=True), "tok-x", "ns", access.GET_JOBS, cache)
    assert cache.questions_being_asked() == 0


def test_the_lock_stays_while_others_wait_for_the_answer():
    import threading

    release = threading.Event()
    entered = threading.Event()

    class SlowClient(FakeClient):
        def can_i(self, *args, **kwargs):
            entered.set()
            release.wait(5)
            return super().can_i(*args, **kwargs)

    cache = access.AccessCache(ttl=60, clock=FakeClock())
    client = SlowClient({"team-nlp"})
    threads = [threading.Thread(target=access.allowed, args=(
        client, "tok-a", "team-nlp", access.GET_JOBS, cache)) for _ in range(3)]
    for t in threads:
        t.start()
    assert entered.wait(5)
    assert cache.questions_being_asked() == 1  # one question, however many wait for it
    release.set()
    for t in threads:
        t.join(10)
    assert len(client.asked) == 1
    assert cache.questions_being_asked() == 0


def test_a_fresh_question_asks_now_and_keeps_the_new_answer():
    cache = access.AccessCache(ttl=60, clock=FakeClock())
    client = FakeClient({"team-nlp"})
    assert access.allowed(client, "tok-a", "team-nlp", access.GET_JOBS, cache)
    client.allowed = set()  # the role is taken away
    assert access.allowed(client, "tok-a", "team-nlp", access.GET_JOBS, cache)  # kept
    assert not access.allowed(client, "tok-a", "team-nlp", access.GET_JOBS, cache,
                              fresh=True)
    assert not access.allowed(client, "tok-a", "team-nlp", access.GET_JOBS, cache)
    assert len(client.asked) == 2
