"""What a signed-in person may see: their projects, the job kinds the cluster serves, one
job of theirs. Shared by the job pages, the wizard, the Logs tab, the admin overview and
the live subscriptions, so each asks (and caches) the cluster the same way.
"""

from __future__ import annotations

import time

from django.core.cache import cache
from django.http import Http404, HttpRequest
from django.utils.translation import gettext as _

from odh.training import errors
from odh.training.cluster.access import Access
from odh.training.cluster.client import ClusterClient, Project
from odh.training.kinds import KINDS, JobKind
from odh.training.status import queries
from training.permissions import (
    EVERYWHERE,
    LIST_JOBS_EVERYWHERE,
    LIST_PODS_EVERYWHERE,
    person_may,
)

PROJECTS_KEY = "projects_cache"
PROJECTS_TTL = 30.0
SERVED_KINDS_KEY = "served_job_kinds"
SERVED_KINDS_TTL = 60


def kind_or_404(slug: str) -> JobKind:
    """The job kind a URL names, or "not found"."""
    kind = KINDS.get(slug)
    if kind is None:
        raise Http404(_("There is no job type called “%(type)s”.") % {"type": slug})
    return kind


def projects_for_user(request: HttpRequest, client: ClusterClient) -> list[Project]:
    """The projects this person may see, from the projects API (cached briefly)."""
    cached = request.session.get(PROJECTS_KEY)
    if isinstance(cached, dict) and time.time() - cached.get("at", 0) < PROJECTS_TTL:
        return [Project(**p) for p in cached["projects"]]
    projects = client.list_projects()
    request.session[PROJECTS_KEY] = {
        "at": time.time(),
        "projects": [{"name": p.name, "display_name": p.display_name,
                      "description": p.description, "uid": p.uid} for p in projects]}
    return projects


_SYSTEM_NAMES = ("default", "openshift")
_SYSTEM_PREFIXES = ("kube-", "openshift-")


def is_system_project(name: str) -> bool:
    """The cluster's own namespaces (default, kube-*, openshift-*), which the OpenShift
    console's project menu leaves out too: nobody trains there."""
    return name in _SYSTEM_NAMES or name.startswith(_SYSTEM_PREFIXES)


def menu_projects(projects: list[Project], keep: str = "") -> list[Project]:
    """The projects a menu offers: the person's, without the cluster's own (an
    administrator sees every namespace), but the one chosen now."""
    return [p for p in projects if not is_system_project(p.name) or p.name == keep]


def project_uid(request: HttpRequest, client: ClusterClient, name: str) -> str | None:
    """The uid of one of this person's projects (None: not one of theirs). Records the
    dashboard keeps per project (history, shared templates) carry it, so the members of a
    project deleted and made again under the same name do not see the old one's."""
    for project in projects_for_user(request, client):
        if project.name == name:
            return project.uid
    return None


def served_kinds(client: ClusterClient) -> list[JobKind]:
    """Training job APIs the cluster serves (discovery, shared by everyone, cached)."""
    slugs = cache.get(SERVED_KINDS_KEY)
    if slugs is None:
        slugs = [k.slug for k in client.served_kinds()]
        cache.set(SERVED_KINDS_KEY, slugs, SERVED_KINDS_TTL)
    return [KINDS[s] for s in slugs if s in KINDS]


def can_list_everywhere(request: HttpRequest, client: ClusterClient) -> bool:
    """May this person list jobs (of the default kind) and pods in all namespaces?
    (training/permissions: a role granted or taken away counts within a minute).
    Other job kinds are tried cluster-wide too; one refused there is listed in the
    person's projects only (queries.list_summaries' fallback)."""
    return (person_may(request, client, EVERYWHERE, LIST_JOBS_EVERYWHERE)
            and person_may(request, client, EVERYWHERE, LIST_PODS_EVERYWHERE))


def job_missing(kind: JobKind, project: str, name: str) -> errors.NotFound:
    """The "no longer exists" error for a job, shown as a page that names it."""
    return errors.NotFound(
        _("The %(type)s “%(name)s” no longer exists in project “%(project)s”.")
        % {"type": kind.label, "name": name, "project": project}, status=404,
        namespace=project)


def get_job_for_user(request: HttpRequest, client: ClusterClient, project: str, kind: JobKind,
                     name: str) -> queries.JobDetail:
    """The job, its pods, events and summary, read with the person's token (its pods and
    events from the watch hub in this process where the person may list them: the same
    page at 1,000 jobs as at 100); refusals name the project, a missing job says it no
    longer exists."""
    def indexed_events() -> list[dict] | None:
        """The job's events as this process's watch hub keeps them, where the person may
        list the project's events: the page needs no list of all of them."""
        from training.live.hub.snapshots import indexed_job_events

        if not person_may(request, client, project, Access("list", "events")):
            return None
        return indexed_job_events(kind, project, name)

    def indexed_pods() -> list[dict] | None:
        """Its pods as the hub keeps them, where the person may list the project's pods."""
        from training.live.hub.snapshots import indexed_job_pods

        if not person_may(request, client, project, Access("list", "pods")):
            return None
        return indexed_job_pods(kind, project, name)

    try:
        return queries.job_detail(client, kind, project, name, known_events=indexed_events,
                                  known_pods=indexed_pods)
    except errors.Forbidden as e:
        e.namespace = project
        raise
    except errors.NotFound:
        raise job_missing(kind, project, name) from None


def list_jobs_for_user(request: HttpRequest, client: ClusterClient,
                       namespaces: list[str] | None, kinds: list[JobKind],
                       projects: list[Project]) -> queries.Listing:
    """The jobs the list page shows: from the watch hub in this process when it runs
    (summarized already, what the person may list by their cached access answers), else
    listed with their token. `namespaces` None: every namespace (they may list MPIJobs and
    pods everywhere); a kind they may not list everywhere is shown in their projects."""
    from datetime import UTC, datetime

    from training.live.hub.snapshots import hub_listing
    mine = {p.name for p in projects}

    def may(namespace: str, access: Access) -> bool:
        return person_may(request, client, namespace, access)

    def may_list(namespace: str, kind: JobKind) -> bool:
        access = Access("list", kind.plural, kind.group)
        if namespaces is None and may(EVERYWHERE, access):
            return True
        return namespace in mine and may(namespace, access)

    def may_see_pods(namespace: str) -> bool:
        if namespaces is None:  # cluster-wide: allowed everywhere (can_list_everywhere)
            return True
        return may(namespace, Access("list", "pods"))

    def may_see_events(namespace: str) -> bool:
        return may(namespace, Access("list", "events"))

    found = hub_listing(namespaces, kinds, may_list, may_see_pods, datetime.now(UTC),
                        may_see_events)
    if found is None:
        return queries.list_summaries(client, namespaces, kinds,
                                      fallback=lambda: [p.name for p in projects])
    if namespaces is None:
        found.forbidden_kinds = [k for k in kinds if not may(
            EVERYWHERE, Access("list", k.plural, k.group))]
    return found
