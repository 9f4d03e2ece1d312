from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

from training.accounts import session
from training.web.theme import theme_of

# The left navigation's items, by the URL names that make each one current.
NAV_CURRENT = {
    "training-job-list": "jobs", "training-job-detail": "jobs", "training-job-history": "jobs",
    "training-job-compare": "jobs", "training-job-delete": "jobs", "training-job-retry": "jobs",
    "training-job-new": "create", "training-job-new-step": "create",
    "training-cluster-overview": "cluster", "training-cluster-audit": "audit",
    "training-cluster-queues": "queues",
    "training-help": "help", "training-help-page": "help",
}


def navigation(request: HttpRequest) -> dict:
    signed_in = request.user.is_authenticated and session.has_live_token(request)
    match = request.resolver_match
    return {
        "site_name": settings.SITE_NAME,
        "signed_in": signed_in,
        "username": request.user.get_username() if signed_in else "",
        # error pages show it, so a person can quote it and an operator can find the logs
        "request_id": getattr(request, "request_id", "-"),
        "nav_current": NAV_CURRENT.get(match.url_name if match else "", ""),
        # the masthead's project context: the job's project, else the list's filter
        "context_project": ((match.kwargs.get("project") if match else None)
                            or request.session.get("project", "")) if signed_in else "",
        "theme": theme_of(request),
        # asked of the cluster only when a page shows them (cached like every access answer)
        "may_view_cluster": lambda: signed_in and _may_view_cluster(request),
        "context_projects": lambda: _project_names(request) if signed_in else [],
        "may_create_somewhere": lambda: signed_in and _may_create_somewhere(request),
        "notices_unread": lambda: _unread(request) if signed_in else 0,
    }


def _unread(request: HttpRequest) -> int:
    from training.notifications import unread_count
    return unread_count(request.user.get_username())


def _may_view_cluster(request: HttpRequest) -> bool:
    from training.permissions import may_view_cluster
    return may_view_cluster(request)


def _project_names(request: HttpRequest) -> list[str]:
    from odh.training import errors
    from training.cluster import user_client
    from training.projects import menu_projects, projects_for_user
    try:
        with user_client(request) as client:
            return [p.name for p in menu_projects(projects_for_user(request, client))]
    except errors.ClusterError:
        return []


def _may_create_somewhere(request: HttpRequest) -> bool:
    from odh.training import errors
    from training.cluster import user_client
    from training.permissions import may_create_in
    from training.projects import projects_for_user
    try:
        with user_client(request) as client:
            names = [p.name for p in projects_for_user(request, client)]
            # any one will do: asked project by project, stopping at the first yes
            return any(may_create_in(request, client, [name]) for name in names)
    except errors.ClusterError:
        return False
