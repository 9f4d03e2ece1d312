"""Every "may this person ...?" the dashboard asks, answered one way.

One `AccessCache` per process (odh.training.cluster.access) holds the answers of
SelfSubjectAccessReviews asked with the person's token: per person (a digest of the
token), project ("" for the whole cluster) and question; one caller asks while the others
wait for its answer (single flight); every answer is kept `ACCESS_TTL_SECONDS` (one
expiry rule). Pages, their htmx parts, the websocket's subscriptions and re-checks, the
navigation and the wizard's checks all ask through here, so the answer a page got is the
answer its socket gets, and a role granted or taken away counts everywhere at once, within
that time. A check before a change (sharing a template) asks again now (`fresh`) and
keeps the new answer for the others.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest

from odh.training.cluster.access import Access, AccessCache, allowed
from odh.training.cluster.client import ClusterClient
from odh.training.kinds import JobKind, default_kind
from training.accounts import session

# the questions asked of the whole cluster (no namespace)
LIST_QUOTAS_EVERYWHERE = Access("list", "resourcequotas")  # the cluster pages
GET_PODS = Access("get", "pods")  # what Prometheus' tenancy port asks of a project's viewer
LIST_JOBS_EVERYWHERE = Access(  # "All projects"
    "list", default_kind().plural, default_kind().group)
LIST_PODS_EVERYWHERE = Access("list", "pods")
EVERYWHERE = ""

ANSWERS = AccessCache(ttl=float(settings.ACCESS_TTL_SECONDS))


def may(client: ClusterClient, token: str, namespace: str, access: Access,
        fresh: bool = False) -> bool:
    """May the token's owner do `access` in `namespace` ("" : in every namespace)?

    Raises `errors.Unauthorized` when the token no longer works and the other cluster
    errors as they come: none of them is an answer, so none is kept."""
    return allowed(client, token, namespace, access, ANSWERS, fresh=fresh)


def person_may(request: HttpRequest, client: ClusterClient, namespace: str, access: Access,
               fresh: bool = False) -> bool:
    """`may` for the person signed in to this request."""
    return may(client, session.token(request), namespace, access, fresh=fresh)


@dataclass(frozen=True)
class JobActions:
    """What the person may do to the jobs of one kind in one project: change them (suspend,
    resume: `update`), delete them, create new ones (clone, retry, the wizard)."""

    change: bool
    delete: bool
    create: bool

    @property
    def any(self) -> bool:
        return self.change or self.delete or self.create


def job_actions(request: HttpRequest, client: ClusterClient, namespace: str, kind: JobKind
                ) -> JobActions:
    """The actions to offer on `kind` jobs in `namespace` (SelfSubjectAccessReviews, kept
    like every other answer); the cluster still decides each one when it is taken."""
    def asks(verb: str) -> bool:
        return person_may(request, client, namespace, Access(verb, kind.plural, kind.group))
    return JobActions(change=asks("update"), delete=asks("delete"), create=asks("create"))


READ_LOGS = Access("get", "pods", subresource="log")  # the Logs tab


@dataclass(frozen=True)
class RowActions:
    """What a job list row's menu offers: the job's actions, and its Logs and Metrics tabs
    where the person may read pods' logs (get pods/log) and pods (Prometheus' tenancy)."""

    job: JobActions
    logs: bool
    metrics: bool


def row_actions(request: HttpRequest, client: ClusterClient, rows) -> dict[str, RowActions]:
    """The menu of each row ("<project>/<kind>/<name>": what `row_of` reads), asked once
    per project and kind (the answers kept, as every other)."""
    asked: dict[tuple[str, str], RowActions] = {}
    found = {}
    for job in rows:
        key = (job.namespace, job.kind.slug)
        if key not in asked:
            asked[key] = RowActions(
                job_actions(request, client, job.namespace, job.kind),
                logs=person_may(request, client, job.namespace, READ_LOGS),
                metrics=person_may(request, client, job.namespace, GET_PODS))
        found[f"{job.namespace}/{job.kind.slug}/{job.name}"] = asked[key]
    return found


def may_create_in(request: HttpRequest, client: ClusterClient, namespaces: list[str],
                  kind: JobKind | None = None) -> list[str]:
    """The projects among `namespaces` where the person may create jobs of `kind` (the
    default kind, which a new wizard draft creates, if None)."""
    kind = kind or default_kind()
    return [ns for ns in namespaces
            if person_may(request, client, ns, Access("create", kind.plural, kind.group))]


def cluster_admin(request: HttpRequest, client: ClusterClient) -> bool:
    """May this person see the cluster pages? (a cluster administrator: the cluster lets them
    list resource quotas in every project)"""
    return person_may(request, client, EVERYWHERE, LIST_QUOTAS_EVERYWHERE)


def may_view_cluster(request: HttpRequest) -> bool:
    """For the navigation: may this person see the cluster pages? The answer the pages and
    the cluster socket get; a question the cluster did not answer (unreachable, token
    expired) counts as no and is asked again next time."""
    from odh.training import errors
    from training.cluster import user_client
    if not request.user.is_authenticated or not session.has_live_token(request):
        return False
    try:
        with user_client(request) as client:
            return cluster_admin(request, client)
    except errors.ClusterError:
        return False
