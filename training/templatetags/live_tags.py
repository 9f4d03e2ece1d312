"""Template helpers for live pages: the socket element, ages and durations that keep
counting, and the Topology tab's layout."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from odh.training.durations import format_duration, format_timestamp, parse_timestamp
from odh.training.status import topology as topology_layout
from odh.training.status.summary import JobStatus
from training.live.subscriptions import socket_url

register = template.Library()


@register.inclusion_tag("training/partials/live_socket.html")
def live_socket_for_job(summary, tab: str = "") -> dict:
    """The socket of a job's page: `job=<project>/<kind>/<name>` and the tab it shows
    (Events rows are sent to the Events tab only); a tab chosen later is told to the open
    socket by static/js/live.js."""
    ref = f"{summary.namespace}/{summary.kind.slug}/{summary.name}"
    # a job waiting in a Kueue queue: told when the queues move (its Queue card reads them
    # again); an admitted one's card has nothing that moves
    waiting = summary.status in (JobStatus.PENDING, JobStatus.SUSPENDED)
    queues = [summary.namespace] if summary.queue and waiting else []
    return {"url": socket_url(jobs=[ref], tab=tab, queues=queues), "what": "job"}


@register.inclusion_tag("training/partials/live_socket.html")
def live_socket_for_list(namespaces, rows=None, listed: str = "", oob: bool = False) -> dict:
    """The socket of the job list: `ns=` each project its filters cover
    (`subscriptions.list_namespaces`), `rows=` the jobs the page shows (only their rows
    are sent; the others are counted) and `listed=` when it listed them. The page has it
    outside `#job-table`; a table fetched again (filters, another page, a refresh) brings
    its own as an out-of-band swap, which static/js/live.js skips when it is the same, so
    the open socket stays."""
    namespaces = list(namespaces)
    refs = None if rows is None else [f"{j.namespace}/{j.kind.slug}/{j.name}" for j in rows]
    return {"url": socket_url(namespaces=namespaces, rows=refs, listed=listed)
            if namespaces else "", "what": "list", "oob": oob}


# -- ages and durations that keep counting ------------------------------------------------------
# `<time datetime="<start>" data-elapsed="<seconds at rendering>">2h 15m 43s</time>`: the text
# is right without JavaScript (as of the rendering); static/js/live.js counts on from
# data-elapsed, in the same words, until a push replaces the element. A finished job's
# duration is fixed: `<time datetime="PT8123S">2h 15m 23s</time>`, not counted.
@register.simple_tag
def notices_socket_url(username: str) -> str:
    """The bell's own socket, for a page that opens none (static/js/bell.js)."""
    return socket_url(notices=username)


@register.simple_tag
def elapsed_time(moment: datetime | None, now: datetime) -> SafeString | str:
    """How long ago `moment` was ("" if unknown)."""
    if moment is None:
        return ""
    seconds = int(max(0.0, (now - moment).total_seconds()))
    return format_html('<time datetime="{}" data-elapsed="{}">{}</time>',
                       format_timestamp(moment), seconds, format_duration(seconds))


@register.simple_tag
def duration_time(summary, now: datetime) -> SafeString:
    """The job's run time: counting while it runs (or waits), fixed once it finished or
    while it is suspended."""
    start = summary.started or summary.created
    if summary.stopped is None and start is not None:
        return elapsed_time(start, now)
    seconds = int(summary.duration_seconds(now))
    return format_html('<time datetime="PT{}S">{}</time>', seconds, format_duration(seconds))


@register.simple_tag
def state_time(summary, now: datetime) -> SafeString | str:
    """Time in the job's current state."""
    return elapsed_time(summary.since or summary.created, now) or format_duration(0)


@register.simple_tag
def event_time(event: dict, now: datetime) -> SafeString | str:
    """How long ago an event last happened."""
    return elapsed_time(parse_timestamp(
        event.get("lastTimestamp") or event.get("eventTime")
        or (event.get("metadata") or {}).get("creationTimestamp")), now)


@register.filter
def topology(summary) -> topology_layout.Topology:
    """The job's replicas grouped by node, in reading order."""
    return topology_layout.build(summary.replicas)
