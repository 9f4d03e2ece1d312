"""One upstream log stream per pod, shared by every viewer: leases, refcounts, batching.

`LogStreams` is the part of the watch hub that follows container logs. Viewers (websocket
consumers, possibly in other processes) hold *leases* on a pod's stream: `subscribe`
(which is also how a lease is renewed) and `unsubscribe`. The first lease on a pod opens
one follow request to the API server (`LogSource.open`, with the dashboard's service
account); more viewers share it; the stream is closed when the last lease is given up or
runs out (`lease_seconds`, 60 s by default: viewers renew every ~20 s, so a web process
that dies cannot keep streams open for ever). A lease names its owner (a digest of the
person's token): one owner holds leases on at most `max_streams_per_owner` pods, so one
person cannot take all `max_streams` of the service account's follow requests.

Lines are gathered per pod and handed to `publish(key, message)` in batches every
`flush_interval` (0.15 s):

    {"type": "hub.log", "namespace": ns, "pod": pod, "container": c,
     "lines": [["2024-05-01T10:00:00.123456789Z", "text"], ...], "skipped": 0,
     "reread": false}

and when a stream ends for good (the pod finished or was deleted):

    {"type": "hub.log_end", "namespace": ns, "pod": pod, "container": c,
     "reason": "finished" | "deleted" | "capacity"}

Timestamps are normalised to nine fraction digits (`normalise_timestamp`) so that they
compare as strings; viewers drop lines they already have by timestamp (a new stream starts
with the pod's last `initial_tail` lines, to cover the moment between a viewer's own
snapshot and the stream's start). `"reread": true` marks a message whose lines begin such
a new reading of the log: a viewer compares them with what it has, as `Deduper` does after
`rewind()`, instead of taking a line seen again at the same time as a new one.

A follow request the server ends while the pod still runs (API server restart, the
kubelet's streaming timeout) is opened again with the last `reconnect_tail` lines, and lines
already sent are dropped (`Deduper`). A container that has not started yet (400) is tried
again with back-off while someone is watching.

Plain Python and threads: one follower thread per followed pod, one flusher thread. The
hub wires `publish` to the channel layer; tests use a fake `LogSource`.

The parts: `odh.training.logs.logtext` (timestamps, `Deduper`), `odh.training.logs.logsource` (the
`LogSource` protocol and the API server's, `KubeLogSource`); this module shares streams
and offers their names too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from odh.training.logs.logsource import (
    CAPACITY,
    DELETED,
    FINISHED,
    KubeLogSource,
    LogConnection,
    LogSource,
    PodKey,
    StreamGone,
    pod_log_state,
)
from odh.training.logs.logtext import Deduper, Line, normalise_timestamp, split_line

__all__ = [
    "BACKOFF", "CAPACITY", "DELETED", "FINISHED", "FLUSH_INTERVAL", "INITIAL_TAIL",
    "LEASE_SECONDS", "MAX_BATCH", "MAX_LINE", "MAX_PENDING", "MAX_STREAMS",
    "MAX_STREAMS_PER_OWNER", "RECONNECT_TAIL",
    "RENEW_SECONDS", "Deduper", "KubeLogSource", "Line", "LogConnection", "LogSource",
    "LogStreams", "PodKey", "Publish", "StreamGone", "normalise_timestamp", "pod_log_state",
    "split_line",
]

log = logging.getLogger("odh.training.logs.logstreams")

Publish = Callable[[PodKey, dict], None]

LEASE_SECONDS = 60.0
RENEW_SECONDS = 20.0  # what viewers should do
FLUSH_INTERVAL = 0.15
MAX_BATCH = 500  # lines per message
MAX_PENDING = 5000  # per pod between two flushes; older ones are counted as skipped
MAX_LINE = 16 * 1024  # characters of one line sent; the rest is cut
MAX_STREAMS = 256
# Pods one person (their token's digest, `owner`) may have followed at once, over all their
# tabs: nobody can take every stream of the dashboard's service account. "All" on a job's
# Logs tab follows up to 32 pods.
MAX_STREAMS_PER_OWNER = 64
INITIAL_TAIL = 100
RECONNECT_TAIL = 1000
BACKOFF = (0.5, 30.0)


# -- the streams ----------------------------------------------------------------------------
@dataclass
class _Stream:
    key: PodKey
    leases: dict[str, float] = field(default_factory=dict)  # subscriber -> expiry (clock)
    owners: dict[str, str] = field(default_factory=dict)  # subscriber -> whose it is
    stop: threading.Event = field(default_factory=threading.Event)
    connection: LogConnection | None = None
    # lines to send, in readings: (does this reading start the log over?, its lines)
    pending: list[tuple[bool, list[Line]]] = field(default_factory=list)
    skipped: int = 0
    thread: threading.Thread | None = None


class LogStreams:
    def __init__(self, source: LogSource, publish: Publish, *,
                 lease_seconds: float = LEASE_SECONDS, flush_interval: float = FLUSH_INTERVAL,
                 max_streams: int = MAX_STREAMS,
                 max_streams_per_owner: int = MAX_STREAMS_PER_OWNER,
                 initial_tail: int = INITIAL_TAIL,
                 reconnect_tail: int = RECONNECT_TAIL, backoff: tuple[float, float] = BACKOFF,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self.publish = publish
        self.lease_seconds = lease_seconds
        self.flush_interval = flush_interval
        self.max_streams = max_streams
        self.max_streams_per_owner = max_streams_per_owner
        self.initial_tail = initial_tail
        self.reconnect_tail = reconnect_tail
        self.backoff = backoff
        self.clock = clock
        self._streams: dict[PodKey, _Stream] = {}
        self._ended: list[tuple[PodKey, str]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._flusher: threading.Thread | None = None
        self._open = 0  # upstream connections open right now
        self.opened = 0  # upstream connections opened since start (a counter for tests)
        self.published = 0
        self.publish_errors = 0
        self.refused = 0  # leases refused: an owner at their limit

    # -- life --------------------------------------------------------------------------------
    def start(self) -> LogStreams:
        if self._flusher is None:
            self._flusher = threading.Thread(target=self._flush_loop, daemon=True,
                                             name="log-streams-flush")
            self._flusher.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            streams = list(self._streams.values())
            self._streams.clear()
        for s in streams:
            self._halt(s)
        if self._flusher is not None and self._flusher is not threading.current_thread():
            self._flusher.join(5)

    # -- leases -----------------------------------------------------------------------------
    def subscribe(self, key: PodKey, subscriber: str, owner: str = "") -> bool:
        """Take or renew `subscriber`'s lease on the pod's stream; True when this opened a
        new stream. `owner` says whose the subscriber is (a person, over all their tabs;
        the subscriber itself if not given): an owner holds leases on at most
        `max_streams_per_owner` pods. At capacity, or at the owner's limit, nothing opens
        and the pod's viewers are told (CAPACITY)."""
        expires = self.clock() + self.lease_seconds
        owner = owner or subscriber
        with self._lock:
            if self._stop.is_set():
                return False
            stream = self._streams.get(key)
            if stream is not None:
                held = subscriber in stream.leases or owner in stream.owners.values()
                if not held and self._held_by(owner) >= self.max_streams_per_owner:
                    self._refuse(key, owner, tell=False)  # the others' stream goes on
                    return False
                stream.leases[subscriber] = expires
                stream.owners[subscriber] = owner
                return False
            if self._held_by(owner) >= self.max_streams_per_owner:
                self._refuse(key, owner, tell=True)
                return False
            if len(self._streams) >= self.max_streams:
                self._ended.append((key, CAPACITY))
                log.warning("log streams: at capacity (%d), not following %s", self.max_streams,
                            "/".join(key))
                return False
            stream = self._streams[key] = _Stream(key, {subscriber: expires},
                                                  {subscriber: owner})
            stream.thread = threading.Thread(target=self._follow, args=(stream,), daemon=True,
                                             name=f"log-{key[0]}/{key[1]}")
        stream.thread.start()
        return True

    renew = subscribe

    def _held_by(self, owner: str) -> int:
        """Pods `owner` holds a lease on (under the lock)."""
        return sum(1 for s in self._streams.values() if owner in s.owners.values())

    def _refuse(self, key: PodKey, owner: str, tell: bool) -> None:
        self.refused += 1
        if tell:
            self._ended.append((key, CAPACITY))
        log.warning("log streams: %s already follows %d pods, not following %s for them",
                    owner[:12], self.max_streams_per_owner, "/".join(key))

    def unsubscribe(self, key: PodKey, subscriber: str) -> None:
        with self._lock:
            stream = self._streams.get(key)
            if stream is None:
                return
            stream.leases.pop(subscriber, None)
            stream.owners.pop(subscriber, None)
            if stream.leases:
                return
            del self._streams[key]
        self._halt(stream)

    def unsubscribe_all(self, subscriber: str) -> None:
        """Every lease of one viewer (its websocket closed)."""
        with self._lock:
            keys = [k for k, s in self._streams.items() if subscriber in s.leases]
        for key in keys:
            self.unsubscribe(key, subscriber)

    def expire(self) -> list[PodKey]:
        """Drop leases that ran out; close streams left without any. Returns those."""
        now = self.clock()
        closed = []
        with self._lock:
            for key, stream in list(self._streams.items()):
                for sub, expiry in list(stream.leases.items()):
                    if expiry <= now:
                        del stream.leases[sub]
                        stream.owners.pop(sub, None)
                if not stream.leases:
                    del self._streams[key]
                    closed.append(stream)
        for stream in closed:
            log.info("log streams: lease of %s expired", "/".join(stream.key))
            self._halt(stream)
        return [s.key for s in closed]

    # -- what tests and stats read -----------------------------------------------------------
    def active_streams(self) -> int:
        """Pods followed right now (one upstream stream each)."""
        with self._lock:
            return len(self._streams)

    def open_connections(self) -> int:
        """Follow requests to the API server open right now."""
        with self._lock:
            return self._open

    def owners(self, key: PodKey) -> set[str]:
        """Whose leases the pod's stream has."""
        with self._lock:
            stream = self._streams.get(key)
            return set(stream.owners.values()) if stream else set()

    def subscribers(self, key: PodKey) -> int:
        with self._lock:
            stream = self._streams.get(key)
            return len(stream.leases) if stream else 0

    def stats(self) -> dict:
        with self._lock:
            return {"streams": len(self._streams), "open": self._open, "opened": self.opened,
                    "published": self.published, "publish_errors": self.publish_errors,
                    "leases": sum(len(s.leases) for s in self._streams.values()),
                    "refused": self.refused}

    # -- following one pod ---------------------------------------------------------------------
    def _halt(self, stream: _Stream) -> None:
        stream.stop.set()
        conn = stream.connection
        if conn is not None:
            try:
                conn.close()
            except Exception:  # closing is best effort
                log.debug("closing a log stream failed", exc_info=True)

    def _current(self, stream: _Stream) -> bool:
        """Is this stream still the one followed for its pod?"""
        with self._lock:
            return self._streams.get(stream.key) is stream and not stream.stop.is_set()

    def _follow(self, stream: _Stream) -> None:
        dedupe = Deduper()
        delay = self.backoff[0]
        tail = self.initial_tail
        while self._current(stream):
            try:
                conn = self.source.open(stream.key, tail)
            except StreamGone as e:
                self._end(stream, e.reason)
                return
            except Exception as e:  # not started yet, the API server away: try again
                log.info("log stream %s: %s; again in %.1fs", "/".join(stream.key), e, delay)
                if stream.stop.wait(delay):
                    return
                delay = min(delay * 2, self.backoff[1])
                if self._gone(stream):
                    return
                continue
            with self._lock:
                stream.connection = conn
                self._open += 1
                self.opened += 1
                stream.pending.append((True, []))  # a new reading, from some way back
            try:
                if stream.stop.is_set():
                    continue
                dedupe.rewind()
                for raw in conn.lines():
                    if stream.stop.is_set():
                        break
                    stamp, text = split_line(raw)
                    if dedupe.accept(stamp, text):
                        self._add(stream, stamp, text[:MAX_LINE])
                        delay = self.backoff[0]
            except Exception as e:  # the connection broke
                if not stream.stop.is_set():
                    log.info("log stream %s broke: %s", "/".join(stream.key), e)
            finally:
                with self._lock:
                    stream.connection = None
                    self._open -= 1
                try:
                    conn.close()
                except Exception:  # already closed
                    log.debug("closing a finished log stream failed", exc_info=True)
            if not self._current(stream) or self._gone(stream):
                return
            tail = self.reconnect_tail
            if stream.stop.wait(delay):
                return
            delay = min(delay * 2, self.backoff[1])

    def _gone(self, stream: _Stream) -> bool:
        """After a stream ended: has the pod finished for good? (then tell the viewers)"""
        try:
            state = self.source.state(stream.key)
        except Exception as e:  # cannot tell: assume it still runs and try again
            log.info("log stream %s: pod state unknown: %s", "/".join(stream.key), e)
            return False
        if state in (FINISHED, DELETED):
            self._end(stream, state)
            return True
        return False

    def _add(self, stream: _Stream, stamp: str, text: str) -> None:
        with self._lock:
            if not stream.pending:
                stream.pending.append((False, []))
            stream.pending[-1][1].append((stamp, text))
            excess = sum(len(lines) for _, lines in stream.pending) - MAX_PENDING
            while excess > 0:
                oldest = stream.pending[0][1]
                drop = min(excess, len(oldest))
                del oldest[:drop]
                stream.skipped += drop
                excess -= drop
                if not oldest and len(stream.pending) > 1:
                    stream.pending.pop(0)

    def _end(self, stream: _Stream, reason: str) -> None:
        with self._lock:
            if self._streams.get(stream.key) is not stream:
                return
            # lines still pending go out first (flush keeps order: lines, then the end)
            self._ended.append((stream.key, reason))
            stream.stop.set()
        log.info("log stream %s ended: %s", "/".join(stream.key), reason)

    # -- batching -------------------------------------------------------------------------
    def flush(self) -> None:
        """Publish what has gathered (the flusher thread calls this every flush_interval)."""
        batches: list[tuple[PodKey, dict]] = []
        with self._lock:
            ended = self._ended
            self._ended = []
            ending = {k for k, _ in ended}
            for key, stream in list(self._streams.items()):
                readings = [r for r in stream.pending if r[1]]
                # a reading just begun, with no lines yet, keeps its mark for its lines
                stream.pending = stream.pending[-1:] if stream.pending and \
                    stream.pending[-1][0] and not stream.pending[-1][1] else []
                if readings or stream.skipped:
                    skipped, stream.skipped = stream.skipped, 0
                    for n, (reread, lines) in enumerate(readings or [(False, [])]):
                        for i in range(0, max(1, len(lines)), MAX_BATCH):
                            batches.append((key, self._message(
                                "hub.log", key, lines=[list(x) for x in lines[i:i + MAX_BATCH]],
                                skipped=skipped if n == i == 0 else 0,
                                reread=reread and i == 0)))
                if key in ending:
                    del self._streams[key]
            for key, reason in ended:
                batches.append((key, self._message("hub.log_end", key, reason=reason)))
        for key, message in batches:
            try:
                self.publish(key, message)
                self.published += 1
            except Exception as e:  # the channel layer is away: these lines are lost
                self.publish_errors += 1
                log.warning("log streams: could not publish for %s: %s", "/".join(key), e)

    @staticmethod
    def _message(mtype: str, key: PodKey, **fields: object) -> dict:
        return {"type": mtype, "namespace": key[0], "pod": key[1], "container": key[2],
                **fields}

    def _flush_loop(self) -> None:
        last_expiry = self.clock()
        while not self._stop.wait(self.flush_interval):
            try:
                self.flush()
                if self.clock() - last_expiry >= 1.0:
                    last_expiry = self.clock()
                    self.expire()
            except Exception:
                log.exception("log streams: flush failed")
