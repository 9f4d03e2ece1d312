"""What every kind of live subscription is made of, and the two kinds of the job pages.

`SubscriptionKind` is what a kind implements (see training/live/subscriptions.py, which lists
every kind in its registry `KINDS` and holds the helpers the consumer calls); `ProjectJobs`
(`ns=<project>`: a project's rows) and `OneJob` (`job=<project>/<kind>/<name>`: one job's
page) are here, the admin overview, live logs and Kueue's queues in modules of their own
(training/live/cluster_subscriptions.py, log_subscriptions.py, queue_subscriptions.py). None of
them imports the registry: it imports them.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import translation
from django.utils.translation import gettext as _

from odh.training import errors
from odh.training.cluster.access import GET_JOBS, Access
from odh.training.cluster.api import is_namespace_name, is_object_name
from odh.training.cluster.client import ClusterClient
from odh.training.durations import format_timestamp
from odh.training.kinds import KINDS as JOB_KINDS
from odh.training.kinds import JobKind
from odh.training.status import queries
from odh.training.status.summarize import summarize
from training import diagnoses
from training.live import pushes as live
from training.live.hub import snapshots as hub_snapshots
from training.live.hub.groups import job_group, ns_group
from training.live.hub.languages import in_viewer_language, localized
from training.permissions import may

log = logging.getLogger("training.live")

SOCKET_PATH = "/ws/live/"
MAX_SUBSCRIPTIONS = 50  # per socket: one page needs a few (a job list: its projects)
LIST_TABLE = "job-table"  # the job list's element that a `refresh` frame fetches again

Frame = str | dict[str, Any]


class BadSubscription(ValueError):
    """A subscription the socket cannot serve; `reason` is shown to the person."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class AccessRefused(Exception):
    """The person may not see this project (any more)."""

    def __init__(self, namespace: str) -> None:
        super().__init__(namespace)
        self.namespace = namespace


@dataclass(frozen=True)
class Subscription:
    kind: str
    value: str
    namespace: str
    group: str
    access: Access
    job_ref: str = ""  # "<ns>/<kind slug>/<name>" for subscriptions to one job
    hub_group: str = ""  # the watch hub's group it is fed by (in no language), if any

    @property
    def key(self) -> str:
        return f"{self.kind}={self.value}"


@dataclass
class ViewState:
    """What one socket's page shows, as far as the kinds need to remember it."""

    statuses: dict[str, str] = field(default_factory=dict)  # job ref -> last status sent
    # project -> slugs of the job kinds the person may get there (`ns` subscriptions)
    kinds: dict[str, frozenset[str]] = field(default_factory=dict)
    # project -> may the person list its pods / its events (what the parts that show pods
    # and Events rows need, as their HTTP twins do); unknown counts as no
    pods: dict[str, bool] = field(default_factory=dict)
    events: dict[str, bool] = field(default_factory=dict)

    # the job list's rows on the page ("<ns>/<kind>/<name>"), when the page names them
    # (`rows=`): only these are sent; None: every row of the followed projects
    shown: frozenset[str] | None = None
    listed: datetime | None = None  # when the page listed its jobs (`listed=`)
    offpage: set[str] = field(default_factory=set)  # jobs not shown that changed since
    # the job page's tab (`tab=`): Events rows are rendered and sent only to the Events
    # tab (the other tabs have no place for them); "": every part, as to an older page
    tab: str = ""
    # the signed-in person's user name (the session's): whose notices the bell may follow
    username: str = ""
    # the browser's time zone (the cookie pages read: training/web/localtime.py), "" if none
    time_zone: str = ""

    def wants_events(self) -> bool:
        return self.tab in ("", "events")

    def sees_pods(self, namespace: str) -> bool:
        return self.pods.get(namespace, False)

    def sees_events(self, namespace: str) -> bool:
        return self.events.get(namespace, False)


def _row_id(job_ref: str) -> str:
    ns, slug, name = job_ref.split("/", 2)
    return live.row_id(ns, slug, name)


def announce(text: str, only_if: str = "") -> dict[str, Any]:
    """A JSON frame for the page's aria-live region; `only_if`: an element id the page
    must show for the sentence to concern it (a list row on this page of the list)."""
    return {"type": "announce", "text": text, "only_if": only_if}


def statuses(items: list[tuple[str, str, str]]) -> dict[str, Any]:
    """Sent just before a snapshot: (element id, status, sentence) of each job in it. The
    page announces the sentence of each element whose status it shows differently (the
    status label's `data-status`): what changed while the page was not connected."""
    return {"type": "statuses",
            "jobs": [{"only_if": i, "status": s, "text": t} for i, s, t in items]}


def refresh(target: str, items: list[tuple[str, str, str]]) -> dict[str, Any]:
    """Asks the page to fetch its element `target` again, over HTTP, at its own address:
    with its filters and the person's own token (static/js/live.js, debounced).

    `items`: (element id, creation time or "", sentence) of each job that may have to
    appear. The page fetches only if one of them is not shown yet and, when a time is
    given, was created after the page listed its jobs (the table's `data-listed-at`); it
    announces the sentence of each that the new table shows. Pushed for a job the watch
    hub reports as added (only the person's filters can tell whether the list shows it),
    and in the job list's snapshot, for a job created while the page was not (yet, or any
    more) connected."""
    return {"type": "refresh", "target": target,
            "jobs": [{"only_if": i, "created": c, "text": t} for i, c, t in items]}


def _served_kinds(client: ClusterClient) -> list[JobKind]:
    from training.projects import served_kinds  # the list page's, cached

    return served_kinds(client) or [JOB_KINDS["mpijob"]]


def _get_access(kind: JobKind) -> Access:
    return Access("get", kind.plural, kind.group)


LIST_PODS = Access("list", "pods")
LIST_EVENTS = Access("list", "events")


def _parts_allowed(client: ClusterClient, token: str, namespace: str, view: ViewState) -> None:
    """What of a job the person may be shown there besides its status: its pods (pod rows,
    Topology, the step and the Workers' counts they make), its Events rows."""
    view.pods[namespace] = may(client, token, namespace, LIST_PODS)
    view.events[namespace] = may(client, token, namespace, LIST_EVENTS)


def variant(message: dict[str, Any], key: str, full: bool) -> Any:
    """A hub message's part as this viewer may have it: `key` when it may see the job's
    pods and events, else `<key>_status` (what the job object alone says)."""
    return message.get(key) if full else message.get(f"{key}_status")


# -- kinds -------------------------------------------------------------------------------------
class SubscriptionKind(ABC):
    name = ""

    @abstractmethod
    def parse(self, value: str) -> Subscription:
        ...

    def authorize(self, client: ClusterClient, token: str, sub: Subscription,
                  view: ViewState) -> None:
        """Raises `AccessRefused` unless the token's owner may follow `sub` (blocking;
        answers kept in training/permissions.py). By default: the subscription's one question."""
        if not may(client, token, sub.namespace, sub.access):
            raise AccessRefused(sub.namespace)

    @abstractmethod
    def snapshot(self, client: ClusterClient, sub: Subscription, view: ViewState,
                 now: datetime) -> list[Frame]:
        ...

    def on_message(self, sub: Subscription, message: dict[str, Any],
                   view: ViewState) -> list[Frame]:
        return []


class ProjectJobs(SubscriptionKind):
    """`ns=<project>`: the rows of the job list for that project's jobs, of the kinds the
    person may get there."""

    name = "ns"

    def parse(self, value: str) -> Subscription:
        if not is_namespace_name(value):
            with in_viewer_language():
                reason = _("“%(value)s” is not a project name.") % {"value": value[:60]}
            raise BadSubscription(reason)
        return Subscription(self.name, value, value, localized(ns_group(value)), GET_JOBS,
                            hub_group=ns_group(value))

    def authorize(self, client: ClusterClient, token: str, sub: Subscription,
                  view: ViewState) -> None:
        """Asks `get` for each served job kind; refused only if every kind is."""
        allowed = frozenset(
            kind.slug for kind in _served_kinds(client)
            if may(client, token, sub.namespace, _get_access(kind)))
        if not allowed:
            raise AccessRefused(sub.namespace)
        view.kinds[sub.namespace] = allowed
        _parts_allowed(client, token, sub.namespace, view)

    def snapshot(self, client: ClusterClient, sub: Subscription, view: ViewState,
                 now: datetime) -> list[Frame]:
        allowed = view.kinds.get(sub.namespace, frozenset())
        kinds = [k for k in _served_kinds(client) if k.slug in allowed]
        # the hub's summaries, as the list page takes them (access reviewed in authorize)
        listing = hub_snapshots.hub_listing(
            [sub.namespace], kinds, lambda _ns, kind: kind.slug in allowed,
            lambda ns: view.sees_pods(ns), now, lambda ns: view.sees_events(ns))
        if listing is None:  # no hub here: the API, with the person's token
            listing = queries.list_summaries(client, [sub.namespace], kinds, now,
                                             with_pods=view.sees_pods(sub.namespace))
        if listing.forbidden_namespaces:
            raise AccessRefused(sub.namespace)
        rows, items, created = [], [], []
        for summary in listing.summaries:
            job_ref = f"{summary.namespace}/{summary.kind.slug}/{summary.name}"
            if view.shown is not None and job_ref not in view.shown:
                # not on the page: only a job created since it listed its jobs is named
                if summary.created and (view.listed is None or summary.created >= view.listed):
                    created.append((_row_id(job_ref), format_timestamp(summary.created),
                                    live.creation_announcement(summary.name)))
                continue
            view.statuses[job_ref] = str(summary.status)
            job, pods = listing.objects.get((summary.namespace, summary.kind.slug,
                                             summary.name), ({}, []))
            # what the objects tell with the job's events, as the page's row and the hub's
            # pushes tell it (the cell's id carries it: the page's cell is kept)
            candidates = listing.indexed_events(
                (summary.namespace, summary.kind.slug, summary.name)) \
                if job and listing.indexed_events is not None else None
            events = queries.job_events(summary.kind, job, pods, candidates) \
                if candidates else []
            seen = diagnoses.object_diagnosis(job, pods, events, summary) if job else None
            rows.append(live.render_list_row(summary, now, seen))
            items.append((_row_id(job_ref), str(summary.status),
                          live.announcement(summary, seen)))
            created.append((_row_id(job_ref),
                            format_timestamp(summary.created) if summary.created else "",
                            live.creation_announcement(summary.name)))
        if not rows:
            return [refresh(LIST_TABLE, created)] if created else []
        return [statuses(items), "".join(rows), refresh(LIST_TABLE, created)]

    def on_message(self, sub: Subscription, message: dict[str, Any],
                   view: ViewState) -> list[Frame]:
        job_ref = str(message.get("job") or "")
        parts = job_ref.split("/")
        if len(parts) != 3 or parts[0] != sub.namespace:
            return []
        if parts[1] not in view.kinds.get(sub.namespace, frozenset()):
            return []  # a kind this person may not get here: not even its name
        if view.shown is not None and job_ref not in view.shown:
            return self._off_page(job_ref, message, view)
        frames: list[Frame] = []
        status = str(message.get("status") or "")
        before = view.statuses.get(job_ref)
        text = str(message.get("announce") or "")
        if not text and before is not None and status and status != before:
            name = job_ref.rsplit("/", 1)[1]
            if message.get("change") == "deleted":
                text = live.deletion_announcement(name)
            else:
                with in_viewer_language():
                    text = _("Job %(name)s is now %(status)s.") % {
                        "name": name, "status": live.status_text(status)}
        if text:
            # before the HTML: a deleted row must still be on the page to be announced
            frames.append(announce(text, only_if=_row_id(job_ref)))
        if status:
            view.statuses[job_ref] = status
        row = variant(message, "html", view.sees_pods(sub.namespace))
        if row:
            frames.append(str(row))
        if message.get("change") == "added":
            # a new job: the page fetches its table again, in case its filters show it
            frames.append(refresh(LIST_TABLE, [(_row_id(job_ref), "",
                                                live.creation_announcement(parts[2]))]))
        return frames


    @staticmethod
    def _off_page(job_ref: str, message: dict[str, Any], view: ViewState) -> list[Frame]:
        """A job the page does not show: a new one may belong on it (the page fetches its
        table if so); another one is counted, and the page says how many changed."""
        if message.get("change") == "added":
            name = job_ref.rsplit("/", 1)[1]
            return [refresh(LIST_TABLE, [(_row_id(job_ref), "",
                                          live.creation_announcement(name))])]
        if job_ref in view.offpage:
            return []
        view.offpage.add(job_ref)
        return [live.render_off_page_changes(len(view.offpage))]


class OneJob(SubscriptionKind):
    """`job=<project>/<kind>/<name>`: a job's page (header, Overview, Topology, Events)."""

    name = "job"

    def parse(self, value: str) -> Subscription:
        parts = value.split("/")
        if len(parts) != 3 or not is_namespace_name(parts[0]) \
                or parts[1] not in JOB_KINDS or not is_object_name(parts[2]):
            with in_viewer_language():
                reason = _("“%(value)s” does not name a job (project/type/name).") % {
                    "value": value[:80]}
            raise BadSubscription(reason)
        ns, slug, name = parts
        kind = JOB_KINDS[slug]
        return Subscription(self.name, value, ns, localized(job_group(ns, name)),
                            Access("get", kind.plural, kind.group), job_ref=value,
                            hub_group=job_group(ns, name))

    def authorize(self, client: ClusterClient, token: str, sub: Subscription,
                  view: ViewState) -> None:
        super().authorize(client, token, sub, view)
        _parts_allowed(client, token, sub.namespace, view)

    def snapshot(self, client: ClusterClient, sub: Subscription, view: ViewState,
                 now: datetime) -> list[Frame]:
        ns, slug, name = sub.value.split("/")
        full = view.sees_pods(ns) and view.sees_events(ns)
        kind = JOB_KINDS[slug]
        try:
            if not full:  # what its HTTP page would refuse: the job's status only
                return self._status_only(client, sub, view, now)
            events = view.wants_events()
            found = hub_snapshots.job_state(kind, ns, name)
            if found is not None:  # from the hub's index, rendered once for all viewers
                data, version = found
                status, frames = hub_snapshots.RENDERS.get(
                    (sub.value, translation.get_language(), version, events),
                    lambda: self._frames(hub_snapshots.detail_of(kind, data, now), now,
                                         events))
            else:
                status, frames = self._frames(queries.job_detail(client, kind, ns, name, now),
                                              now, events)
        except errors.NotFound:
            # gone while the page was away (or not there yet): say so, keep listening
            view.statuses.pop(sub.job_ref, None)
            return [announce(live.deletion_announcement(name), only_if="job-header-status"),
                    live.render_job_deleted(ns, slug, name)]
        except errors.Forbidden:
            raise AccessRefused(ns) from None
        view.statuses[sub.job_ref] = status
        return frames

    @staticmethod
    def _frames(detail: queries.JobDetail, now: datetime,
                events: bool = True) -> tuple[str, list[Frame]]:
        """The snapshot's frames; the Events rows only for a page that shows them (what a
        connect costs then does not grow with the job's age)."""
        summary = detail.summary
        seen = diagnoses.object_diagnosis(detail.job, detail.pods, detail.events, summary)
        frames: list[Frame] = [
            statuses([("job-header-status", str(summary.status),
                       live.announcement(summary, seen))]),
            live.render_job_update(summary, detail.job, detail.pods, now, seen)]
        if events:
            frames.append(live.render_event_rows(detail.events, now))
            frames.append(live.render_event_timeline(detail.kind, detail.job, detail.pods,
                                                     detail.events, now))
        return str(summary.status), frames

    def _status_only(self, client: ClusterClient, sub: Subscription, view: ViewState,
                     now: datetime) -> list[Frame]:
        ns, slug, name = sub.value.split("/")
        kind = JOB_KINDS[slug]
        job = client.get_job(kind, ns, name)
        job.setdefault("apiVersion", kind.api_version)
        job.setdefault("kind", kind.kind)
        summary = summarize(job, [], None, now)
        view.statuses[sub.job_ref] = str(summary.status)
        return [statuses([("job-header-status", str(summary.status),
                           live.announcement(summary))]),
                live.render_job_status(summary, job, now)]

    def on_message(self, sub: Subscription, message: dict[str, Any],
                   view: ViewState) -> list[Frame]:
        if message.get("job") != sub.job_ref:
            return []  # a job of another kind with the same name shares the group
        full = view.sees_pods(sub.namespace) and view.sees_events(sub.namespace)
        frames: list[Frame] = []
        said = variant(message, "announce", full)
        if said:
            frames.append(announce(str(said), only_if="job-header-status"))
        if message.get("status"):
            view.statuses[sub.job_ref] = str(message["status"])
        html = variant(message, "html", full)
        if html:
            frames.append(str(html))
        if message.get("event_rows") and view.sees_events(sub.namespace) \
                and view.wants_events():
            frames.append(str(message["event_rows"]))  # a frame of its own (a <tbody>)
            if message.get("event_timeline"):
                frames.append(str(message["event_timeline"]))
        return frames
