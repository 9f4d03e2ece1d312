"""A (re)connecting socket's snapshot from the watch hub's index, when the hub runs in this
process and has listed everything: no API read per viewer. The person's access was
reviewed before (subscriptions.check_access: one SelfSubjectAccessReview per person,
project and question, kept a minute), so they get here what they could read themselves;
the index is as current as the hub's watches (their resourceVersion), and a change it
has not seen yet is pushed as soon as it does. Anything the index does not hold (a job
created a moment ago, a web process without the hub) is read from the API as before.
"""

from __future__ import annotations

from datetime import datetime

from odh.training.kinds import JobKind
from odh.training.queries import JobDetail, Listing, job_events
from odh.training.status import summarize

from . import get_hub


def _ready_index():
    hub = get_hub()
    if hub is None or not hub.running or not hub.ready.is_set():
        return None
    return hub.index


def job_detail(kind: JobKind, namespace: str, name: str, now: datetime) -> JobDetail | None:
    """The job as a page shows it (pods, its events), or None: ask the API."""
    index = _ready_index()
    data = index.job_data((namespace, kind.slug, name)) if index is not None else None
    if data is None:
        return None
    job = {"apiVersion": kind.api_version, "kind": kind.kind, **data.job}
    events = job_events(kind, job, data.pods, data.events)
    return JobDetail(kind, job, data.pods, events, summarize(job, data.pods, events, now))


def project_listing(namespace: str, kinds: list[JobKind], now: datetime,
                    with_pods: bool) -> Listing | None:
    """The project's jobs of `kinds` as the list shows them, or None: ask the API."""
    index = _ready_index()
    if index is None:
        return None
    wanted = {k.slug: k for k in kinds}
    listing = Listing()
    for key in index.job_keys(namespace):
        kind = wanted.get(key[1])
        data = index.job_data(key) if kind is not None else None
        if data is None:
            continue
        job = {"apiVersion": kind.api_version, "kind": kind.kind, **data.job}
        pods = data.pods if with_pods else []
        listing.summaries.append(summarize(job, pods, None, now))
        listing.objects[key] = (job, pods)
    return listing
