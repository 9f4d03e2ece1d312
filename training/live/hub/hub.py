"""The watch hub: a few cluster-wide watches, one rendering, many viewers.

Its parts: `watching.Watching` opens the watches and keeps the index they feed
(odh.training.status.jobindex), telling this module which jobs each change may touch; this
module decides when each job is looked at again and keeps every job's latest summary;
`pushing.Pusher` renders and sends what viewers see; `transitions.TransitionRecorder`
records each job's transitions and its history (`usage.UsageRecorder` adds what a finished
job's Workers used); `notifying.NotificationSender` sends the
notifications queued with them; `evidence`, `sessions`, `probe`, `status`
and `cluster` are the smaller parts; each part with a thread of its own is a
`background.Background`; leadership (one active runwatcher) is runwatcher's
(odh/training/cluster/election.py).

With the dashboard's service-account credentials the hub keeps one `ResilientWatch` per
training job kind the cluster serves (MPIJob, PyTorchJob, TFJob, TrainJob), pods of training
jobs (by each label naming their job), one of events (only those that may concern a
training job are kept) and one of resource quotas, all feeding a `JobIndex` (watching.py).

Each change marks the jobs it may touch. A flusher thread sends the first change of a
quiet job at once (after `LEAD_SECONDS`, 10 ms, which gathers what one write changed);
what follows within `debounce` (0.2 s) of that flush waits for the window's end and goes
out together, so that a burst (eight Workers starting) becomes one more update. Except a
new status: a change of the job object itself within the window is looked at once (its
summary computed, nothing rendered), and goes out at once if the job's status moved
(Pending to Running), else waits with the rest; the new status goes out in a message of
its own before the rest of the page's parts (pushing.py). A suspend thus costs three
renderings (the status, the page's parts, then the pods' ending) and the status is on the
page within tens of milliseconds. It recomputes each
marked job's summary with `odh.training.status.summarize.summarize`, and when what a viewer would
see has changed renders the pushed HTML once (`training.live.pushes`) and sends it through the
channel layer:

- group `ns.<project>`: the job's row of the job list;
- group `job.<project>.<name>`: header status, Overview parts and new Events rows, with
  an announcement for the page's aria-live region when the status changed.

Message: `{"type": "hub.update", "html": "...", "announce": "...", "job":
"<ns>/<kind>/<name>", "status": "Running", "change": "added|modified|deleted"}`; a job
group's message adds `"event_rows"`, the new Events rows (sent to the page as a frame of
their own: see `live.render_event_rows`), and with them `"event_timeline"`, the Events
tab's timeline in words made again (`live.render_event_timeline`). "added": the first
message about a job created after the hub started (the job list fetches its table again).

Every new status of a job, its creation and its deletion is one job transition
(`transitions.TransitionRecorder`: claimed in the database off the flusher's thread, so
recorded once however many hubs or watchers see it, including what changed before the
hub started); a transition to Succeeded or Failed writes the job's history record. The
latest summary of every job stays in `summaries` for `/metrics`
(training/monitoring/exposition.py). Expired sessions (with their sealed tokens) are
deleted once a day (`sessions.SessionSweeper`, what `manage.py clearsessions` does).

While the hub cannot see the cluster (every watch failing, or its APIs not read yet), it
tells open pages so (`status.HubStatus`: `{"type": "hub.status", "state": "down"}` to the
`hub.status` group, then "up" when it sees again, and the current state every few
seconds): they show that live updates are paused, and get a fresh snapshot when it sees
again.

What the hub finds when it starts (or when it starts again) is taken as already seen:
pages render the current state themselves and the consumer sends a snapshot on connect;
the hub pushes what changes after that. A send that fails (Redis restarting) is tried
again a little later with the state current then.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from odh.training.cluster.client import ClusterClient
from odh.training.cluster.watch import ResilientWatch
from odh.training.kinds import JobKind
from odh.training.status.jobindex import JobIndex, JobKey
from odh.training.status.summary import JobSummary
from training.live.hub.cluster import (  # "cluster / queues changed" notices
    ClusterNotices,
    queue_notices,
)
from training.live.hub.flushing import Flushing
from training.live.hub.keepers.curves import CurveKeeper
from training.live.hub.keepers.evidence import EvidenceKeeper
from training.live.hub.keepers.notifying import NotificationSender
from training.live.hub.keepers.retries import RetryStarter
from training.live.hub.keepers.signs import SignWatcher
from training.live.hub.keepers.transitions import TransitionRecorder
from training.live.hub.keepers.usage import UsageRecorder
from training.live.hub.languages import ViewerLanguages
from training.live.hub.logs import LogHub
from training.live.hub.probe import ClusterProbe
from training.live.hub.pushing import Publisher, Pusher
from training.live.hub.sessions import SessionSweeper
from training.live.hub.status import HubStatus
from training.live.hub.watching import WATCH_TIMEOUT_SECONDS, Watching

log = logging.getLogger("training.live.hub")

DEBOUNCE_SECONDS = 0.2
# The first change of a quiet job goes out after this (it gathers what the same write
# changed at once: a job's status and its pods); changes that follow within DEBOUNCE_SECONDS
# of a flush wait for the window's end and go out together, but a new status does not wait.
LEAD_SECONDS = 0.01
PRIME_GRACE_SECONDS = 15.0  # start pushing even if a watch cannot list (e.g. forbidden)


class Hub(Flushing):
    def __init__(self, client_factory: Callable[[], ClusterClient], publisher: Publisher, *,
                 debounce: float = DEBOUNCE_SECONDS,
                 lead: float = LEAD_SECONDS,
                 watch_timeout: int = WATCH_TIMEOUT_SECONDS,
                 prime_grace: float = PRIME_GRACE_SECONDS,
                 refresh_client_factory: Callable[[], ClusterClient] | None = None,
                 transitions: TransitionRecorder | None = None,
                 sessions: SessionSweeper | None = None,
                 evidence: EvidenceKeeper | None = None,
                 usage: UsageRecorder | None = None,
                 notifications: NotificationSender | None = None,
                 signs: SignWatcher | None = None,
                 curves: CurveKeeper | None = None,
                 retries: RetryStarter | None = None) -> None:
        self.client_factory = client_factory
        # each job's training curves, read from its lead log and kept with the job
        self.curves = curves
        # starts the automatic retries the recorder decides with each failure
        self.retries = retries
        if retries is not None and retries.client_factory is None:
            retries.client_factory = client_factory
        # sends the notifications the recorder queues with each transition
        self.notifications = notifications
        if transitions is not None and transitions.recorded is None:
            woken = [part.wake for part in (notifications, retries) if part is not None]
            transitions.recorded = (lambda: [wake() for wake in woken]) if woken else None
        # signs worth telling before a job ends (Pending too long, a hang, early warnings),
        # looked for in the jobs this hub knows, told through the same sender
        self.signs = signs
        if signs is not None:
            if signs.jobs is None:
                signs.jobs = self.jobs_now
            if signs.client_factory is None:
                signs.client_factory = client_factory
            if signs.claimed is None and notifications is not None:
                signs.claimed = notifications.wake
        self.sessions = sessions  # deletes expired sessions daily (training/live/hub/sessions.py)
        # one event per job transition, and the job history written from it
        self.transitions = transitions
        # each failed run of a job's container, kept before the cluster deletes it
        self.evidence = evidence
        # what each finished job's Workers used, written on its history record
        self.usage = usage
        if usage is not None and transitions is not None and transitions.finished is None:
            transitions.finished = usage.finished
        self.publisher = publisher
        # who watches what in which language: each push rendered once per language read,
        # only for groups watched (training/live/hub/languages.py)
        self.languages = ViewerLanguages()
        self.logs = LogHub(publisher, client_factory,  # live logs: one stream per pod
                           on_language=self._interest)
        self.debounce = debounce
        self.lead = lead
        self.prime_grace = prime_grace
        self.ready = threading.Event()  # watches listed once, pushing changes from now on
        self.flushes = 0
        # rendering and sending, and what each job's viewers were last sent
        self.pusher = Pusher(publisher, self.languages)
        self.summaries: dict[JobKey, JobSummary] = {}  # the latest of every job, for /metrics
        # job -> when to flush it, and whether only a new status may flush it then
        self._dirty: dict[JobKey, tuple[float, bool]] = {}
        self._flushed: dict[JobKey, float] = {}  # job -> its last flush
        self._forced: set[JobKey] = set()  # to be sent whatever viewers were sent before
        self._cond = threading.Condition()
        self._skips_pruned = 0.0
        self._stop = threading.Event()
        self._started_at = 0.0
        self._flusher: threading.Thread | None = None
        # the admin overview: told (at most every few seconds) that quotas, jobs or pods moved
        self.cluster = ClusterNotices(self.pusher.send, self.ready)
        # pages showing where jobs stand in Kueue's queues: told when a Workload moved
        self.queues = queue_notices(self.pusher.send, self.ready)
        # the watches and the index they feed; each change marks the jobs it may touch
        self.watching = Watching(client_factory, changed=self._mark, opened=self._wake,
                                 cluster_changed=self.cluster.changed,
                                 queues_changed=self.queues.changed, evidence=evidence,
                                 refresh_client_factory=refresh_client_factory,
                                 watch_timeout=watch_timeout)
        # a server that hangs leaves the watches silent, not failing: asked directly
        self.probe = ClusterProbe(client_factory, self.watching.reconnect,
                                  heard=self.watching.last_heard)
        self.epoch = uuid.uuid4().hex  # this start of the hub (training/live/hub/status.py)
        # open pages: told whether the hub sees the cluster (else their updates are paused)
        self.status = HubStatus(self.pusher.send, self.sees_cluster, ready=self.ready.is_set,
                                epoch=self.epoch)

    # -- life ---------------------------------------------------------------------------------
    def start(self) -> Hub:
        """Start in the background; returns at once (discovery and lists happen later)."""
        if self._flusher is not None:
            return self
        self._started_at = time.monotonic()
        self.logs.start()
        if self.transitions is not None:
            self.transitions.start()
        if self.evidence is not None:
            self.evidence.start()
        if self.usage is not None:
            self.usage.start()
        if self.curves is not None:
            self.curves.start()
        if self.sessions is not None:
            self.sessions.start()
        if self.notifications is not None:
            self.notifications.start()
        if self.signs is not None:
            self.signs.start()
        if self.retries is not None:
            self.retries.start()
        self.cluster.start()
        self.queues.start()
        self.probe.start()
        self.status.start()
        self.watching.start()
        self._flusher = threading.Thread(target=self._flush_loop, daemon=True, name="hub-flush")
        self._flusher.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake()
        self.watching.stop()
        if self._flusher is not None and self._flusher is not threading.current_thread():
            self._flusher.join(10)
        self.logs.stop()
        if self.transitions is not None:
            self.transitions.stop()
        if self.evidence is not None:
            self.evidence.stop()
        if self.usage is not None:
            self.usage.stop()
        if self.curves is not None:
            self.curves.stop()
        if self.sessions is not None:
            self.sessions.stop()
        if self.signs is not None:
            self.signs.stop()
        if self.notifications is not None:
            self.notifications.stop()
        if self.retries is not None:
            self.retries.stop()
        self.cluster.stop()
        self.queues.stop()
        self.probe.stop()
        self.status.stop()
        self.publisher.close()

    @property
    def renders(self) -> int:
        """Pushes rendered (one per message and viewer language)."""
        return self.pusher.renders

    @property
    def sent(self) -> int:
        return self.pusher.sent

    @property
    def running(self) -> bool:
        return self._flusher is not None and not self._stop.is_set()

    # what the watching keeps (watching.py), as the hub's users have always read it
    @property
    def index(self) -> JobIndex:
        return self.watching.index

    @property
    def watches(self) -> list[ResilientWatch]:
        return self.watching.watches

    @property
    def kinds(self) -> list[JobKind]:
        return self.watching.kinds

    @property
    def other_pods_watch(self) -> ResilientWatch | None:
        return self.watching.other_pods_watch

    @property
    def queue_watch(self) -> ResilientWatch | None:
        return self.watching.queue_watch

    def sees_cluster(self) -> bool:
        """Whether the hub learns of changes now: the API server answers the probe and the
        watches see it (`Watching.sees_cluster`)."""
        return not self.probe.silent and self.watching.sees_cluster()

    def jobs_now(self) -> list[tuple[JobSummary, Any]]:
        """(the latest summary, the indexed objects) of every job, from any thread."""
        found = []
        for key, summary in dict(self.summaries).items():  # a copy: the flusher writes it
            data = self.index.job_data(key)
            if data is not None:
                found.append((summary, data))
        return found

    def wait_ready(self, timeout: float) -> bool:
        """Wait until the first lists are done, but not while the hub is known not to see
        the cluster (a page then gets its snapshot at once, and is told updates are
        paused). True when ready."""
        deadline = time.monotonic() + timeout
        while not self.ready.wait(0.1):
            if self.status.down or time.monotonic() >= deadline or self._stop.is_set():
                return False
        return True

    def stats(self) -> dict[str, Any]:
        return {"ready": self.ready.is_set(), "kinds": [k.kind for k in self.kinds],
                "watches": [w.stats() for w in self.watches], "index": self.index.counts(),
                "sees_cluster": self.status.state == "up",
                "sent": self.pusher.sent, "send_errors": self.pusher.send_errors,
                "flushes": self.flushes,
                "dirty": len(self._dirty),  # jobs changed, not yet summarized and sent
                "logs": self.logs.stats(),
                "transitions": self.transitions.stats() if self.transitions is not None
                else None,
                "evidence": self.evidence.stats() if self.evidence is not None else None,
                "usage": self.usage.stats() if self.usage is not None else None,
                "notifications": self.notifications.stats()
                if self.notifications is not None else None,
                "signs": self.signs.stats() if self.signs is not None else None,
                "curves": self.curves.stats() if self.curves is not None else None,
                "retries": self.retries.stats() if self.retries is not None else None}

    # -- viewers ---------------------------------------------------------------------------
    def _interest(self, language: str, groups: list[str] | None) -> None:
        """A consumer names its language and groups: a group watched anew gets, at once, the
        jobs whose changes it was not sent meanwhile (its snapshot may predate them)."""
        new = self.languages.seen(language, groups)
        if not new:
            return
        self.resend(self.pusher.take_skipped([group for group, _language in new]))

    def resend(self, keys: set[JobKey]) -> None:
        """Send these jobs' rows and pages to their viewers again, whatever they were sent
        before (as soon as the flusher gets to them)."""
        with self._cond:
            self._forced |= keys
        self._mark(keys)
