"""A training job's objects as `ClusterClient` reads and writes them: the job (list, get,
create, watch, suspend, annotate, delete), whatever its kind (the kind says its API and
where it is suspended), and the pods of jobs and of no job."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubernetes import watch as k8s_watch

from odh.training.cluster.api import ApiCalls, Obj, require_names
from odh.training.kinds import JobKind, pod_job_labels


def other_pods_selector() -> str:
    """A label selector of the pods of no training job: "!label,!label"."""
    return ",".join(f"!{label}" for label in pod_job_labels())


class JobCalls(ApiCalls):
    """Jobs of every kind and their pods."""

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

    def list_jobs_page(self, kind: JobKind, namespace: str, limit: int
                       ) -> tuple[list[Obj], bool]:
        """The first `limit` jobs of a project (one bounded request), and whether it holds
        more."""
        require_names(namespace)
        found = self._call(self.custom.list_namespaced_custom_object, kind.group, kind.version,
                           namespace, kind.plural, namespace=namespace, limit=limit)
        more = bool((found.get("metadata") or {}).get("continue"))
        return list(found.get("items") or []), more

    def get_job(self, kind: JobKind, namespace: str, name: str) -> Obj:
        require_names(namespace, name, kind.plural)
        return self._call(self.custom.get_namespaced_custom_object, kind.group, kind.version,
                          namespace, kind.plural, name, namespace=namespace)

    def delete_job(self, kind: JobKind, namespace: str, name: str) -> None:
        require_names(namespace, name, kind.plural)
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        self._call(self.custom.delete_namespaced_custom_object, kind.group, kind.version,
                   namespace, kind.plural, name, body=body, namespace=namespace)

    def set_suspended(self, kind: JobKind, namespace: str, name: str, suspend: bool) -> Obj:
        require_names(namespace, name, kind.plural)
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
        require_names(namespace, name, kind.plural)
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
        require_names(namespace, name, kind.plural)
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

    # -- pods -----------------------------------------------------------------------------------
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

    def list_pods(self, namespace: str | None = None, label_selector: str = "") -> list[Obj]:
        """Pods of a namespace, or of every namespace (None), optionally by label."""
        kwargs: dict[str, Any] = {"label_selector": label_selector} if label_selector else {}
        if namespace:
            return self._items(self.core.list_namespaced_pod, namespace, namespace=namespace,
                               **kwargs)
        return self._items(self.core.list_pod_for_all_namespaces, **kwargs)
