"""The UX analysis' spellings of what the SDK's jobs do (issue 26: every snippet runs as
written): `job.validate()`, `job.clone(name=..., workers=8)`,
`job.stream_logs(follow=True, all_workers=True)`, and a `TrainingClient` with
`get_mpijob`, `list_mpijobs` and `delete_mpijob`. Each is the plan's own call underneath
(`create`'s checks, `with_fix`'s clone, `get_logs`, `MPIJob.get/list/delete`)."""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Self

from odh.training import creating, errors
from odh.training.capacity.preflight import Preflight
from odh.training.cluster.jobwatch import wait_until_gone
from odh.training.findings import errors_of
from odh.training.jobs.refusals import refusal_error
from odh.training.logs.logfollow import interleaved, worker_pods
from odh.training.manifests.claims import DEFAULT_ACCESS_MODE, NewClaim, claim_findings
from odh.training.sdk import TrainingClient as BaseClient
from odh.training.spec import clone_spec

if TYPE_CHECKING:
    from odh.training.jobs.mpijob import MPIJob

WORKERS_WAIT = 1.0  # seconds between looks for the Workers' pods while following them


class ExampleSpellings:
    """Mixed into TrainingJob, whose attributes and calls these use (spec, client, kind,
    name, namespace, get_logs, from_spec, update)."""

    def validate(self) -> Preflight:
        """What `create()` would refuse, raised as it would raise it (ValidationError for a
        setting, ResourceQuotaExceeded with the fixes for a job that could never start);
        creating nothing. Otherwise the wizard's verdict (as `check()` gives it)."""
        self.spec.namespace = self.namespace
        try:
            checked = creating.check(self.client.cluster, self.spec,
                                     from_manifest=self.spec.base is not None)
        except creating.CreateRefused as e:
            raise refusal_error(e, self._sdk_fields) from None
        self.preflight = checked
        return checked

    def clone(self, name: str | None = None, **changes: Any) -> Self:
        """A new job with this one's configuration, named `name` (default
        "<name>-clone"), with `changes` as the constructor names them (`workers=8`); created
        when you call `create()`."""
        spec = clone_spec(self.spec, name or f"{self.name}-clone")
        job = type(self).from_spec(spec, client=self._client, kubeconfig=self._kubeconfig,
                                   context=self._context)
        if changes:
            job.update(**changes)
        return job

    def stream_logs(self, follow: bool = False, all_workers: bool = False,
                    worker_id: int | None = None, tail: int | None = None,
                    timeout: float = 3600) -> Iterator[str]:
        """Log lines: the Launcher's (or Worker `worker_id`'s), or with `all_workers` every
        Worker's, interleaved in time order and each prefixed with its Worker ("[worker-1]
        ..."), as `odh training logs --all-workers` prints them. With `follow`, lines come
        as they are written until the pods end (waiting up to `timeout` seconds for the
        Workers to start)."""
        if not all_workers:
            return self.get_logs("worker" if worker_id is not None else "launcher", worker_id,
                                 follow=follow, tail=tail)
        cluster = self.client.cluster
        kind, namespace, name = self.kind, self.namespace, self.name
        pods = worker_pods(cluster, kind, namespace, name)
        deadline = time.monotonic() + timeout
        while not pods and follow and time.monotonic() < deadline:
            cluster.get_job(kind, namespace, name)  # NotFound: it is gone
            time.sleep(WORKERS_WAIT)
            pods = worker_pods(cluster, kind, namespace, name)
        return (f"[{pod.tag}] {text}" for pod, text in
                interleaved(cluster, namespace, pods, follow=follow, tail=tail))


class TrainingClient(BaseClient):
    """`odh.training.TrainingClient`: the calls of odh.training.sdk.TrainingClient, and the
    MPIJobs as `MPIJob` objects, as the UX analysis' examples use them:

        client = TrainingClient()
        job = client.get_mpijob("bert", namespace="team-nlp")
        for job in client.list_mpijobs("team-nlp", status="Failed"): ...
        client.delete_mpijob("bert", namespace="team-nlp")
        client.create_volume_claim("data-bert", "100Gi", namespace="team-nlp")
    """

    def _project(self, namespace: str | None) -> str:
        return namespace or self.default_namespace or "default"

    def get_mpijob(self, name: str, namespace: str | None = None) -> MPIJob:
        from odh.training.jobs.mpijob import MPIJob
        return MPIJob.get(name, self._project(namespace), client=self)

    def list_mpijobs(self, namespace: str | None = None,
                     status: str | None = None) -> builtins.list[MPIJob]:
        from odh.training.jobs.mpijob import MPIJob
        return MPIJob.list(namespace, status, client=self)

    def delete_mpijob(self, name: str, namespace: str | None = None, wait: bool = False,
                      timeout: float = 300) -> None:
        from odh.training.jobs.mpijob import MPIJob
        project = self._project(namespace)
        self.delete_job(name, project, MPIJob.kind)
        if wait:
            wait_until_gone(self.cluster, MPIJob.kind, project, name, timeout)

    def create_volume_claim(self, name: str, size: str, namespace: str | None = None,
                            access_mode: str = DEFAULT_ACCESS_MODE,
                            storage_class: str = "") -> dict:
        """A new PersistentVolumeClaim in the project, made with your credentials, as the
        wizard's "new volume claim" makes it before its job: `size` a quantity ("100Gi"),
        `access_mode` ReadWriteMany (several Workers on several nodes), ReadWriteOnce or
        ReadOnlyMany, `storage_class` "" for the cluster's default. Mount it with
        `volumes=[PVCVolume(name, "/data")]`. ValidationError names
        what is wrong before anything is sent; a claim of that name already there is
        errors.Conflict. The claim as the cluster answered it."""
        project = self._project(namespace)
        claim = NewClaim(name, size, access_mode, storage_class)
        problems = errors_of(claim_findings([claim], project, None, None, 1))
        if problems:
            field = problems[0].field.removeprefix("claims[0].")
            raise errors.ValidationError(field, problems[0].message)
        return self.cluster.create_pvc(project, claim.to_manifest(project))
