"""Reading logs without trusting their size (odh.training.cluster.client): a followed line is
capped, a read is limited in bytes and says when it was cut."""

from __future__ import annotations

import json

from odh.training.cluster.client import ClusterClient
from odh.training.cluster.logstreams import MAX_LINE_BYTES, READ_LOG_LIMIT_BYTES, LogFollow


class FakeResponse:
    """A follow request's response: hands out `chunks` as `stream()` would."""

    def __init__(self, chunks) -> None:
        self.chunks = chunks

    def stream(self, amount):
        yield from self.chunks


def test_a_huge_line_without_newline_is_cut_and_the_rest_dropped():
    """10 MiB without a newline, then a normal line: the follower hands on MAX_LINE bytes of
    the huge line as soon as it has them and drops the rest up to the newline."""

    def chunks():
        yield b"2024-05-01T10:00:00Z before\n"
        for _ in range(640):  # 640 x 16 KiB = 10 MiB, no newline
            yield b"x" * (16 * 1024)
        yield b"tail of the huge line\n2024-05-01T10:00:01Z after\n"

    follow = LogFollow(FakeResponse(chunks()))
    lines = list(follow.lines())
    assert lines[0] == "2024-05-01T10:00:00Z before"
    assert lines[1] == "x" * MAX_LINE_BYTES  # cut where the cap is
    assert lines[2] == "2024-05-01T10:00:01Z after"  # the rest of the huge line is gone
    assert len(lines) == 3


def test_a_line_split_across_chunks_and_several_lines_in_one_chunk():
    follow = LogFollow(FakeResponse([b"one\ntw", b"o\n\nthr", b"ee"]), max_line=10)
    assert list(follow.lines()) == ["one", "two", "", "three"]


def test_a_line_of_exactly_the_cap_is_whole_and_one_over_is_cut():
    follow = LogFollow(FakeResponse([b"abcd\nabcde\nabcdefgh", b"ij\nok\n"]), max_line=4)
    assert list(follow.lines()) == ["abcd", "abcd", "abcd", "ok"]


def test_a_huge_unterminated_line_at_the_end_is_cut_too():
    follow = LogFollow(FakeResponse([b"y" * 100, b"y" * 100]), max_line=50)
    assert list(follow.lines()) == ["y" * 50]


class _Result:
    def __init__(self, data: bytes) -> None:
        self.data = data


class FakeCore:
    """read_namespaced_pod_log honouring limit_bytes, over a fixed log."""

    def __init__(self, log: bytes) -> None:
        self.log = log
        self.asked: dict = {}

    def read_namespaced_pod_log(self, name, namespace, **kwargs):
        self.asked = kwargs
        limit = kwargs.get("limit_bytes")
        return _Result(self.log[:limit] if limit else self.log)


def _client(log: bytes) -> tuple[ClusterClient, FakeCore]:
    client = ClusterClient.__new__(ClusterClient)
    client.timeout = (1.0, 1.0)
    client.core = FakeCore(log)
    return client, client.core


def test_read_log_asks_for_at_most_2_mib_and_says_when_it_was_cut():
    client, core = _client(b"z" * (3 * 1024 * 1024))
    text = client.read_log("team-nlp", "pod-1", tail_lines=500)
    assert core.asked["limit_bytes"] == READ_LOG_LIMIT_BYTES == 2 * 1024 * 1024
    assert len(text) == READ_LOG_LIMIT_BYTES
    assert text.cut is True and text.cut_at == READ_LOG_LIMIT_BYTES

    client, core = _client(b"2024-05-01T10:00:00Z short log\n")
    text = client.read_log("team-nlp", "pod-1")
    assert text == "2024-05-01T10:00:00Z short log\n" and text.cut is False
    assert json.dumps(text) == json.dumps(str(text))  # still a plain str to its callers


def test_a_download_closed_from_another_thread_ends_its_blocked_read():
    """What happens when the browser goes away in the middle of a download: Django closes
    the body from another thread while a worker thread waits for the next chunk."""
    import threading

    from odh.training.cluster.logstreams import LogChunks

    reading, shut = threading.Event(), threading.Event()

    class BlockingResponse:
        released = False

        def stream(self, amount):
            yield b"first chunk"
            reading.set()
            if not shut.wait(10):
                yield b"never"
            raise OSError("socket shut down")

        def shutdown(self):
            shut.set()

        def release_conn(self):
            self.released = True

    response = BlockingResponse()
    chunks = LogChunks(response, 1024)
    got, ended = [], threading.Event()

    def read():
        got.extend(chunks)  # ends without raising once closed
        ended.set()

    reader = threading.Thread(target=read)
    reader.start()
    assert reading.wait(10)
    chunks.close()
    assert ended.wait(10)
    reader.join(10)
    assert got == [b"first chunk"]
    assert response.released
    chunks.close()  # again: nothing more
