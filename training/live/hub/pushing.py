"""The watch hub's pushes: what a viewer of a job was last sent, the HTML rendered once per
viewer language (the same partials the pages render: training/live/pushes.py) and sent
through the channel layer, only to groups someone watches.

- group `ns.<project>`: the job's row of the job list;
- group `job.<project>.<name>`: header status, Overview parts and new Events rows, with an
  announcement for the page's aria-live region when the status changed. A new status goes
  first in a message of its own (the header and the announcement, quick to render), then
  the rest of the page's parts: the status is on the page before the Topology is drawn.

A group nobody watches is not rendered for; its jobs are remembered a while
(`take_skipped`), for a viewer whose interest reaches the hub after its snapshot. A send
that fails (Redis restarting) is tried again a little later (`push` says when).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import translation

from odh.training.status.jobindex import JobData, JobKey
from odh.training.status.summarize import summarize
from odh.training.status.summary import JobSummary
from training import diagnoses
from training.live import pushes as live
from training.live.hub.groups import job_group, ns_group
from training.live.hub.languages import ViewerLanguages, localized

log = logging.getLogger("training.live.hub")

SEND_TIMEOUT_SECONDS = 5.0
RETRY_SECONDS = (0.5, 10.0)  # a failed send is tried again after this, doubling
# a group nobody watched: its unrendered jobs are remembered this long, for a viewer whose
# interest reaches the hub after its snapshot (a few milliseconds, seconds at worst)
SKIP_MEMORY = 30.0


@dataclass
class _Seen:
    """What viewers of one job were last sent (or found on their page)."""

    row: tuple | None = None
    detail: str | None = None
    status: str | None = None
    events: dict[str, str] = field(default_factory=dict)  # uid -> resourceVersion
    retry: float = 0.0


def _row_fingerprint(s: JobSummary) -> tuple:
    return (s.status, s.reason, s.lifecycle_step, s.workers_ready, s.workers_total, s.gpus,
            s.created_by, s.created, s.started, s.finished)


def _detail_fingerprint(s: JobSummary) -> str:
    values = dataclasses.asdict(s)
    values.pop("observed_at", None)
    return repr(values)


def uid_of(obj: dict) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _rv(obj: dict) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class Publisher:
    """Sends group messages on one event loop.

    Channel layers are asyncio code bound to a loop: the in-memory layer's queues must be
    used on the loop its consumers wait on (the ASGI server's), so the embedded hub sends
    on that loop; the Redis layer works from any loop, so `runwatcher` gives the hub one
    of its own.
    """

    def __init__(self, layer: Any, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.layer = layer
        self._own = loop is None
        self.loop = loop or asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        if self._own:
            self._thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                            name="hub-publisher")
            self._thread.start()

    def send(self, group: str, message: dict) -> None:
        future = asyncio.run_coroutine_threadsafe(self.layer.group_send(group, message),
                                                  self.loop)
        try:
            future.result(SEND_TIMEOUT_SECONDS)
        except TimeoutError:
            future.cancel()
            raise

    def close(self) -> None:
        if self._own:
            self.loop.call_soon_threadsafe(self.loop.stop)
            if self._thread is not None:
                self._thread.join(5)


class Pusher:
    """Renders and sends the hub's pushes (`publisher`: the channel layer on its loop;
    `languages`: who watches what, in which language)."""

    def __init__(self, publisher: Publisher, languages: ViewerLanguages) -> None:
        self.publisher = publisher
        self.languages = languages
        self.renders = 0  # pushes rendered (one per message and language)
        self.sent = 0
        self.send_errors = 0
        self.seen: dict[JobKey, _Seen] = {}  # what viewers of each job were last sent
        # group -> jobs whose pushes to it were not rendered (nobody watched), and when
        self._skipped: dict[str, dict[JobKey, float]] = {}
        self._lock = threading.Lock()

    def take_skipped(self, groups: list[str]) -> set[JobKey]:
        """The jobs not rendered for these groups (now watched): to be sent again."""
        keys: set[JobKey] = set()
        with self._lock:
            for group in groups:
                keys |= set(self._skipped.pop(group, {}))
        return keys

    def forget_skipped(self, now: float) -> None:
        with self._lock:
            for group in list(self._skipped):
                kept = {k: t for k, t in self._skipped[group].items() if now - t < SKIP_MEMORY}
                if kept:
                    self._skipped[group] = kept
                else:
                    del self._skipped[group]

    def gone(self, key: JobKey, send: bool) -> None:
        """The job was deleted: its viewers are told (with `send`), and it is forgotten."""
        if self.seen.pop(key, None) is not None and send:
            self.send_deleted(key)

    def push(self, key: JobKey, data: JobData, events: list[dict], summary: JobSummary,
             diagnosis: Any, now: datetime, *, send: bool, forced: bool) -> float | None:
        """Send the job's viewers what changed for them (with `send`; without, note what
        their pages show now); the delay after which to try again when a send failed."""
        ns, slug, name = key
        row = _row_fingerprint(summary) + ((diagnosis.headline,) if diagnosis else ())
        detail = _detail_fingerprint(summary)
        current = {uid_of(e): _rv(e) for e in events}
        # new to viewers until its row reached them (a failed first send is retried as new)
        seen = self.seen.get(key)
        added = seen is None or seen.row is None
        if seen is None:
            seen = self.seen[key] = _Seen()
        if not send:
            seen.row, seen.detail, seen.status, seen.events = row, detail, summary.status, current
            return None
        failed = False
        job_ref = f"{ns}/{slug}/{name}"
        status = str(summary.status)
        change = "added" if added else "modified"
        # what the job object alone says: for viewers who may not see its pods or events
        bare = summarize(data.job, [], None, now, data.layout)

        @functools.cache
        def in_language(language: str) -> tuple[JobSummary, Any, JobSummary]:
            """The summaries and diagnosis in one viewer language (their sentences are
            written when they are made): the ones above for the site's language."""
            if language == settings.LANGUAGE_CODE:
                return summary, diagnosis, bare
            said = summarize(data.job, data.pods, events, now, data.layout)
            return (said, diagnoses.object_diagnosis(data.job, data.pods, events, said),
                    summarize(data.job, [], None, now, data.layout))
        new_events = events if forced else [
            e for e in events if seen.events.get(uid_of(e)) != _rv(e)]
        changed = status != seen.status
        announced = False
        if changed:
            # the new status first, on its own: its header renders in well under a
            # millisecond, the rest of the page (Overview, Topology) in tens of them
            def status_message() -> dict:
                said, why, said_bare = in_language(translation.get_language())
                return {"type": "hub.update",
                        "html": live.render_job_status(said, data.job, now),
                        "event_rows": "", "event_timeline": "",
                        "html_status": live.render_job_status(said_bare, data.job, now),
                        "announce": live.announcement(said, why),
                        "announce_status": live.announcement(said_bare),
                        "job": job_ref, "status": status, "change": change}
            announced = self.send_localized(job_group(ns, name), status_message)
        if row != seen.row or forced:
            def row_message() -> dict:
                said, why, said_bare = in_language(translation.get_language())
                return {"type": "hub.update",
                        "html": live.render_list_row(said, now, why),
                        "html_status": live.render_list_row(said_bare, now),
                        "announce": "", "job": job_ref, "status": status, "change": change}
            if self.send_localized(ns_group(ns), row_message, key):
                seen.row = row
            else:
                failed = True
        if detail != seen.detail or new_events or forced:
            said_first = changed and announced

            def job_message() -> dict:
                said, why, said_bare = in_language(translation.get_language())
                rows = live.render_event_rows(new_events, now, new=True) if new_events else ""
                timeline = live.render_event_timeline(data.kind, data.job, data.pods, events,
                                                      now) if new_events else ""
                return {"type": "hub.update",
                        "html": live.render_job_update(said, data.job, data.pods, now, why),
                        "event_rows": rows, "event_timeline": timeline,
                        "html_status": live.render_job_status(said_bare, data.job, now),
                        "announce": live.announcement(said, why)
                        if changed and not said_first else "",
                        "announce_status": live.announcement(said_bare)
                        if changed and not said_first else "",
                        "job": job_ref, "status": status, "change": change}
            if self.send_localized(job_group(ns, name), job_message, key):
                seen.detail, seen.status, seen.events = detail, status, current
            else:
                failed = True
        if failed:
            seen.retry = min(max(seen.retry * 2, RETRY_SECONDS[0]), RETRY_SECONDS[1])
            return seen.retry
        seen.retry = 0.0
        return None

    def send_deleted(self, key: JobKey) -> None:
        ns, slug, name = key
        job_ref = f"{ns}/{slug}/{name}"

        def gone_row() -> dict:
            html = live.render_deleted_row(ns, slug, name)
            return {"type": "hub.update", "html": html, "html_status": html, "announce": "",
                    "job": job_ref, "status": "Deleted", "change": "deleted"}

        def gone_job() -> dict:
            html = live.render_job_deleted(ns, slug, name)
            said = live.deletion_announcement(name)
            return {"type": "hub.update", "html": html, "html_status": html, "announce": said,
                    "announce_status": said, "job": job_ref, "status": "Deleted",
                    "change": "deleted"}

        self.send_localized(ns_group(ns), gone_row)
        self.send_localized(job_group(ns, name), gone_job)

    def send_localized(self, group: str, message: Callable[[], dict],
                        key: JobKey | None = None) -> bool:
        """Render `message` in each language the group's viewers read and send each
        rendering to that language's group (training/live/hub/languages.py); nothing when
        nobody watches the group (`key` remembered a while: see `take_skipped`). True: every
        send went out (or there was none to make)."""
        languages = self.languages.for_group(group)
        if not languages and key is not None:
            with self._lock:
                self._skipped.setdefault(group, {})[key] = time.monotonic()
        sent = True
        for language in languages:
            with translation.override(language):
                rendered = message()
            self.renders += 1
            sent = self.send(localized(group, language), rendered) and sent
        return sent

    def send(self, group: str, message: dict) -> bool:
        try:
            self.publisher.send(group, message)
        except Exception as e:  # the channel layer is down (Redis restarting) or full
            self.send_errors += 1
            log.warning("watch hub: could not send to %s: %s", group, e or type(e).__name__)
            return False
        self.sent += 1
        return True
