"""LogStreams: one upstream stream per pod, leases, refcounts, batching (a fake API server)."""

from __future__ import annotations

import queue
import threading

import pytest

from odh.training.logs.logstreams import (
    CAPACITY,
    DELETED,
    FINISHED,
    Deduper,
    LogStreams,
    StreamGone,
    normalise_timestamp,
    split_line,
)
from tests.waiting import wait_until

POD = ("team-nlp", "bert-worker-1", "worker")
OTHER = ("team-nlp", "bert-worker-2", "worker")


class FakeConnection:
    def __init__(self, backlog: list[str]) -> None:
        self.q: queue.Queue = queue.Queue()
        for line in backlog:
            self.q.put(line)
        self.closed = threading.Event()

    def lines(self):
        while True:
            item = self.q.get()
            if item is None:
                return
            yield item

    def close(self) -> None:
        self.closed.set()
        self.q.put(None)


class FakeSource:
    """A pod log per key; `write` appends, `end` ends the follow request (the server's)."""

    def __init__(self) -> None:
        self.logs: dict[tuple, list[str]] = {}
        self.connections: dict[tuple, list[FakeConnection]] = {}
        self.states: dict[tuple, str] = {}
        self.opens: list[tuple[tuple, int]] = []
        self.fail_opens = 0
        self.lock = threading.Lock()

    def open(self, key, tail_lines):
        with self.lock:
            self.opens.append((key, tail_lines))
            if self.fail_opens:
                self.fail_opens -= 1
                raise RuntimeError('container "worker" is waiting to start: ContainerCreating')
            if self.states.get(key) in (FINISHED, DELETED):
                raise StreamGone(self.states[key])
            backlog = self.logs.setdefault(key, [])[-tail_lines:] if tail_lines else []
            conn = FakeConnection(backlog)
            self.connections.setdefault(key, []).append(conn)
            return conn

    def state(self, key):
        return self.states.get(key, "running")

    def write(self, key, stamp: str, text: str) -> None:
        line = f"{stamp} {text}"
        with self.lock:
            self.logs.setdefault(key, []).append(line)
            for conn in self.connections.get(key, []):
                if not conn.closed.is_set():
                    conn.q.put(line)

    def end(self, key, state: str | None = None) -> None:
        with self.lock:
            if state:
                self.states[key] = state
            for conn in self.connections.get(key, []):
                conn.q.put(None)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def setup():
    source = FakeSource()
    published: list[tuple[tuple, dict]] = []
    lock = threading.Lock()

    def publish(key, message):
        with lock:
            published.append((key, message))

    clock = Clock()
    streams = LogStreams(source, publish, clock=clock, flush_interval=0.01,
                         backoff=(0.01, 0.05))
    yield streams, source, published, clock
    streams.stop()


def lines_of(published, key=POD):
    return [tuple(line) for k, m in list(published) if k == key and m["type"] == "hub.log"
            for line in m["lines"]]


def stamp(i: int) -> str:
    return f"2024-05-01T10:00:{i:02d}.000000000Z"


def test_two_subscribers_share_one_stream(setup):
    streams, source, published, _ = setup
    assert streams.subscribe(POD, "viewer-a") is True
    assert streams.subscribe(POD, "viewer-b") is False
    assert streams.active_streams() == 1
    assert streams.subscribers(POD) == 2
    wait_until(lambda: streams.open_connections() == 1)
    source.write(POD, stamp(1), "Accepted publickey for root")
    source.write(POD, stamp(2), "Received disconnect")
    wait_until(lambda: streams.flush() or len(lines_of(published)) == 2)
    assert lines_of(published) == [(stamp(1), "Accepted publickey for root"),
                                   (stamp(2), "Received disconnect")]
    assert len(source.opens) == 1  # one upstream request for both viewers


def test_the_last_one_leaving_closes_the_stream(setup):
    streams, source, _, _ = setup
    streams.subscribe(POD, "a")
    streams.subscribe(POD, "b")
    wait_until(lambda: streams.open_connections() == 1)
    streams.unsubscribe(POD, "a")
    assert streams.active_streams() == 1
    streams.unsubscribe(POD, "b")
    assert streams.active_streams() == 0
    wait_until(lambda: streams.open_connections() == 0)
    assert source.connections[POD][0].closed.is_set()


def test_unsubscribe_all_drops_every_lease_of_a_viewer(setup):
    streams, _, _, _ = setup
    streams.subscribe(POD, "a")
    streams.subscribe(OTHER, "a")
    streams.subscribe(OTHER, "b")
    streams.unsubscribe_all("a")
    assert streams.active_streams() == 1
    assert streams.subscribers(OTHER) == 1


def test_leases_expire_unless_renewed(setup):
    streams, _, _, clock = setup
    streams.subscribe(POD, "crashed-web-process")
    streams.subscribe(OTHER, "alive")
    clock.now += 40
    streams.renew(OTHER, "alive")
    clock.now += 30  # 70 s after the first lease, 30 s after the renewal
    assert streams.expire() == [POD]
    assert streams.active_streams() == 1
    assert streams.subscribers(OTHER) == 1
    wait_until(lambda: streams.open_connections() <= 1)


def test_renew_after_a_hub_restart_subscribes_again(setup):
    streams, _, _, _ = setup
    assert streams.renew(POD, "a") is True  # the hub never heard of it: a new stream
    assert streams.active_streams() == 1


def test_a_new_stream_starts_with_a_tail_and_viewers_dedupe(setup):
    streams, source, published, _ = setup
    for i in range(150):
        source.write(POD, f"2024-05-01T10:{i // 60:02d}:{i % 60:02d}Z", f"line {i}")
    streams.subscribe(POD, "a")
    got = wait_until(lambda: streams.flush() or (
        lines_of(published) if len(lines_of(published)) == 100 else None))
    assert got[0] == ("2024-05-01T10:00:50.000000000Z", "line 50")
    assert source.opens == [(POD, 100)]
    # the first message says its lines read the log again from some way back
    assert published[0][1]["reread"] is True
    assert all(m["reread"] is False for _, m in published[1:])


def test_lines_arrive_in_order_in_batches(setup):
    streams, source, published, _ = setup
    streams.start()
    streams.subscribe(POD, "a")
    wait_until(lambda: streams.open_connections() == 1)
    for i in range(1200):
        source.write(POD, f"2024-05-01T10:00:00.{i:09d}Z", f"n={i}")
    wait_until(lambda: len(lines_of(published)) == 1200, timeout=10)
    assert [t for _, t in lines_of(published)] == [f"n={i}" for i in range(1200)]
    assert all(len(m["lines"]) <= 500 for _, m in published)


def test_a_pod_that_ends_closes_its_stream_and_says_so(setup):
    streams, source, published, _ = setup
    streams.start()
    streams.subscribe(POD, "a")
    wait_until(lambda: streams.open_connections() == 1)
    source.write(POD, stamp(1), "Training complete")
    source.end(POD, FINISHED)
    wait_until(lambda: streams.active_streams() == 0)
    wait_until(lambda: any(m["type"] == "hub.log_end" for _, m in published))
    kinds = [m["type"] for _, m in published]
    assert kinds[-1] == "hub.log_end"
    assert published[-1][1] == {"type": "hub.log_end", "namespace": "team-nlp",
                                "pod": "bert-worker-1", "container": "worker",
                                "reason": FINISHED}
    assert lines_of(published) == [(stamp(1), "Training complete")]
    assert streams.open_connections() == 0


def test_a_dropped_connection_is_opened_again_without_repeating_lines(setup):
    streams, source, published, _ = setup
    streams.start()
    streams.subscribe(POD, "a")
    wait_until(lambda: streams.open_connections() == 1)
    source.write(POD, stamp(1), "one")
    source.write(POD, stamp(2), "two")
    source.write(POD, stamp(2), "two")  # the same text twice at one time: both are lines
    wait_until(lambda: len(lines_of(published)) == 3)
    source.end(POD)  # the API server restarted; the pod still runs
    wait_until(lambda: len(source.opens) == 2)
    assert source.opens[1] == (POD, 1000)
    wait_until(lambda: streams.open_connections() == 1)
    source.write(POD, stamp(3), "three")
    wait_until(lambda: len(lines_of(published)) == 4)
    assert [t for _, t in lines_of(published)] == ["one", "two", "two", "three"]
    # "three" began the second reading (what it repeated was dropped here already)
    assert [m["reread"] for _, m in published if m["lines"]][-1] is True


def test_a_container_not_started_yet_is_tried_again(setup):
    streams, source, published, _ = setup
    streams.start()
    source.fail_opens = 2
    streams.subscribe(POD, "a")
    wait_until(lambda: streams.open_connections() == 1)
    assert len(source.opens) == 3
    source.write(POD, stamp(1), "Server listening on 0.0.0.0 port 22.")
    wait_until(lambda: lines_of(published) == [(stamp(1), "Server listening on 0.0.0.0 port 22.")])


def test_a_deleted_pod_ends_at_once(setup):
    streams, source, published, _ = setup
    streams.start()
    source.states[POD] = DELETED
    streams.subscribe(POD, "a")
    wait_until(lambda: streams.active_streams() == 0)
    wait_until(lambda: published)
    assert published[-1][1]["reason"] == DELETED


def test_capacity(setup):
    streams, _, published, _ = setup
    streams.max_streams = 1
    assert streams.subscribe(POD, "a")
    assert not streams.subscribe(OTHER, "a")
    streams.flush()
    assert published[-1] == (OTHER, {"type": "hub.log_end", "namespace": "team-nlp",
                                     "pod": "bert-worker-2", "container": "worker",
                                     "reason": CAPACITY})


def test_stop_closes_everything(setup):
    streams, _, _, _ = setup
    streams.start()
    streams.subscribe(POD, "a")
    streams.subscribe(OTHER, "b")
    wait_until(lambda: streams.open_connections() == 2)
    streams.stop()
    assert streams.active_streams() == 0
    wait_until(lambda: streams.open_connections() == 0)
    assert not streams.subscribe(POD, "a")


# -- timestamps and dedupe ---------------------------------------------------------------------
@pytest.mark.parametrize(("raw", "expected"), [
    ("2024-05-01T10:00:00Z", "2024-05-01T10:00:00.000000000Z"),
    ("2024-05-01T10:00:00.5Z", "2024-05-01T10:00:00.500000000Z"),
    ("2024-05-01T10:00:00.123456789Z", "2024-05-01T10:00:00.123456789Z"),
    ("2024-05-01T10:00:00.1+00:00", "2024-05-01T10:00:00.100000000Z"),
    ("not a time", "not a time"),
])
def test_normalise_timestamp(raw, expected):
    assert normalise_timestamp(raw) == expected


def test_normalised_timestamps_compare_as_strings():
    trimmed = ["2024-05-01T10:00:00Z", "2024-05-01T10:00:00.05Z", "2024-05-01T10:00:00.5Z"]
    assert sorted(normalise_timestamp(t) for t in reversed(trimmed)) == [
        normalise_timestamp(t) for t in trimmed]


def test_split_line():
    assert split_line("2024-05-01T10:00:00.5Z hello world\n") == (
        "2024-05-01T10:00:00.500000000Z", "hello world")
    assert split_line("2024-05-01T10:00:00Z ") == ("2024-05-01T10:00:00.000000000Z", "")
    assert split_line("no stamp") == ("", "no stamp")


def test_deduper_multiset_at_one_time():
    d = Deduper()
    first = [("t1", "a"), ("t2", "-----"), ("t2", ""), ("t2", ""), ("t2", "-----")]
    assert [d.accept(*x) for x in first] == [True] * 5
    d.rewind()  # read again from some way back, then new lines
    again = first[1:] + [("t2", ""), ("t3", "b")]
    assert [d.accept(*x) for x in again] == [False, False, False, False, True, True]
    assert not d.accept("t1", "a")
    assert d.accept("", "no time")


@pytest.mark.parametrize(("pod", "state"), [
    ({"status": {"phase": "Succeeded"}}, FINISHED),
    ({"status": {"phase": "Failed"}}, FINISHED),
    ({"status": {"phase": "Running", "containerStatuses": [
        {"name": "worker", "state": {"running": {}}}]}}, "running"),
    ({"status": {"phase": "Pending", "containerStatuses": [
        {"name": "worker", "state": {"waiting": {"reason": "ContainerCreating"}}}]}}, "waiting"),
    ({"spec": {"restartPolicy": "Never"}, "status": {"phase": "Running", "containerStatuses": [
        {"name": "worker", "state": {"terminated": {"exitCode": 0}}}]}}, FINISHED),
    ({"spec": {"restartPolicy": "OnFailure"}, "status": {"phase": "Running", "containerStatuses": [
        {"name": "worker", "state": {"terminated": {"exitCode": 1}}}]}}, "waiting"),
])
def test_pod_log_state(pod, state):
    from odh.training.logs.logstreams import pod_log_state
    assert pod_log_state(pod, "worker") == state


def test_a_reading_begun_keeps_its_mark_until_its_lines_come(setup):
    streams, source, published, _ = setup
    streams.subscribe(POD, "a")
    wait_until(lambda: streams.open_connections() == 1)
    streams.flush()  # nothing yet: no message, but the mark stays
    assert published == []
    source.write(POD, stamp(1), "first")
    wait_until(lambda: streams.flush() or lines_of(published))
    assert published[0][1]["reread"] is True


# -- one person cannot take every stream ------------------------------------------------------
def _pod(i: int) -> tuple:
    return ("team-nlp", f"job-worker-{i}", "worker")


def test_one_owner_follows_at_most_their_share_of_pods(setup):
    streams, _, published, _ = setup
    streams.max_streams_per_owner = 3
    # one person, from two tabs (two subscribers, one owner)
    assert streams.subscribe(_pod(0), "tab-1", owner="person-a")
    assert streams.subscribe(_pod(1), "tab-2", owner="person-a")
    assert streams.subscribe(_pod(2), "tab-1", owner="person-a")
    assert not streams.subscribe(_pod(3), "tab-2", owner="person-a")  # a 4th pod: refused
    assert streams.active_streams() == 3
    assert streams.stats()["refused"] == 1
    streams.flush()
    assert published[-1] == (_pod(3), {"type": "hub.log_end", "namespace": "team-nlp",
                                       "pod": "job-worker-3", "container": "worker",
                                       "reason": CAPACITY})
    # the same pods again (renewals, another tab of theirs) are not more pods
    streams.renew(_pod(0), "tab-1", owner="person-a")
    assert not streams.subscribe(_pod(1), "tab-3", owner="person-a")
    assert streams.subscribers(_pod(1)) == 2
    assert streams.stats()["refused"] == 1
    # someone else is not limited by them
    assert streams.subscribe(_pod(3), "tab-9", owner="person-b")
    assert streams.active_streams() == 4


def test_an_owner_at_the_limit_does_not_join_anothers_stream_nor_end_it(setup):
    streams, _, published, _ = setup
    streams.max_streams_per_owner = 1
    assert streams.subscribe(_pod(0), "a", owner="person-a")
    assert streams.subscribe(_pod(1), "b", owner="person-b")
    assert not streams.subscribe(_pod(1), "a2", owner="person-a")
    assert streams.subscribers(_pod(1)) == 1  # person-a's lease was not taken
    streams.flush()
    assert not [m for k, m in published if m["type"] == "hub.log_end"]  # b's goes on


def test_giving_pods_up_frees_the_owners_share(setup):
    streams, _, _, clock = setup
    streams.max_streams_per_owner = 2
    streams.subscribe(_pod(0), "tab-1", owner="person-a")
    streams.subscribe(_pod(1), "tab-1", owner="person-a")
    assert not streams.subscribe(_pod(2), "tab-1", owner="person-a")
    streams.unsubscribe(_pod(0), "tab-1")
    assert streams.subscribe(_pod(2), "tab-1", owner="person-a")
    clock.now += streams.lease_seconds + 1  # both leases run out
    streams.expire()
    assert streams.subscribe(_pod(3), "tab-2", owner="person-a")
    assert streams.subscribe(_pod(4), "tab-2", owner="person-a")


def test_without_an_owner_each_subscriber_counts_as_its_own(setup):
    streams, _, _, _ = setup
    streams.max_streams_per_owner = 1
    assert streams.subscribe(_pod(0), "viewer-a")
    assert not streams.subscribe(_pod(1), "viewer-a")
    assert streams.subscribe(_pod(1), "viewer-b")
