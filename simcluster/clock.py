"""Simulated time: one timer queue that every controller schedules on.

Nominal delays (what a real cluster would take) are divided by the speed factor.
Because every delay goes through this queue, the scenario loader can *warp*: run the
cluster from some time in the past up to now without waiting, so a demo starts with
jobs that began hours ago and carry real-looking timestamps.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

log = logging.getLogger("simcluster.clock")

# In real time, due timers run in slices of at most this many (real) seconds; the
# controllers reconcile once after a slice, then requests get the event loop.
SLICE_SECONDS = 0.02


class Clock:
    def __init__(self, speed: float = 1.0) -> None:
        if speed <= 0:
            raise ValueError("speed must be > 0")
        self.speed = speed
        self._virtual_now: float | None = None  # set while warping
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self.after_each: Callable[[], None] = lambda: None  # the controller pump
        self.after_slice: Callable[[], None] | None = None  # in real time (else after_each)

    # -- reading time ---------------------------------------------------------------
    def now(self) -> float:
        return self._virtual_now if self._virtual_now is not None else time.time()

    def timestamp(self, at: float | None = None) -> str:
        """RFC 3339 with seconds, as metadata timestamps are written."""
        t = self.now() if at is None else at
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def micro_timestamp(self, at: float | None = None) -> str:
        t = self.now() if at is None else at
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def real_delay(self, nominal_seconds: float) -> float:
        return max(0.0, nominal_seconds) / self.speed

    # -- timers -----------------------------------------------------------------------
    def call_later(self, nominal_seconds: float, fn: Callable[[], None]) -> None:
        """Run `fn` after a nominal delay (scaled by the speed factor)."""
        when = self.now() + self.real_delay(nominal_seconds)
        heapq.heappush(self._timers, (when, next(self._seq), fn))
        if self._wakeup is not None:
            self._wakeup.set()

    def _run_timer(self, fn: Callable[[], None]) -> None:
        self._call(fn)
        self.after_each()

    @staticmethod
    def _call(fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:  # a timer's error must never stop the cluster
            log.exception("timer callback failed")

    def begin_warp(self, start: float) -> None:
        """Move the clock to `start` in the past; time stands still until finish_warp.

        While warping, time flows in nominal seconds (speed 1), so a scenario's history
        looks as it would have on a real cluster.
        """
        self._warp_speed = self.speed
        self.speed = 1.0
        self._virtual_now = start

    def finish_warp(self) -> None:
        """Run every timer due up to the present without waiting, then go real-time.

        Timers due later stay queued and fire in real time.
        """
        try:
            self.after_each()
            end = time.time()
            while self._timers and self._timers[0][0] <= end:
                when, _, fn = heapq.heappop(self._timers)
                assert self._virtual_now is not None
                self._virtual_now = max(self._virtual_now, when)
                self._run_timer(fn)
                end = time.time()
        finally:
            self._virtual_now = None
            self.speed = getattr(self, "_warp_speed", self.speed)

    @property
    def warping(self) -> bool:
        return self._virtual_now is not None

    # -- the driver task ------------------------------------------------------------------
    def start(self) -> None:
        self._wakeup = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._drive())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    async def _drive(self) -> None:
        """Run due timers. However many are due (a thousand pods starting at once, a
        reconcile that requeues itself), the event loop is handed back after every
        slice, so the API keeps answering; the controllers catch up once per slice."""
        assert self._wakeup is not None
        while True:
            now = time.time()
            ran = 0
            slice_end = time.monotonic() + SLICE_SECONDS
            while self._timers and self._timers[0][0] <= now:
                _, _, fn = heapq.heappop(self._timers)
                self._call(fn)
                ran += 1
                if time.monotonic() >= slice_end:
                    self._call(self.after_slice or self.after_each)
                    ran = 0
                    await asyncio.sleep(0)
                    slice_end = time.monotonic() + SLICE_SECONDS
                now = time.time()
            if ran:
                self._call(self.after_slice or self.after_each)
            self._wakeup.clear()
            timeout = (self._timers[0][0] - now) if self._timers else None
            try:
                await asyncio.wait_for(self._wakeup.wait(), timeout)
            except TimeoutError:
                pass
