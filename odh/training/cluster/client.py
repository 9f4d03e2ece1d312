"""Talking to the cluster about training jobs, with one person's credentials.

A thin layer over the official `kubernetes` client: every call returns plain dicts shaped
exactly like the API's JSON (what `odh.training.status.summarize` reads), and every failure is one
of `odh.training.errors`. The dashboard makes one `ClusterClient` per request with the
signed-in person's token, so the API server's RBAC decides what they see and do.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import urllib3
from kubernetes import client as k8s
from kubernetes import watch as k8s_watch

from odh.training import errors
from odh.training.i18n import _
from odh.training.kinds import KINDS, JobKind, pod_job_labels

log = logging.getLogger("odh.training.cluster.client")

Obj = dict[str, Any]

DEFAULT_TIMEOUT = (5.0, 30.0)  # connect, read
JOB_NAME_LABEL = "training.kubeflow.org/job-name"


def other_pods_selector() -> str:
    """A label selector of the pods of no training job: "!label,!label"."""
    return ",".join(f"!{label}" for label in pod_job_labels())

# The most of a log one read takes (the API server's limitBytes); a page shows a tail, so
# more than this means very long lines, and the reader is told the log was cut.
READ_LOG_LIMIT_BYTES = 2 * 1024 * 1024
# The longest line a followed log hands on (its timestamp included): a line without a
# newline cannot fill memory; what is beyond is dropped up to the next newline.
MAX_LINE_BYTES = 64 * 1024


# What Kubernetes accepts as a namespace (DNS-1123 label) and as an object name (DNS-1123
# subdomain). Anything else would not name an object; refusing it here also keeps "..", "."
# or "/" in a URL from steering a request at another API path.
_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_NAMESPACE = re.compile(_LABEL)
_NAME = re.compile(rf"{_LABEL}(\.{_LABEL})*")


def is_namespace_name(value: str) -> bool:
    return len(value) <= 63 and _NAMESPACE.fullmatch(value) is not None


def is_object_name(value: str) -> bool:
    return len(value) <= 253 and _NAME.fullmatch(value) is not None


def _require_names(namespace: str, name: str | None = None, what: str = "object") -> None:
    if not is_namespace_name(namespace):
        raise errors.NotFound(f'namespaces "{namespace}" not found', status=404,
                              namespace=namespace)
    if name is not None and not is_object_name(name):
        raise errors.NotFound(f'{what} "{name}" not found', status=404, namespace=namespace)


@dataclass(frozen=True)
class Project:
    name: str
    display_name: str
    description: str = ""
    # what tells this project from an earlier one of the same name (deleted, made again)
    uid: str = ""

    @property
    def label(self) -> str:
        return self.display_name or self.name


def make_api_client(server: str, token: str, ca_file: str | None = None,
                    verify_ssl: bool = True) -> k8s.ApiClient:
    """An ApiClient for `server` that authenticates with a bearer token."""
    cfg = k8s.Configuration()
    cfg.host = server
    cfg.api_key = {"authorization": token}
    cfg.api_key_prefix = {"authorization": "Bearer"}
    cfg.verify_ssl = verify_ssl
    if ca_file:
        cfg.ssl_ca_cert = ca_file
    cfg.retries = False
    return k8s.ApiClient(cfg)


_NAMED = {k.plural: k.kind for k in KINDS.values()}


def _not_found(body: Obj, namespace: str) -> str:
    """A 404 about a named object in plain words ("There is no MPIJob named “x” in
    team-nlp."), where the API names it: a job, a pod or a project."""
    details = body.get("details") if isinstance(body.get("details"), dict) else {}
    name, plural = str(details.get("name") or ""), str(details.get("kind") or "")
    if not name:
        return ""
    values = {"name": name, "namespace": namespace}
    if plural in _NAMED:
        values["kind"] = _NAMED[plural]
        return (_("There is no %(kind)s named “%(name)s” in %(namespace)s.") if namespace
                else _("There is no %(kind)s named “%(name)s”.")) % values
    if plural == "pods":
        return _("There is no pod named “%(name)s” in %(namespace)s (any more).") % values
    if plural in ("namespaces", "projects"):
        return _("There is no project named “%(name)s” (or you may not see it).") % values
    return ""


def _translate(e: k8s.ApiException, namespace: str = "") -> errors.ClusterError:
    body: Obj = {}
    try:
        body = json.loads(e.body or "{}")
    except (TypeError, ValueError):
        body = {}
    if not isinstance(body, dict):
        body = {}
    message = str(body.get("message") or e.reason or "the cluster refused the request")
    reason = str(body.get("reason") or "")
    causes = list((body.get("details") or {}).get("causes") or [])
    status = int(e.status or 0)
    kw = {"status": status, "reason": reason, "causes": causes, "namespace": namespace}
    if status == 401:
        return errors.Unauthorized(message, **kw)
    if status == 403:
        if "exceeded quota" in message and "requested: count/" in message:
            # a quota on the number of objects: the cluster's words, for support, in details
            full = errors.CountQuotaExceeded(_(
                "The quota of %(project)s on the number of jobs is full, and finished jobs "
                "count: delete finished jobs you no longer need, or ask the project's "
                "administrator for a larger quota.") % {"project": namespace or "-"}, **kw)
            full.details = message
            return full
        if "exceeded quota" in message:
            return errors.QuotaExceeded(message, **kw)
        return errors.Forbidden(message, **kw)
    if status == 404:
        found = errors.NotFound(_not_found(body, namespace) or message, **kw)
        found.details = message  # the API's own words, for support
        return found
    if status == 409:
        return errors.Conflict(message, **kw)
    if status == 422:
        return errors.Invalid(message, **kw)
    if status in (0, 502, 503, 504):
        return errors.ClusterUnavailable(message, **kw)
    return errors.ClusterError(message, **kw)


class LogText(str):
    """A log read with `ClusterClient.read_log`. `cut_at`: the byte limit it reached (the
    server stopped there: what followed is not in it), or None."""

    cut_at: int | None = None

    def __new__(cls, text: str, cut_at: int | None = None) -> LogText:
        value = super().__new__(cls, text)
        value.cut_at = cut_at
        return value

    @property
    def cut(self) -> bool:
        return self.cut_at is not None


class LogFollow:
    """An open follow request for a container's log (see `ClusterClient.follow_log`)."""

    def __init__(self, response: Any, max_line: int = MAX_LINE_BYTES) -> None:
        self.response = response
        self.max_line = max_line
        self._closed = False

    def lines(self) -> Iterator[str]:
        """Each line as it arrives (decoded, without its newline); ends with the stream.

        A line longer than `max_line` bytes is handed on cut to that length as soon as it
        is that long, and the rest of it (up to its newline) is dropped: a container that
        writes without newlines costs `max_line` bytes here, not its whole output."""
        buffer = bytearray()
        cut = False  # the current line went out cut: drop the rest of it
        try:
            for chunk in self.response.stream(16 * 1024):
                start = 0
                while True:
                    newline = chunk.find(b"\n", start)
                    end = len(chunk) if newline < 0 else newline
                    if not cut:
                        buffer += chunk[start:end]
                        if len(buffer) > self.max_line:
                            yield _decode(buffer[:self.max_line])
                            buffer.clear()
                            cut = True
                    if newline < 0:
                        break
                    if cut:
                        cut = False
                    else:
                        yield _decode(buffer)
                        buffer.clear()
                    start = newline + 1
        except (urllib3.exceptions.HTTPError, OSError, ValueError, AttributeError):
            if not self._closed:
                raise
        if buffer and not self._closed:
            yield _decode(buffer)

    def close(self) -> None:
        """Stop reading, from any thread: a blocked `lines()` ends soon after."""
        if self._closed:
            return
        self._closed = True
        try:
            self.response.shutdown()  # wakes a reader blocked on the socket
        except Exception:  # already released or never connected
            log.debug("log stream shutdown failed", exc_info=True)
        try:
            self.response.release_conn()
        except Exception:
            log.debug("log stream release failed", exc_info=True)


class LogChunks:
    """The chunks of a whole log as they arrive (see `ClusterClient.stream_log`)."""

    def __init__(self, response: Any, chunk_size: int) -> None:
        self.response = response
        self._chunks = response.stream(chunk_size)
        self._closed = False

    def __iter__(self) -> LogChunks:
        return self

    def __next__(self) -> bytes:
        if self._closed:
            raise StopIteration
        try:
            return next(self._chunks)
        except StopIteration:
            self.close()
            raise
        except (urllib3.exceptions.HTTPError, OSError, ValueError, AttributeError):
            if self._closed:  # closed from another thread while reading
                raise StopIteration from None
            raise

    def close(self) -> None:
        """Stop, from any thread: a read blocked on the socket returns soon after."""
        if self._closed:
            return
        self._closed = True
        try:
            self.response.shutdown()
        except Exception:  # already released
            log.debug("log download shutdown failed", exc_info=True)
        try:
            self.response.release_conn()
        except Exception:
            log.debug("log download release failed", exc_info=True)


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def _log_options(container: str | None, tail_lines: int | None = None,
                 limit_bytes: int | None = None, **options: bool) -> dict[str, Any]:
    """read_namespaced_pod_log's keyword arguments: `options`, and the container, the
    number of last lines and the most bytes to read when given."""
    kwargs: dict[str, Any] = dict(options)
    if container:
        kwargs["container"] = container
    if tail_lines is not None:
        kwargs["tail_lines"] = tail_lines
    if limit_bytes is not None:
        kwargs["limit_bytes"] = limit_bytes
    return kwargs


class ClusterClient:
    """`shared`: the ApiClient is kept by its owner for later clients (its connections stay
    open); closing this client leaves it open."""

    def __init__(self, api_client: k8s.ApiClient, timeout: tuple[float, float] = DEFAULT_TIMEOUT,
                 shared: bool = False) -> None:
        self.api_client = api_client
        self.timeout = timeout
        self.shared = shared
        self.core = k8s.CoreV1Api(api_client)
        self.custom = k8s.CustomObjectsApi(api_client)
        self.authz = k8s.AuthorizationV1Api(api_client)

    def close(self) -> None:
        if not self.shared:
            self.api_client.close()

    def __enter__(self) -> ClusterClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ---------------------------------------------------------------------------
    @staticmethod
    @contextmanager
    def _translated(namespace: str, warn: bool = True) -> Iterator[None]:
        """The client's failures as `odh.training.errors`: the API's answer translated, a
        connection that failed or timed out as ClusterUnavailable (logged when `warn`)."""
        try:
            yield
        except k8s.ApiException as e:
            raise _translate(e, namespace) from None
        except (urllib3.exceptions.HTTPError, OSError) as e:
            if warn:
                log.warning("cluster unreachable: %s", e)
            raise errors.ClusterUnavailable(
                "The cluster API server could not be reached or did not answer in time.",
                namespace=namespace) from None

    def _call(self, fn, *args: Any, namespace: str = "", raw: bool = False, **kwargs: Any
              ) -> Any:
        """Run one API call; JSON dict back; errors translated."""
        with self._translated(namespace):
            result = fn(*args, _request_timeout=self.timeout, _preload_content=False, **kwargs)
            data = result.data
            if raw:
                return data
            return json.loads(data) if data else {}

    def _items(self, fn, *args: Any, **kwargs: Any) -> list[Obj]:
        """The items of a list call (`_call`'s arguments)."""
        return self._call(fn, *args, **kwargs).get("items") or []

    def version(self) -> Obj:
        """The API server's `/version` (cheap; answers without any rights)."""
        return self._call(k8s.VersionApi(self.api_client).get_code)

    # -- leases (leader election: odh.training.cluster.election) ------------------------
    def get_lease(self, namespace: str, name: str) -> Obj:
        return self._call(k8s.CoordinationV1Api(self.api_client).read_namespaced_lease, name,
                          namespace, namespace=namespace)

    def create_lease(self, namespace: str, body: Obj) -> Obj:
        return self._call(k8s.CoordinationV1Api(self.api_client).create_namespaced_lease,
                          namespace, body, namespace=namespace)

    def replace_lease(self, namespace: str, name: str, body: Obj) -> Obj:
        """A write that carries the resourceVersion read: 409 (errors.Conflict) when the
        Lease changed since."""
        return self._call(k8s.CoordinationV1Api(self.api_client).replace_namespaced_lease,
                          name, namespace, body, namespace=namespace)

    # -- the prices the dashboard publishes (odh.training.cost) ---------------------------
    def get_config_map(self, namespace: str, name: str) -> Obj:
        _require_names(namespace, name, "ConfigMap")
        return self._call(self.core.read_namespaced_config_map, name, namespace,
                          namespace=namespace)

    def put_config_map(self, namespace: str, name: str, data: dict[str, str],
                       labels: dict[str, str] | None = None) -> Obj:
        """Create the ConfigMap, or replace its data if it is there."""
        _require_names(namespace, name, "ConfigMap")
        body = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
                "data": data}
        try:
            return self._call(self.core.replace_namespaced_config_map, name, namespace, body,
                              namespace=namespace)
        except errors.NotFound:
            return self._call(self.core.create_namespaced_config_map, namespace, body,
                              namespace=namespace)

    # -- who am I, what may I do -----------------------------------------------------------------
    def whoami(self) -> Obj:
        return self._call(self.custom.get_cluster_custom_object, "user.openshift.io", "v1",
                          "users", "~")

    def can_i(self, verb: str, resource: str, group: str = "", namespace: str = "",
              name: str = "", subresource: str = "") -> bool:
        attrs = {"verb": verb, "resource": resource, "group": group}
        if namespace:
            attrs["namespace"] = namespace
        if name:
            attrs["name"] = name
        if subresource:
            attrs["subresource"] = subresource
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": attrs}}
        review = self._call(self.authz.create_self_subject_access_review, body,
                            namespace=namespace)
        return bool((review.get("status") or {}).get("allowed"))

    def subject_may(self, user: str, groups: list[str], verb: str, resource: str,
                    group: str = "", namespace: str = "", name: str = "") -> bool:
        """May `user` (in `groups`) do this? A SubjectAccessReview, asked with this client's
        identity (the dashboard's account, for a person who is not signed in now)."""
        attrs = {"verb": verb, "resource": resource, "group": group}
        if namespace:
            attrs["namespace"] = namespace
        if name:
            attrs["name"] = name
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                "spec": {"resourceAttributes": attrs, "user": user, "groups": list(groups)}}
        review = self._call(self.authz.create_subject_access_review, body,
                            namespace=namespace)
        return bool((review.get("status") or {}).get("allowed"))

    def delete_own_token(self, token: str) -> None:
        """Log out: delete this OAuth access token (OpenShift `sha256~` tokens)."""
        import base64
        import hashlib

        if not token.startswith("sha256~"):
            return
        digest = hashlib.sha256(token[len("sha256~"):].encode()).digest()
        name = "sha256~" + base64.urlsafe_b64encode(digest).decode().rstrip("=")
        self._call(self.custom.delete_cluster_custom_object, "oauth.openshift.io", "v1",
                   "useroauthaccesstokens", name)

    # -- projects --------------------------------------------------------------------------------
    def list_projects(self) -> list[Project]:
        projects = []
        for item in self._items(self.custom.list_cluster_custom_object, "project.openshift.io",
                                "v1", "projects"):
            meta = item.get("metadata") or {}
            ann = meta.get("annotations") or {}
            projects.append(Project(meta.get("name", ""), ann.get("openshift.io/display-name", ""),
                                    ann.get("openshift.io/description", ""),
                                    str(meta.get("uid") or "")))
        return sorted(projects, key=lambda p: p.name)

    # -- discovery ------------------------------------------------------------------------------
    def served_kinds(self) -> list[JobKind]:
        """The training job kinds this cluster has APIs for."""
        groups = self._call(k8s.ApisApi(self.api_client).get_api_versions)
        served = {(g.get("name"), v.get("version")) for g in groups.get("groups") or []
                  for v in g.get("versions") or []}
        return [k for k in KINDS.values() if (k.group, k.version) in served]

    # -- other custom resources (a kind's own: the Trainer's runtimes) ----------------------
    def list_custom(self, group: str, version: str, plural: str, namespace: str = ""
                    ) -> list[Obj]:
        """The objects of a custom resource, of one namespace or ("") cluster-scoped."""
        if namespace:
            return self._items(self.custom.list_namespaced_custom_object, group, version,
                               namespace, plural, namespace=namespace)
        return self._items(self.custom.list_cluster_custom_object, group, version, plural)

    def get_custom(self, group: str, version: str, plural: str, name: str,
                   namespace: str = "") -> Obj:
        """One object of a custom resource, namespaced or ("") cluster-scoped."""
        if namespace:
            return self._call(self.custom.get_namespaced_custom_object, group, version,
                              namespace, plural, name, namespace=namespace)
        return self._call(self.custom.get_cluster_custom_object, group, version, plural, name)

    # -- jobs -------------------------------------------------------------------------
    def list_jobs(self, kind: JobKind, namespace: str | None = None) -> list[Obj]:
        if namespace:
            items = self._items(self.custom.list_namespaced_custom_object, kind.group,
                                kind.version, namespace, kind.plural, namespace=namespace)
        else:
            items = self._items(self.custom.list_cluster_custom_object, kind.group, kind.version,
                                kind.plural)
        for item in items:
            item.setdefault("apiVersion", kind.api_version)
            item.setdefault("kind", kind.kind)
        return items

    def get_job(self, kind: JobKind, namespace: str, name: str) -> Obj:
        _require_names(namespace, name, kind.plural)
        return self._call(self.custom.get_namespaced_custom_object, kind.group, kind.version,
                          namespace, kind.plural, name, namespace=namespace)

    def delete_job(self, kind: JobKind, namespace: str, name: str) -> None:
        _require_names(namespace, name, kind.plural)
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        self._call(self.custom.delete_namespaced_custom_object, kind.group, kind.version,
                   namespace, kind.plural, name, body=body, namespace=namespace)

    def set_suspended(self, kind: JobKind, namespace: str, name: str, suspend: bool) -> Obj:
        _require_names(namespace, name, kind.plural)
        patch: Obj = {kind.suspend_path[-1]: suspend}
        for key in reversed(kind.suspend_path[:-1]):
            patch = {key: patch}
        patch = {"spec": patch}
        return self._call(self.custom.patch_namespaced_custom_object, kind.group, kind.version,
                          namespace, kind.plural, name, patch, namespace=namespace,
                          _content_type="application/merge-patch+json")

    def annotate_job(self, kind: JobKind, namespace: str, name: str, key: str, value: str,
                     resource_version: str) -> Obj:
        """Set one annotation of the job as it was at `resource_version` (a Conflict if it
        changed since: read it again, then write)."""
        _require_names(namespace, name, kind.plural)
        patch = {"metadata": {"annotations": {key: value},
                              "resourceVersion": resource_version}}
        return self._call(self.custom.patch_namespaced_custom_object, kind.group, kind.version,
                          namespace, kind.plural, name, patch, namespace=namespace,
                          _content_type="application/merge-patch+json")

    def create_job(self, kind: JobKind, namespace: str, manifest: Obj,
                   dry_run: bool = False, field_validation: str | None = None) -> Obj:
        """Create the job (`dry_run`: only the API server's checks, nothing is created).

        `field_validation` is the API server's `fieldValidation`: "Strict" refuses a
        manifest with fields its schema does not declare (400, `strict decoding error:
        unknown field "spec.bogus"`), where the default (Warn) drops them."""
        kwargs: dict[str, Any] = {"namespace": namespace}
        if dry_run:
            kwargs["dry_run"] = "All"
        if field_validation:
            kwargs["field_validation"] = field_validation
        return self._call(self.custom.create_namespaced_custom_object, kind.group, kind.version,
                          namespace, kind.plural, manifest, **kwargs)

    def watch_job(self, kind: JobKind, namespace: str, name: str, resource_version: str,
                  timeout_seconds: int) -> Iterator[tuple[str, Obj]]:
        """(event type, object) of one job's changes after `resource_version`, for
        `timeout_seconds` at most (the server then ends the watch: open it again). A 410
        (history gone) is raised as a ClusterError with status 410: read the job again."""
        _require_names(namespace, name, kind.plural)
        watcher = k8s_watch.Watch()
        try:
            with self._translated(namespace, warn=False):
                for event in watcher.stream(
                        self.custom.list_namespaced_custom_object, kind.group, kind.version,
                        namespace, kind.plural, field_selector=f"metadata.name={name}",
                        resource_version=resource_version, timeout_seconds=timeout_seconds,
                        allow_watch_bookmarks=True,
                        _request_timeout=(self.timeout[0], timeout_seconds + 15)):
                    obj = event.get("object")
                    yield str(event.get("type", "")), obj if isinstance(obj, dict) else {}
        finally:
            watcher.stop()

    # -- pods, events, logs ---------------------------------------------------------------------
    def list_job_pods(self, namespace: str | None, job_name: str | None = None,
                      kind: JobKind | None = None) -> list[Obj]:
        """Pods of training jobs (of one job when `job_name`, of one kind's jobs when `kind`),
        in a namespace or everywhere: one list per label the kinds' pods name their job by
        (a label selector cannot say "this label or that one")."""
        labels = (kind.pod_job_label,) if kind is not None else pod_job_labels()
        pods: dict[str, Obj] = {}
        for label in labels:
            for pod in self.list_pods(namespace, f"{label}={job_name}" if job_name else label):
                pods.setdefault(str((pod.get("metadata") or {}).get("uid") or id(pod)), pod)
        return list(pods.values())

    def list_other_pods(self, namespace: str | None = None) -> list[Obj]:
        """The pods of no training job (those without any label `list_job_pods` reads)."""
        return self.list_pods(namespace, other_pods_selector())

    def list_events(self, namespace: str, uids: Iterable[str] | None = None) -> list[Obj]:
        items = self._items(self.core.list_namespaced_event, namespace, namespace=namespace)
        if uids is not None:
            wanted = set(uids)
            items = [e for e in items if (e.get("involvedObject") or {}).get("uid") in wanted]
        return items

    def read_log(self, namespace: str, pod: str, container: str | None = None,
                 tail_lines: int | None = 500, timestamps: bool = False,
                 previous: bool = False, limit_bytes: int | None = None) -> LogText:
        """The log's last `tail_lines` lines, at most `limit_bytes` of them (by default
        READ_LOG_LIMIT_BYTES; the server stops there, and the text's `cut` says so).
        Downloads use `stream_log` instead."""
        _require_names(namespace, pod, "pods")
        limit_bytes = limit_bytes or READ_LOG_LIMIT_BYTES
        kwargs = _log_options(container, tail_lines, limit_bytes, timestamps=timestamps,
                              previous=previous)
        data = self._call(self.core.read_namespaced_pod_log, pod, namespace, raw=True,
                          namespace=namespace, **kwargs)
        raw = data if isinstance(data, bytes) else str(data).encode()
        return LogText(_decode(raw), cut_at=limit_bytes if len(raw) >= limit_bytes else None)

    def stream_log(self, namespace: str, pod: str, container: str | None = None,
                   chunk_size: int = 64 * 1024) -> LogChunks:
        """The whole log of a container, in chunks (for downloads); `close()` it, from any
        thread, to stop."""
        _require_names(namespace, pod, "pods")
        kwargs = _log_options(container)
        with self._translated(namespace, warn=False):
            resp = self.core.read_namespaced_pod_log(pod, namespace, _preload_content=False,
                                                     _request_timeout=self.timeout, **kwargs)
        return LogChunks(resp, chunk_size)

    def follow_log(self, namespace: str, pod: str, container: str | None = None,
                   tail_lines: int | None = None, read_timeout: float | None = 600.0
                   ) -> LogFollow:
        """`kubectl logs -f --timestamps`: a follow request whose lines come as written.

        `read_timeout` bounds a silence (the stream then ends and may be opened again);
        `LogFollow.close()` may be called from another thread to stop a blocked read.
        """
        _require_names(namespace, pod, "pods")
        kwargs = _log_options(container, tail_lines, follow=True, timestamps=True)
        with self._translated(namespace, warn=False):
            resp = self.core.read_namespaced_pod_log(
                pod, namespace, _preload_content=False,
                _request_timeout=(self.timeout[0], read_timeout), **kwargs)
        return LogFollow(resp)

    def get_pod(self, namespace: str, name: str) -> Obj:
        _require_names(namespace, name, "pods")
        return self._call(self.core.read_namespaced_pod, name, namespace, namespace=namespace)

    def list_quotas(self, namespace: str) -> list[Obj]:
        return self._items(self.core.list_namespaced_resource_quota, namespace,
                           namespace=namespace)

    # -- what the create-job wizard offers ------------------------------------------------------
    def list_limit_ranges(self, namespace: str) -> list[Obj]:
        return self._items(self.core.list_namespaced_limit_range, namespace, namespace=namespace)

    def list_pvcs(self, namespace: str) -> list[Obj]:
        return self._items(self.core.list_namespaced_persistent_volume_claim, namespace,
                           namespace=namespace)

    def list_network_policies(self, namespace: str) -> list[Obj]:
        return self._items(self.custom.list_namespaced_custom_object, "networking.k8s.io", "v1",
                           namespace, "networkpolicies", namespace=namespace)

    def list_secret_names(self, namespace: str, secret_type: str) -> list[str]:
        """Names of the project's Secrets of one type (`kubernetes.io/dockerconfigjson`);
        what they hold is not kept."""
        items = self._items(self.core.list_namespaced_secret, namespace, namespace=namespace,
                            field_selector=f"type={secret_type}")
        return [str((item.get("metadata") or {}).get("name", "")) for item in items]

    def list_secret_keys(self, namespace: str) -> dict[str, list[str]]:
        """The project's Secrets and the names of their keys; the values are dropped as
        soon as they are read, never kept nor shown."""
        items = self._items(self.core.list_namespaced_secret, namespace, namespace=namespace)
        return {str((item.get("metadata") or {}).get("name", "")):
                sorted(str(k) for k in (item.get("data") or {}))
                for item in items}

    def namespace_uid(self, name: str) -> str:
        """The uid of a namespace ("" when it has none)."""
        _require_names(name)
        return str((self._call(self.core.read_namespace, name).get("metadata") or {})
                   .get("uid") or "")

    def list_nodes(self) -> list[Obj]:
        return self._items(self.core.list_node)

    def list_priority_classes(self) -> list[Obj]:
        return self._items(self.custom.list_cluster_custom_object, "scheduling.k8s.io", "v1",
                           "priorityclasses")

    def list_local_queues(self, namespace: str) -> list[Obj]:
        """Kueue LocalQueues in a namespace; none when the cluster has no Kueue."""
        try:
            return self._items(self.custom.list_namespaced_custom_object, "kueue.x-k8s.io",
                               "v1beta1", namespace, "localqueues", namespace=namespace)
        except errors.NotFound:
            return []

    # -- the cluster overview (administrators: cluster-wide reads) -------------------------------
    def list_pods(self, namespace: str | None = None, label_selector: str = "") -> list[Obj]:
        """Pods of a namespace, or of every namespace (None), optionally by label."""
        kwargs: dict[str, Any] = {"label_selector": label_selector} if label_selector else {}
        if namespace:
            return self._items(self.core.list_namespaced_pod, namespace, namespace=namespace,
                               **kwargs)
        return self._items(self.core.list_pod_for_all_namespaces, **kwargs)

    def list_quotas_everywhere(self) -> list[Obj]:
        """The ResourceQuotas of every namespace."""
        return self._items(self.core.list_resource_quota_for_all_namespaces)

    # -- Kueue: a queued job's Workload and where it stands (odh/training/queues/standing.py)
    def get_workload(self, namespace: str, name: str) -> Obj:
        return self._call(self.custom.get_namespaced_custom_object, "kueue.x-k8s.io",
                          "v1beta1", namespace, "workloads", name, namespace=namespace)

    def list_workloads(self, namespace: str | None = None) -> list[Obj]:
        """Kueue Workloads of a namespace, or of every namespace (None)."""
        if namespace:
            return self._items(self.custom.list_namespaced_custom_object, "kueue.x-k8s.io",
                               "v1beta1", namespace, "workloads", namespace=namespace)
        return self._items(self.custom.list_cluster_custom_object, "kueue.x-k8s.io",
                           "v1beta1", "workloads")

    def get_local_queue(self, namespace: str, name: str) -> Obj:
        return self._call(self.custom.get_namespaced_custom_object, "kueue.x-k8s.io",
                          "v1beta1", namespace, "localqueues", name, namespace=namespace)

    def get_cluster_queue(self, name: str) -> Obj:
        return self._call(self.custom.get_cluster_custom_object, "kueue.x-k8s.io",
                          "v1beta1", "clusterqueues", name)

    def pending_workloads(self, cluster_queue: str = "", namespace: str = "",
                          local_queue: str = "", limit: int = 1000) -> list[Obj]:
        """Kueue's visibility API: the pending Workloads of a ClusterQueue, or of a
        LocalQueue (`namespace`, `local_queue`), in queue order with their positions."""
        if local_queue:
            path = ("/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/{namespace}/"
                    "localqueues/{name}/pendingworkloads")
            params = {"namespace": namespace, "name": local_queue}
        else:
            path = ("/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/{name}/"
                    "pendingworkloads")
            params = {"name": cluster_queue}

        def fetch(_request_timeout: Any = None, _preload_content: bool = False) -> Any:
            request = self.api_client.param_serialize(
                method="GET", resource_path=path, path_params=params,
                query_params=[("limit", str(limit))],
                header_params={"Accept": "application/json"}, auth_settings=["BearerToken"])
            return self.api_client._call_with_legacy_options(
                request, {"200": "object"}, None, False, _request_timeout, True)
        return self._items(fetch, namespace=namespace)

    def list_workload_priority_classes(self) -> list[Obj] | None:
        """Kueue WorkloadPriorityClasses; None when the cluster has no Kueue."""
        try:
            return self._items(self.custom.list_cluster_custom_object, "kueue.x-k8s.io",
                               "v1beta1", "workloadpriorityclasses")
        except errors.NotFound:
            return None

    def list_cluster_queues(self) -> list[Obj] | None:
        """Kueue ClusterQueues; None when the cluster has no Kueue."""
        try:
            return self._items(self.custom.list_cluster_custom_object, "kueue.x-k8s.io",
                               "v1beta1", "clusterqueues")
        except errors.NotFound:
            return None
