"""A pod's log as `ClusterClient` reads it: a tail (cut at a byte limit), the whole log in
chunks for a download, or followed as it is written (each line capped), each stoppable
from another thread."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import urllib3

from odh.training.cluster.api import ApiCalls, require_names

# the ClusterClient's log, whichever of its parts writes it
log = logging.getLogger("odh.training.cluster.client")

# The most of a log one read takes (the API server's limitBytes); a page shows a tail, so
# more than this means very long lines, and the reader is told the log was cut.
READ_LOG_LIMIT_BYTES = 2 * 1024 * 1024
# The longest line a followed log hands on (its timestamp included): a line without a
# newline cannot fill memory; what is beyond is dropped up to the next newline.
MAX_LINE_BYTES = 64 * 1024


class LogText(str):
    """A log read with `ClusterClient.read_log`. `cut_at`: the byte limit it reached (the
    server stopped there: what followed is not in it), or None."""

    cut_at: int | None = None

    def __new__(cls, text: str, cut_at: int | None = None) -> LogText:
        value = super().__new__(cls, text)
        value.cut_at = cut_at
        return value

    @property
    def cut(self) -> bool:
        return self.cut_at is not None


class LogFollow:
    """An open follow request for a container's log (see `ClusterClient.follow_log`)."""

    def __init__(self, response: Any, max_line: int = MAX_LINE_BYTES) -> None:
        self.response = response
        self.max_line = max_line
        self._closed = False

    def lines(self) -> Iterator[str]:
        """Each line as it arrives (decoded, without its newline); ends with the stream.

        A line longer than `max_line` bytes is handed on cut to that length as soon as it
        is that long, and the rest of it (up to its newline) is dropped: a container that
        writes without newlines costs `max_line` bytes here, not its whole output."""
        buffer = bytearray()
        cut = False  # the current line went out cut: drop the rest of it
        try:
            for chunk in self.response.stream(16 * 1024):
                start = 0
                while True:
                    newline = chunk.find(b"\n", start)
                    end = len(chunk) if newline < 0 else newline
                    if not cut:
                        buffer += chunk[start:end]
                        if len(buffer) > self.max_line:
                            yield _decode(buffer[:self.max_line])
                            buffer.clear()
                            cut = True
                    if newline < 0:
                        break
                    if cut:
                        cut = False
                    else:
                        yield _decode(buffer)
                        buffer.clear()
                    start = newline + 1
        except (urllib3.exceptions.HTTPError, OSError, ValueError, AttributeError):
            if not self._closed:
                raise
        if buffer and not self._closed:
            yield _decode(buffer)

    def close(self) -> None:
        """Stop reading, from any thread: a blocked `lines()` ends soon after."""
        if self._closed:
            return
        self._closed = True
        try:
            self.response.shutdown()  # wakes a reader blocked on the socket
        except Exception:  # already released or never connected
            log.debug("log stream shutdown failed", exc_info=True)
        try:
            self.response.release_conn()
        except Exception:
            log.debug("log stream release failed", exc_info=True)


class LogChunks:
    """The chunks of a whole log as they arrive (see `ClusterClient.stream_log`)."""

    def __init__(self, response: Any, chunk_size: int) -> None:
        self.response = response
        self._chunks = response.stream(chunk_size)
        self._closed = False

    def __iter__(self) -> LogChunks:
        return self

    def __next__(self) -> bytes:
        if self._closed:
            raise StopIteration
        try:
            return next(self._chunks)
        except StopIteration:
            self.close()
            raise
        except (urllib3.exceptions.HTTPError, OSError, ValueError, AttributeError):
            if self._closed:  # closed from another thread while reading
                raise StopIteration from None
            raise

    def close(self) -> None:
        """Stop, from any thread: a read blocked on the socket returns soon after."""
        if self._closed:
            return
        self._closed = True
        try:
            self.response.shutdown()
        except Exception:  # already released
            log.debug("log download shutdown failed", exc_info=True)
        try:
            self.response.release_conn()
        except Exception:
            log.debug("log download release failed", exc_info=True)


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def _log_options(container: str | None, tail_lines: int | None = None,
                 limit_bytes: int | None = None, **options: bool) -> dict[str, Any]:
    """read_namespaced_pod_log's keyword arguments: `options`, and the container, the
    number of last lines and the most bytes to read when given."""
    kwargs: dict[str, Any] = dict(options)
    if container:
        kwargs["container"] = container
    if tail_lines is not None:
        kwargs["tail_lines"] = tail_lines
    if limit_bytes is not None:
        kwargs["limit_bytes"] = limit_bytes
    return kwargs


class PodLogs(ApiCalls):
    """The logs of a pod's containers."""

    def read_log(self, namespace: str, pod: str, container: str | None = None,
                 tail_lines: int | None = 500, timestamps: bool = False,
                 previous: bool = False, limit_bytes: int | None = None,
                 since_seconds: int | None = None) -> LogText:
        """The log's last `tail_lines` lines (of those of the last `since_seconds`, when
        given), at most `limit_bytes` of them (by default READ_LOG_LIMIT_BYTES; the server
        stops there, and the text's `cut` says so). Downloads use `stream_log` instead."""
        require_names(namespace, pod, "pods")
        limit_bytes = limit_bytes or READ_LOG_LIMIT_BYTES
        kwargs = _log_options(container, tail_lines, limit_bytes, timestamps=timestamps,
                              previous=previous)
        if since_seconds is not None:
            kwargs["since_seconds"] = max(1, int(since_seconds))
        data = self._call(self.core.read_namespaced_pod_log, pod, namespace, raw=True,
                          namespace=namespace, **kwargs)
        raw = data if isinstance(data, bytes) else str(data).encode()
        return LogText(_decode(raw), cut_at=limit_bytes if len(raw) >= limit_bytes else None)

    def stream_log(self, namespace: str, pod: str, container: str | None = None,
                   chunk_size: int = 64 * 1024) -> LogChunks:
        """The whole log of a container, in chunks (for downloads); `close()` it, from any
        thread, to stop."""
        require_names(namespace, pod, "pods")
        kwargs = _log_options(container)
        with self._translated(namespace, warn=False):
            resp = self.core.read_namespaced_pod_log(pod, namespace, _preload_content=False,
                                                     _request_timeout=self.timeout, **kwargs)
        return LogChunks(resp, chunk_size)

    def follow_log(self, namespace: str, pod: str, container: str | None = None,
                   tail_lines: int | None = None, read_timeout: float | None = 600.0
                   ) -> LogFollow:
        """`kubectl logs -f --timestamps`: a follow request whose lines come as written.

        `read_timeout` bounds a silence (the stream then ends and may be opened again);
        `LogFollow.close()` may be called from another thread to stop a blocked read.
        """
        require_names(namespace, pod, "pods")
        kwargs = _log_options(container, tail_lines, follow=True, timestamps=True)
        with self._translated(namespace, warn=False):
            resp = self.core.read_namespaced_pod_log(
                pod, namespace, _preload_content=False,
                _request_timeout=(self.timeout[0], read_timeout), **kwargs)
        return LogFollow(resp)
