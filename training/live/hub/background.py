"""The watch hub's background threads, started and stopped one way: each part that works
on its own thread (the watching, which opens the watches; the transition recorder, the
evidence keeper, the session sweeper, the probe, the status beacon, the notices) is a
`Background` with a `run()`."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod


class Background(ABC):
    """A daemon thread named `name` running `run()` until `stop()`: `run` loops while not
    `stopping`, waiting on `self._cond` (notified by `stop()` and by whoever gives it work)
    or with `wait()`."""

    name = "hub-background"

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self):
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, daemon=True, name=self.name)
            self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, woken by `stop()`: whether it is stopping."""
        return self._stop.wait(seconds)

    @abstractmethod
    def run(self) -> None:
        """The thread's work, until `stopping`."""
