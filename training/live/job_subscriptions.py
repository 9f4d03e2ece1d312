"""The subscription kinds of the job pages: a project's job list (`ProjectJobs`) and one
job's page (`OneJob`), on the base of training/live/subscription_kinds.py."""

from __future__ import annotations

import logging
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
from training.live.subscription_kinds import (
    LIST_TABLE,
    AccessRefused,
    BadSubscription,
    Frame,
    Subscription,
    SubscriptionKind,
    ViewState,
    announce,
    refresh,
    statuses,
    variant,
)
from training.permissions import may

log = logging.getLogger("training.live")



def row_id(job_ref: str) -> str:
    ns, slug, name = job_ref.split("/", 2)
    return live.row_id(ns, slug, name)


def kinds_served(client: ClusterClient) -> list[JobKind]:
    from training.projects import served_kinds  # the list page's, cached

    return served_kinds(client) or [JOB_KINDS["mpijob"]]


def get_access(kind: JobKind) -> Access:
    return Access("get", kind.plural, kind.group)


LIST_PODS = Access("list", "pods")
LIST_EVENTS = Access("list", "events")


def parts_allowed(client: ClusterClient, token: str, namespace: str, view: ViewState) -> None:
    """What of a job the person may be shown there besides its status: its pods (pod rows,
    Topology, the step and the Workers' counts they make), its Events rows."""
    view.pods[namespace] = may(client, token, namespace, LIST_PODS)
    view.events[namespace] = may(client, token, namespace, LIST_EVENTS)


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
            kind.slug for kind in kinds_served(client)
            if may(client, token, sub.namespace, get_access(kind)))
        if not allowed:
            raise AccessRefused(sub.namespace)
        view.kinds[sub.namespace] = allowed
        parts_allowed(client, token, sub.namespace, view)

    def snapshot(self, client: ClusterClient, sub: Subscription, view: ViewState,
                 now: datetime) -> list[Frame]:
        allowed = view.kinds.get(sub.namespace, frozenset())
        kinds = [k for k in kinds_served(client) if k.slug in allowed]
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
                    created.append((row_id(job_ref), format_timestamp(summary.created),
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
            items.append((row_id(job_ref), str(summary.status),
                          live.announcement(summary, seen)))
            created.append((row_id(job_ref),
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
            frames.append(announce(text, only_if=row_id(job_ref)))
        if status:
            view.statuses[job_ref] = status
        row = variant(message, "html", view.sees_pods(sub.namespace))
        if row:
            frames.append(str(row))
        if message.get("change") == "added":
            # a new job: the page fetches its table again, in case its filters show it
            frames.append(refresh(LIST_TABLE, [(row_id(job_ref), "",
                                                live.creation_announcement(parts[2]))]))
        return frames


    @staticmethod
    def _off_page(job_ref: str, message: dict[str, Any], view: ViewState) -> list[Frame]:
        """A job the page does not show: a new one may belong on it (the page fetches its
        table if so); another one is counted, and the page says how many changed."""
        if message.get("change") == "added":
            name = job_ref.rsplit("/", 1)[1]
            return [refresh(LIST_TABLE, [(row_id(job_ref), "",
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
        parts_allowed(client, token, sub.namespace, view)

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
