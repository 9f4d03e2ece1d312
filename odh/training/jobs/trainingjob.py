"""`TrainingJob`: what the SDK's jobs of every kind share (`MPIJob`, `TrainJob`): a job
described in Python, read from and written to a manifest, checked and created as the
wizard creates it, found again, changed, suspended and deleted; following it as it runs is
`JobFollowing`'s (odh.training.jobs.following)."""

from __future__ import annotations

import builtins
import copy
import dataclasses
import warnings
from pathlib import Path
from typing import Any, ClassVar, Self

from odh.training import creating, errors
from odh.training.capacity.preflight import Preflight, preflight
from odh.training.cluster.jobwatch import wait_until_gone
from odh.training.i18n import _
from odh.training.jobs.arguments import SDK_FIELDS, fix_arguments, phase_named
from odh.training.jobs.clients import default_client
from odh.training.jobs.following import JobFollowing
from odh.training.jobs.refusals import QuotaWarning, SettingWarning, refusal_error
from odh.training.jobs.spellings import ExampleSpellings
from odh.training.kinds import JobKind
from odh.training.manifests.importing import (
    ManifestImportError,
    parse_manifest_text,
)
from odh.training.sdk import TrainingClient
from odh.training.spec import (
    EnvVar,
    JobSpec,
    ManifestError,
    build_manifest,
    clone_spec,
    manifest_yaml,
)
from odh.training.spec import read_manifest as spec_from_manifest
from odh.training.status.summary import JobSummary


class TrainingJob(ExampleSpellings, JobFollowing):
    """A training job of a kind the dashboard creates, described in Python, created and
    followed in the cluster: what `MPIJob` and `TrainJob` share (each adds its own
    constructor and `update`)."""

    kind: ClassVar[JobKind]
    # the spec's fields as the constructor names them, in what the SDK raises and warns
    _sdk_fields: ClassVar[dict[str, str]] = SDK_FIELDS

    def __init__(self, spec: JobSpec, client: TrainingClient | None = None,
                 kubeconfig: str | None = None, context: str | None = None) -> None:
        self._init(spec, client, kubeconfig, context)

    def _init(self, spec: JobSpec, client: TrainingClient | None, kubeconfig: str | None,
              context: str | None) -> None:
        self.spec = spec
        self._client = client
        self._kubeconfig, self._context = kubeconfig, context
        self.object: dict | None = None  # the job as the cluster last answered
        self.preflight: Preflight | None = None

    @classmethod
    def from_spec(cls, spec: JobSpec, *, client: TrainingClient | None = None,
                  kubeconfig: str | None = None, context: str | None = None) -> Self:
        """A job from the dashboard's spec model (what the wizard's "SDK code" writes)."""
        if spec.kind is not cls.kind:
            raise errors.ValidationError("manifest", _(
                "This is a %(kind)s: read it with %(kind)s.from_yaml (or from_manifest).")
                % {"kind": spec.kind.label})
        job = cls.__new__(cls)
        job._init(dataclasses.replace(spec), client, kubeconfig, context)
        return job

    # -- names -------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def namespace(self) -> str:
        """The project; the kubeconfig context's (else "default") when none was given."""
        if not self.spec.namespace:
            self.spec.namespace = self.client.default_namespace or "default"
        return self.spec.namespace

    @property
    def client(self) -> TrainingClient:
        if self._client is None:
            self._client = default_client(self._kubeconfig, self._context)
        return self._client

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(name={self.spec.name!r}, "
                f"namespace={self.spec.namespace or None!r})")

    def _repr_html_(self) -> str:
        """The job in a notebook: what it runs, and where it stands once it was created or
        read from the cluster (odh.training.jobs.notebook)."""
        from odh.training.jobs.notebook import job_html
        return job_html(self)

    # -- files and templates -----------------------------------------------------------------
    @classmethod
    def from_yaml(cls, path: str | Path, **options: Any) -> Self:
        """A job from a manifest file (YAML or JSON). What the dashboard's model does not
        name (a securityContext, a sidecar) is kept as it is. A manifest the wizard would not
        import raises ValidationError saying what to change."""
        try:
            text = Path(path).read_bytes()
        except OSError as e:
            raise errors.ValidationError("path", _("cannot read %(path)s: %(reason)s.") % {
                "path": str(path), "reason": e.strerror or e}) from None
        return cls.from_manifest_text(text, **options)

    @classmethod
    def from_manifest_text(cls, text: str | bytes, **options: Any) -> Self:
        try:
            spec = parse_manifest_text(text)
        except ManifestImportError as e:
            raise errors.ValidationError("manifest", str(e)) from None
        return cls.from_spec(spec, **options)

    @classmethod
    def from_manifest(cls, manifest: dict, **options: Any) -> Self:
        """A job from a manifest already parsed (a dict, as the API returns it)."""
        try:
            spec = spec_from_manifest(manifest)
        except ManifestError as e:
            raise errors.ValidationError("manifest", str(e)) from None
        return cls.from_spec(spec, **options)

    def to_yaml(self, path: str | Path | None = None) -> str:
        """The manifest that `create` sends, as YAML (also written to `path` if given)."""
        text = manifest_yaml(build_manifest(self.spec))
        if path is not None:
            Path(path).write_text(text)
        return text

    # -- creating ----------------------------------------------------------------------------
    def check(self) -> Preflight:
        """What the wizard says of this job in its project, without creating anything."""
        self.spec.namespace = self.namespace
        self.preflight = preflight(self.client.cluster, self.spec)
        return self.preflight

    def recommend(self, *, prometheus: str | None = None):
        """Advice from history, as the dashboard's wizard gives it: what the finished jobs
        of this project with the same image and command used and how they went, and the
        size they suggest, as an `odh.training.advice.advise.Advice` (`.sentences`,
        `.memory_per_worker` "48Gi" and `.workers` 4 or None, `.changes`, `.rows`), or
        None when there is no similar run. Read with your credentials; what the Workers
        used comes from Prometheus (`prometheus`, default $ODH_PROMETHEUS_URL) when one is
        named. The SDK sees the jobs still in the cluster; the dashboard also remembers
        deleted ones.

            advice = job.recommend()
            if advice is not None:
                print(advice)  # its sentences
                job.update(**advice.changes)  # e.g. memory_per_worker="48Gi", workers=4
        """
        from odh.training.advice.gather import recommend
        self.spec.namespace = self.namespace
        return recommend(self.client, self.spec, prometheus)

    def create(self, wait: bool = False, timeout: float = 3600, *, dry_run: bool = False,
               force: bool = False) -> Self:
        """Create the job in the cluster and return it (so calls chain).

        First the wizard's checks: a setting it would refuse raises ValidationError (for a
        job read from a manifest, a field the cluster's MPIJob API does not have, too); a job
        that could never start (more than a quota holds, more than any node has, outside
        the LimitRange's bounds) raises ResourceQuotaExceeded with the wizard's fixes as
        `suggestions`, unless `force`; one that will wait for the quota's room warns
        (QuotaWarning). Your user name is recorded as the job's creator, as the dashboard
        does. With `wait`, returns once it Succeeded and raises JobFailedError if it failed,
        JobTimeoutError after `timeout` seconds. `dry_run` asks the API server only.
        """
        if not self.spec.created_by:
            self.spec.created_by = self.client.whoami()
        self.spec.namespace = self.namespace
        try:
            checked = creating.check(self.client.cluster, self.spec,
                                     from_manifest=self.spec.base is not None, force=force)
        except creating.CreateRefused as e:
            raise refusal_error(e, self._sdk_fields) from None
        self.preflight = checked
        for finding in checked.warnings:
            warnings.warn(SettingWarning(f"{self._sdk_fields.get(finding.field, finding.field)}: "
                                         f"{finding.message}"), stacklevel=2)
        if checked.waits:  # what it waits for, and what starts it (the queue first)
            warnings.warn(QuotaWarning(" ".join(checked.fit.problems + [
                checked.fit.waiting_note] + [f"{fix.label} ({fix_arguments(fix)})."
                                             for fix in checked.fit.fixes])), stacklevel=2)
        self.object = creating.create(self.client.cluster, self.spec, dry_run=dry_run,
                                      checked=checked).object
        if wait and not dry_run:
            self.wait_for_completion(timeout)
        return self

    # -- reading -----------------------------------------------------------------------------
    @classmethod
    def get(cls, name: str, namespace: str | None = None, *,
            client: TrainingClient | None = None) -> Self:
        """The job `name` of this kind as the cluster has it (NotFound if there is none)."""
        client = client or default_client()
        namespace = namespace or client.default_namespace or "default"
        found = client.get_job(name, namespace, cls.kind)
        job = cls.from_manifest(found, client=client)
        job.object = found
        return job

    @classmethod
    def list(cls, namespace: str | None = None, status: str | None = None, *,
             client: TrainingClient | None = None) -> builtins.list[Self]:
        """The jobs of this kind in a project (None: every project you may see), optionally
        only those whose status is `status` ("Running", "Failed"...)."""
        client = client or default_client()
        wanted = phase_named(status) if status else None
        summaries = [s for s in client.list_jobs(namespace) if s.kind is cls.kind
                     and (wanted is None or s.status == wanted)]
        namespaces = sorted({s.namespace for s in summaries})
        manifests = {}
        for each in namespaces:
            for obj in client.cluster.list_jobs(cls.kind, each):
                meta = obj.get("metadata") or {}
                manifests[(meta.get("namespace"), meta.get("name"))] = obj
        jobs = []
        for s in summaries:
            obj = manifests.get((s.namespace, s.name))
            if obj is None:
                continue  # deleted in between
            job = cls.from_manifest(obj, client=client)
            job.object = obj
            jobs.append(job)
        return jobs

    def summary(self) -> JobSummary:
        """The dashboard's summary of the job (status, lifecycle step, Launcher, Workers)."""
        return self.client.summary(self.name, self.namespace)

    # -- changing ----------------------------------------------------------------------------
    def with_fix(self, fix: Any, name: str | None = None) -> Self:
        """A new job: this one's configuration with one of its diagnosis' fixes applied
        (what the dashboard's "Clone with this fix" and `describe`'s command make), named
        `name` (default "<name>-fix"), created when you call `create()`:

            found = job.diagnose()
            fixed = job.with_fix(found.fixes[0]).create()
        """
        spec = clone_spec(self.spec, name or f"{self.name}-fix")
        settings = {f.name for f in dataclasses.fields(spec)}
        for key, value in fix.changes.items():
            if key == "env":  # rows as the fix writes them (a Secret's key, or a value)
                spec.env = [EnvVar(name=str(row["name"]), value=str(row.get("value") or ""),
                                   value_from=copy.deepcopy(row.get("value_from")))
                            for row in value]
            elif key in settings:
                setattr(spec, key, copy.deepcopy(value))
        return type(self).from_spec(spec, client=self._client, kubeconfig=self._kubeconfig,
                                context=self._context)

    def suspend(self) -> Self:
        self.object = self.client.suspend(self.name, self.namespace, self.kind)
        return self

    def resume(self) -> Self:
        self.object = self.client.resume(self.name, self.namespace, self.kind)
        return self

    def delete(self, wait: bool = False, timeout: float = 300) -> None:
        """Delete the job with its Launcher and Workers; with `wait`, return once the
        cluster no longer has it (JobTimeoutError after `timeout` seconds)."""
        self.client.delete_job(self.name, self.namespace, self.kind)
        if not wait:
            return
        wait_until_gone(self.client.cluster, self.kind, self.namespace, self.name, timeout)

