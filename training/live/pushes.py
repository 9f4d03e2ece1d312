"""The HTML pushed to open pages: the same template partials the pages render.

Every fragment carries `hx-swap-oob` so that htmx (websocket extension) swaps it into the
page by element id. Nothing here depends on who is looking but their language: no CSRF
tokens, no user names, no request. The watch hub renders once per language viewers read
(training/live/hub/languages.py) and sends each rendering to that language's viewers; the
websocket consumer renders the same way, in its viewer's language, for the snapshot it
sends on (re)connect.

- `render_list_row(summary, now)`: the job's row of the job list (`#job-row-<ns>-<kind>-<name>`).
- `render_job_update(summary, job, pods, now)`: the detail page's header status
  (`#job-header-status`), facts (`#job-header-facts`) and Suspend/Resume button
  (`#job-state-actions`: a form without CSRF token, static/js/live.js adds the page's), the
  Overview's parts (`#job-overview-state`, `#job-overview-facts`, `#job-replicas`,
  `#job-conditions`) and the Topology tab (`#job-topology`).
- `render_event_rows(events, now, new=...)`: the Events tab's rows (`#job-event-rows`), all
  of them or new ones on top. Always a frame of its own: a `<tbody>` (like any part of a
  table) is dropped by the HTML parser unless it starts the fragment.
- `render_event_timeline(kind, job, pods, events, now)`: the Events tab's timeline in
  words (`#job-event-timeline`), whole, sent with the rows of new events.
- `announcement(summary)`: the sentence a screen reader hears when the status changes.

Event rows and timeline lines are of every type; a viewer's Events filter (Warning/Normal)
is applied by the page (static/js/live.js keeps the rows and lines whose `data-event-type`
matches the tab's `data-event-filter`). Ages and durations are `<time data-elapsed>`
elements that the page keeps counting between pushes (live_tags `elapsed_time`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.template.loader import render_to_string
from django.utils.html import format_html
from django.utils.translation import gettext as _

from odh.training.diagnosis import Diagnosis
from odh.training.diagnosis.story import tell
from odh.training.kinds import JobKind
from odh.training.status import event_timeline
from odh.training.status.summary import JobStatus, JobSummary
from training import diagnoses
from training.templatetags.training_tags import STATUS_STYLE

Obj = dict[str, Any]

HEADER_PARTS = ("header-status", "header-facts", "state-actions")
OVERVIEW_PARTS = ("overview-signal", "overview-state", "overview-facts", "overview-replicas",
                  "overview-conditions")


def row_id(namespace: str, kind_slug: str, name: str) -> str:
    return f"job-row-{namespace}-{kind_slug}-{name}"


def _render(template: str, context: dict[str, Any]) -> str:
    # In the language active now: the hub renders once per language viewers read
    # (training/live/hub/languages.py), a consumer's snapshot in its viewer's.
    return render_to_string(template, context)


def render_list_row(summary: JobSummary, now: datetime,
                    diagnosis: Diagnosis | None = None) -> str:
    """The job list's row for this job, to swap in by id. It carries no training progress
    (read per person, with their token: training/job_progress.py): a running job's progress
    cell is marked hx-preserve, so the page keeps the bar it drew."""
    return _render("training/job_list.html#job-row", {"job": summary, "now": now, "oob": True,
                                                       "pushed_diagnosis": diagnosis})


def render_off_page_changes(count: int) -> str:
    """The job list's notice of `count` jobs it does not show that changed (its socket
    sends only the rows the page shows)."""
    return _render("training/job_list.html#off-page", {"count": count, "oob": True})


def render_deleted_row(namespace: str, kind_slug: str, name: str) -> str:
    """Takes a deleted job's row off the list."""
    return format_html('<tr id="{}" hx-swap-oob="delete"></tr>',
                       row_id(namespace, kind_slug, name))


def render_job_update(summary: JobSummary, job: Obj, pods: list[Obj], now: datetime,
                      diagnosis: Diagnosis | None = None) -> str:
    """The parts of the job's page that follow its state (not its events: see
    `render_event_rows`). `job` and `pods` are the raw objects, for parts that show more
    than the summary; `diagnosis` what the objects alone tell (Topology highlights its
    pods; the Overview's card is fetched by the page itself when the signal changes)."""
    context: dict[str, Any] = {"summary": summary, "job": job, "pods": pods, "now": now,
                               "oob": True, "diagnosis": diagnosis,
                               "diagnosis_signature": diagnoses.signature(summary, diagnosis)}
    parts = [_render(f"training/job_detail.html#{name}", context) for name in HEADER_PARTS]
    parts += [_render(f"training/tabs/overview.html#{name}", context) for name in OVERVIEW_PARTS]
    parts.append(_render("training/tabs/topology.html#topology", context))
    return "".join(parts)


def render_job_deleted(namespace: str, kind_slug: str, name: str) -> str:
    """What an open page of a job that was deleted shows: the status Deleted, and in place
    of its actions a notice with where to go."""
    from django.urls import reverse

    return _render("training/job_detail.html#job-gone", {
        "name": name, "detail_url": reverse("training-job-detail",
                                            args=[namespace, kind_slug, name])})


def render_job_status(summary: JobSummary, job: Obj, now: datetime) -> str:
    """The job page's header only (status, facts, Suspend/Resume): what someone who may
    see the job but not its pods or events is sent (`summary` from the job alone)."""
    context: dict[str, Any] = {"summary": summary, "job": job, "pods": [], "now": now,
                               "oob": True}
    return "".join(_render(f"training/job_detail.html#{name}", context)
                   for name in HEADER_PARTS)


def render_event_rows(events: list[Obj], now: datetime, *, new: bool = False) -> str:
    """The Events tab's rows, as a frame of their own (a `<tbody>` must start it).

    `events` newest first (`queries.job_events`). A snapshot (as on connect) replaces the
    rows with them all; `new` (a push: events new or changed since the last push) puts them
    on top, and the page first removes its rows of the same events (a changed count, or a
    snapshot just before that showed them already): a row is never doubled. Every type of
    event is sent, the page keeps those of its filter, and shows or removes its "No
    events" row itself."""
    if new:
        return _render("training/tabs/events.html#new-event-rows",
                       {"events": events, "now": now})
    return _render("training/tabs/events.html#event-rows",
                   {"events": events, "now": now, "oob": True, "event_type": ""})


def timeline_of(kind: JobKind, job: Obj, pods: list[Obj],
                events: list[Obj]) -> list[event_timeline.Line]:
    """The Events tab's timeline in words of a job's events (`queries.job_events`)."""
    name = str((job.get("metadata") or {}).get("name", ""))
    return event_timeline.build(kind, name, events, pods)


def render_event_timeline(kind: JobKind, job: Obj, pods: list[Obj], events: list[Obj],
                          now: datetime) -> str:
    """The Events tab's timeline, whole and of every type (the page keeps its filter's
    lines), to swap in by id: a frame of its own, after the rows."""
    return _render("training/tabs/events.html#event-timeline",
                   {"timeline": timeline_of(kind, job, pods, events), "now": now, "oob": True,
                    "event_type": ""})


def status_text(status: JobStatus | str) -> str:
    value = str(getattr(status, "value", status))
    style = STATUS_STYLE.get(value)
    return str(style[2]) if style else value


def announcement(summary: JobSummary, diagnosis: Diagnosis | None = None) -> str:
    """"Job bert-ft is now Running: 4/4 workers" — what the page's aria-live region says.
    A job Kueue holds, or that succeeded, is said with its story (odh.training.diagnosis.
    story: "Queued in team-nlp-queue", "Completed in 20m 49s"). A job that failed or waits
    for another reason is said by its status alone: why is its diagnosis card's to say,
    made with the viewer's own reads (logs, quotas), which the card, fetched when the job
    changes, says as it appears (static/js/live.js); `diagnosis` here is what the objects
    alone tell (the hub reads no logs), which the card may tell otherwise ("Launcher
    exited with code 1" where the card finds the SSH connection reset)."""
    values = {"name": summary.name, "status": status_text(summary.status),
              "ready": summary.workers_ready, "total": summary.workers_total}
    if summary.status == JobStatus.RUNNING:
        return _("Job %(name)s is now %(status)s: %(ready)d/%(total)d workers") % values
    told = tell(summary, diagnosis)
    if not told.is_problem and (summary.held_by_queue or summary.status == JobStatus.SUCCEEDED):
        return _("Job %(name)s is now %(status)s: %(step)s") % {**values, "step": told.line}
    return _("Job %(name)s is now %(status)s.") % values


def deletion_announcement(name: str) -> str:
    return _("Job %(name)s was deleted.") % {"name": name}


def creation_announcement(name: str) -> str:
    """Said when a job created after the list page loaded appears on it."""
    return _("Job %(name)s was created.") % {"name": name}
