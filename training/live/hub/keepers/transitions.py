"""One event per job transition: the watch hub's sightings of each job's status, claimed
in the database so that each transition is recorded once (`training.models.JobTransition`),
whatever the number of web processes or watcher replicas, and across restarts.

The hub's flusher computes every changed job's summary and hands it to
`TransitionRecorder.saw()`; a deleted job goes to `gone()`, and once the first lists are
read, `listed()` names every job that exists, so that jobs deleted while nothing watched
are found too. The recorder's own thread claims each new status off the flusher's thread
(a slow or locked database never delays live updates), the way healthchecks claims a Flip
before it sends it:

- `training.models.JobState` holds the status last recorded for each job. A sighting in
  another status moves that row with a conditional update (the status read, and the time
  the job says it began, must still be there); only the watcher whose update changed the
  row writes the `JobTransition`, in the same database transaction. A first sighting
  inserts the row (the uid is unique: of two watchers, one inserts). A watcher that is
  behind (its sighting older than the row's) moves nothing.
- The job history is written from the transition to Succeeded or Failed, in that same
  transaction: one record per finished job, by the watcher that claimed it. So are the
  transition's notifications queued (training/notifications/), and a failed job's
  automatic retry decided (training/live/hub/keepers/retries.py).
- A job that changed while nothing watched (the dashboard down, the watcher killed before
  it claimed) is claimed from the first list after the next start: its row says the old
  status, the list the new one.
- Creations and deletions are transitions too (from "" and to "Deleted"). A little later
  (`AUDIT_GRACE`, time for the dashboard's own audit row to be written) the recorder tells
  the audit trail about those the dashboard did not make: an `AuditEvent` with outcome
  "seen", the creator the job's annotation names (training/models/jobs.py).
- A deleted job's `JobState` row is deleted a day after (`PRUNE_AFTER`, by the same
  thread, hourly); its transitions stay, as the job history. A sighting of that uid later
  (a watcher that was behind) finds the transition to "Deleted" and records nothing.

The rows and what a claim does with them are in transition_rows.py; this module is the
recorder's thread. A claim that fails (the database away) is tried again with back-off
(1 s doubling to 60 s) with the latest sighting of each job. The thread uses Django's ORM
as a request would:
`close_old_connections()` around each batch, its connection closed when it stops.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from odh.training.status.summary import JobSummary
from training.live.hub.background import Background
from training.live.hub.keepers.transition_rows import (
    DELETED,
    FINISHED,
    Claim,
    Sighting,
    audit_seen_with_orm,
    claim_with_orm,
    known_with_orm,
    prune_with_orm,
    rows_of_kinds_with_orm,
)

if TYPE_CHECKING:
    pass

log = logging.getLogger("training.live.hub")

Obj = dict[str, Any]
RETRY_SECONDS = (1.0, 60.0)
AUDIT_EVERY = 2.0
PRUNE_EVERY = timedelta(hours=1)
# A sighting is claimed this long after it came: the push of the same change is being
# rendered on the flusher's thread at that moment, and a claim (an ORM transaction) beside
# it would hold the GIL the render needs; the event need not come before the page's update.
CLAIM_AFTER = 0.2
def _utcnow() -> datetime:
    return datetime.now(UTC)


class TransitionRecorder(Background):
    """`claim(sighting, project_uid=...)` records a transition (claim_with_orm);
    `project_uid(namespace)` tells the uid of the project a history record belongs to;
    `clock()` is the wall-clock time (deletions seen, the audit and the prune passes)."""

    name = "hub-transitions"

    def __init__(self, claim: Callable[..., Claim] = claim_with_orm,
                 project_uid: Callable[[str], str] | None = None, *,
                 audit_seen: Callable[[datetime], int] | None = audit_seen_with_orm,
                 known: Callable[[], dict[str, str]] = known_with_orm,
                 recorded_of_kinds: Callable[[Iterable[str], datetime], list[Sighting]]
                 = rows_of_kinds_with_orm,
                 prune: Callable[[datetime], int] | None = prune_with_orm,
                 clock: Callable[[], datetime] = _utcnow,
                 claim_after: float = CLAIM_AFTER,
                 recorded: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.claim = claim
        self.recorded = recorded  # told after each transition it records (notifications)
        # told of each history record it writes (the Workers' use: keepers/usage.py)
        self.finished: Callable[[Sighting], None] | None = None
        self.project_uid = project_uid
        self.audit_seen = audit_seen
        self.known_of_database = known
        self.recorded_of_kinds = recorded_of_kinds
        self.prune = prune
        self.clock = clock
        self.claim_after = claim_after
        self.deferred = 0  # times the thread let a push go first (claim_after)
        self.transitions = 0  # transitions this process recorded
        self.written = 0  # history records this process wrote
        self.found = 0  # finished jobs another watcher (or an earlier run) had recorded
        self.seen_audited = 0
        self.pruned = 0  # rows of deleted jobs this process pruned
        self.errors = 0
        self.last_error = ""
        self._queue: dict[str, Sighting] = {}  # uid -> the latest sighting
        self._queued_since: float | None = None  # when the oldest unclaimed one came
        self._known: dict[str, str] = {}  # uid -> the status recorded (by anyone)
        self._loaded = False
        # (uids, kinds, when) of a first list
        self._listed: tuple[set[str], set[str], datetime] | None = None
        self._retry_at = 0.0
        self._delay = 0.0
        self._audited_at = 0.0
        self._pruned_at: datetime | None = None  # clock() of the last prune pass

    def stats(self) -> dict[str, Any]:
        with self._cond:
            queued = len(self._queue)
        return {"transitions": self.transitions, "written": self.written, "found": self.found,
                "seen_audited": self.seen_audited, "pruned": self.pruned, "queued": queued,
                "errors": self.errors, "last_error": self.last_error}

    # -- from the hub -----------------------------------------------------------------------------
    def saw(self, job: Obj, summary: JobSummary, headline: str = "", scenario: str = "",
            culprit: str = "") -> None:
        """The hub's latest summary of a job (and its diagnosis' headline, scenario and
        culprit): claimed if its status is new."""
        if not summary.uid:
            return
        with self._cond:
            if self._known.get(summary.uid) == str(summary.status):
                return
            self._queue[summary.uid] = Sighting.of(job, summary, headline, scenario, culprit)
            self._queued()

    def gone(self, summary: JobSummary) -> None:
        """The job was deleted."""
        if not summary.uid:
            return
        sighting = Sighting.of({}, summary).deleted(self.clock())
        with self._cond:
            self._queue[summary.uid] = sighting
            self._queued()

    def listed(self, uids: Iterable[str], kinds: Iterable[str]) -> None:
        """Every job of these kinds that exists, as the first lists read them: the jobs
        recorded but not among them were deleted while nothing watched. Only rows written
        before now count: a job another watcher recorded after this list was read (created
        since, or this recorder behind a locked database) is not in it, and not gone."""
        with self._cond:
            self._listed = (set(uids), set(kinds), self.clock())
            self._cond.notify()

    def _queued(self) -> None:
        if self._queued_since is None:
            self._queued_since = time.monotonic()
        self._cond.notify()

    def idle(self) -> bool:
        """Nothing left to claim (tests)."""
        with self._cond:
            return not self._queue and self._listed is None

    # -- the thread --------------------------------------------------------------------------------
    def run(self) -> None:
        from django.db import close_old_connections, connection

        try:
            while not self.stopping:
                with self._cond:
                    wait = self._retry_at - time.monotonic()
                    audit_due = self.audit_seen is not None and \
                        time.monotonic() - self._audited_at >= AUDIT_EVERY
                    prune_due = self.prune is not None and (
                        self._pruned_at is None or
                        self.clock() - self._pruned_at >= PRUNE_EVERY)
                    if self._queue and self._queued_since is not None and wait <= 0:
                        wait = self._queued_since + self.claim_after - time.monotonic()
                        self.deferred += wait > 0
                    if (not self._queue and self._listed is None and not audit_due and
                            not prune_due) or wait > 0:
                        self._cond.wait(max(0.01, wait) if self._queue else
                                        min(1.0, AUDIT_EVERY))
                        continue
                    batch = list(self._queue.items())
                    self._queued_since = None
                    listed, self._listed = self._listed, None
                close_old_connections()
                try:
                    self._claim_all(batch, listed)
                    if audit_due:
                        self._audit()
                    if prune_due:
                        self._prune()
                finally:
                    close_old_connections()
        finally:
            connection.close()

    def _failed(self, e: Exception, what: str) -> None:
        self.errors += 1
        self.last_error = f"{type(e).__name__}: {e}"
        self._delay = min(max(self._delay * 2, RETRY_SECONDS[0]), RETRY_SECONDS[1])
        self._retry_at = time.monotonic() + self._delay
        level = logging.WARNING if self._delay <= RETRY_SECONDS[0] else logging.DEBUG
        log.log(level, "job transitions: cannot record %s (%s); trying again in %.0fs",
                what, self.last_error, self._delay)

    def _claim_all(self, batch: list[tuple[str, Sighting]],
                   listed: tuple[set[str], set[str], datetime] | None) -> None:
        if not self._loaded:
            try:
                known = self.known_of_database()
            except Exception as e:
                self._put_back_listed(listed)
                self._failed(e, "the jobs' last statuses")
                return
            with self._cond:
                self._known.update(known)
                # sightings queued before the statuses were read: those unchanged are done
                # (the latest of each job: the hub may have seen it again meanwhile)
                for uid, sighting in list(self._queue.items()):
                    if known.get(uid) == sighting.status:
                        del self._queue[uid]
                        self.found += sighting.status in FINISHED
                batch = list(self._queue.items())
            self._loaded = True
        if listed is not None:
            uids, kinds, listed_at = listed
            try:
                vanished = [s.deleted(self.clock())
                            for s in self.recorded_of_kinds(kinds, listed_at)
                            if s.uid not in uids]
            except Exception as e:
                self._put_back_listed(listed)
                self._failed(e, "the jobs deleted while nothing watched")
                return
            with self._cond:
                for sighting in vanished:
                    self._queue.setdefault(sighting.uid, sighting)
                batch = list(self._queue.items())
        for uid, sighting in batch:
            if self.stopping:
                return
            try:
                bound = {"project_uid": self.project_uid(sighting.namespace)} \
                    if self.project_uid is not None and sighting.status in FINISHED else {}
                claim = self.claim(sighting, **bound)
            except ValueError as e:  # not recordable: drop it
                log.warning("job transitions: not recording %s/%s: %s", sighting.namespace,
                            sighting.name, e)
                self._settle(uid, sighting, None)
                continue
            except Exception as e:  # the database is away or refused: try again later
                self._failed(e, f"{sighting.namespace}/{sighting.name}")
                return
            self._delay = 0.0
            self._count(sighting, claim)
            self._settle(uid, sighting, sighting.status)

    def _put_back_listed(self, listed: tuple[set[str], set[str], datetime] | None) -> None:
        if listed is not None:
            with self._cond:
                if self._listed is None:
                    self._listed = listed

    def _count(self, sighting: Sighting, claim: Claim) -> None:
        if claim.transition is not None:
            self.transitions += 1
            if self.recorded is not None:
                self.recorded()
            log.info("job transition: %s %s/%s %s -> %s", sighting.kind, sighting.namespace,
                     sighting.name, claim.transition.from_status or "(new)", sighting.status)
        if sighting.status not in FINISHED:
            return
        if claim.history_written:
            self.written += 1
            if self.finished is not None:
                self.finished(sighting)
            log.info("job history: recorded %s %s/%s (%s)", sighting.kind,
                     sighting.namespace, sighting.name, sighting.status)
        else:
            self.found += 1

    def _settle(self, uid: str, sighting: Sighting, status: str | None) -> None:
        with self._cond:
            queued = self._queue.get(uid)
            # done, and so is the same status seen again while it was claimed
            if queued is sighting or (queued is not None and status is not None
                                      and queued.status == status):
                self._queue.pop(uid, None)
            if status == DELETED:
                self._known.pop(uid, None)  # memory stays bounded
            elif status is not None:
                self._known[uid] = status

    def _audit(self) -> None:
        self._audited_at = time.monotonic()
        try:
            told = self.audit_seen(self.clock()) if self.audit_seen else 0
        except Exception as e:
            log.warning("job transitions: cannot tell the audit trail (%s: %s)",
                        type(e).__name__, e)
            return
        self.seen_audited += told

    def _prune(self) -> None:
        # tried again at the next PRUNE_EVERY, not sooner: nothing waits for it
        self._pruned_at = now = self.clock()
        try:
            pruned = self.prune(now) if self.prune else 0
        except Exception as e:
            log.warning("job transitions: cannot prune the deleted jobs' rows (%s: %s)",
                        type(e).__name__, e)
            return
        self.pruned += pruned
        if pruned:
            log.info("job transitions: pruned %d deleted jobs' rows", pruned)
