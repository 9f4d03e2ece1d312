"""When the hub looks at each job again (the coalescing described in hub.py): marking the
jobs a change may touch, the flusher thread that recomputes each marked job's summary and
hands it to the pusher and the keepers. A mixin of `Hub`, whose state it uses."""


from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta

from odh.training.status.jobindex import JobKey
from odh.training.status.queries import job_events
from odh.training.status.summarize import summarize
from training import diagnoses
from training.live.hub.pushing import SKIP_MEMORY

log = logging.getLogger("training.live.hub")

ORPHAN_EVENTS_KEPT = timedelta(minutes=5)  # events of jobs deleted this long ago are dropped


class Flushing:
    """The hub's flusher (see the module's doc)."""

    # -- coalescing ------------------------------------------------------------------------
    def _wake(self) -> None:
        """The flusher looks again now (the watches are open, or the hub stops)."""
        with self._cond:
            self._cond.notify_all()

    def _mark(self, keys: set[JobKey], delay: float | None = None,
              may_move_status: bool = False) -> None:
        """Schedule the flush of `keys`: after `delay` (a retry); else at the leading edge
        for a quiet job, at the window's end for one flushed within it, or, for a change of
        the job object (`may_move_status`), at the leading edge to look whether its status
        moved (only then flushed at once)."""
        if not keys:
            return
        now = time.monotonic()
        with self._cond:
            for key in keys:
                peek = False
                if delay is not None:
                    due = now + delay
                else:
                    last = self._flushed.get(key)
                    if last is None or now - last >= self.debounce:
                        due = now + self.lead
                    elif may_move_status:
                        due, peek = now + self.lead, True
                    else:
                        due = last + self.debounce
                # the first change of a burst sets the time; later ones ride along
                pending = self._dirty.get(key)
                if pending is None or pending[0] > due:
                    self._dirty[key] = (due, peek)
            self._cond.notify()

    def _may_prime(self) -> bool:
        if not self.watches:
            return False
        if all(w.synced.is_set() for w in self.watches):
            return True
        if time.monotonic() - self._started_at >= self.prime_grace:
            late = [w.resource.name for w in self.watches if not w.synced.is_set()]
            log.warning("watch hub: starting without a first list of %s", ", ".join(late))
            return True
        return False

    def _flush_loop(self) -> None:
        while not self._stop.is_set():
            prune = False
            with self._cond:
                if not self.ready.is_set():
                    if not self._may_prime():
                        self._cond.wait(0.1)
                        continue
                    due = [(k, False) for k in self._dirty]
                    self._dirty.clear()
                else:
                    now = time.monotonic()
                    due = [(k, peek) for k, (t, peek) in self._dirty.items() if t <= now]
                    if not due:
                        wait = (min(t for t, _peek in self._dirty.values()) - now
                                if self._dirty else 1.0)
                        self._cond.wait(max(0.005, min(wait, 1.0)))
                        continue
                    for key, _peek in due:
                        del self._dirty[key]
                    # quiet ones forgotten
                    if len(self._flushed) > 2 * len(self.pusher.seen) + 1000:
                        self._flushed = {k: t for k, t in self._flushed.items()
                                         if now - t < self.debounce}
                    if now - self._skips_pruned > SKIP_MEMORY:  # groups nobody watched
                        self._skips_pruned = prune = now
            if prune:
                self.pusher.forget_skipped(now)
                # events of jobs deleted a while ago: no page shows them
                self.index.forget_orphan_events(datetime.now(UTC) - ORPHAN_EVENTS_KEPT)
            if not self.ready.is_set():
                for key, _peek in due:
                    try:
                        self._flush(key, send=False)
                    except Exception:
                        log.exception("watch hub: could not read %s", "/".join(key))
                if self.transitions is not None:  # what was deleted while nothing watched
                    self.transitions.listed({s.uid for s in self.summaries.values()},
                                            {k.kind for k in self.kinds})
                self.ready.set()
                log.info("watch hub ready: %d jobs, %d pods, %d events", *(
                    self.index.counts()[k] for k in ("jobs", "pods", "events")))
                continue
            for key, peek in due:
                if self._stop.is_set():
                    break
                try:
                    self._flush(key, send=True, unless_same_status=peek)
                except Exception:
                    log.exception("watch hub: could not update %s", "/".join(key))

    # -- one job ------------------------------------------------------------------------------
    def _flush(self, key: JobKey, send: bool, unless_same_status: bool = False) -> None:
        """Send what viewers of the job have not seen. `unless_same_status`: a look within
        a burst; unless the status moved, the flush waits for the window's end."""
        data = self.index.job_data(key)
        seen = self.pusher.seen.get(key)
        if data is not None and unless_same_status and seen is not None:
            said = summarize(data.job, data.pods, None, datetime.now(UTC), data.layout)
            if str(said.status) == seen.status:
                with self._cond:
                    last = self._flushed.get(key, 0.0)
                self._mark({key}, delay=max(0.0, last + self.debounce - time.monotonic()))
                return
        with self._cond:
            self._flushed[key] = time.monotonic()
            forced = key in self._forced
            self._forced.discard(key)
        self.flushes += 1
        if data is None:
            gone = self.summaries.pop(key, None)
            if gone is not None and self.transitions is not None:
                self.transitions.gone(gone)
            if gone is not None and self.curves is not None:
                self.curves.gone(gone.uid)
            self.pusher.gone(key, send)
            return
        now = datetime.now(UTC)
        events = job_events(data.kind, data.job, data.pods, data.events)
        summary = summarize(data.job, data.pods, events, now, data.layout)
        diagnosis = diagnoses.object_diagnosis(data.job, data.pods, events, summary)
        self.summaries[key] = summary
        if self.transitions is not None:
            self.transitions.saw(
                data.job, summary, *((str(diagnosis.headline), diagnosis.scenario,
                                      str(diagnosis.culprit)) if diagnosis is not None else ()))
        if self.curves is not None:
            self.curves.saw(data.job, summary)
        retry = self.pusher.push(key, data, events, summary, diagnosis, now, send=send,
                                 forced=forced)
        if retry is not None:
            self._mark({key}, delay=retry)
