"""`MPIJob`: the SDK's front door, as the product plan names it.

    from odh.training import JobFailedError, MPIJob, ResourceSpec

    job = MPIJob(name="mnist", namespace="team-nlp", workers=4,
                 image="quay.io/team-nlp/mnist:1.0",
                 command=["horovodrun", "-np", "8", "python", "train.py"],
                 worker_resources=ResourceSpec(cpu="4", memory="16Gi", gpus=2))
    job.create(wait=True, timeout=3600)      # checked first, as the wizard checks
    print(job.status().duration_text)

Everything goes through `TrainingClient` and the dashboard's own modules: the same
validation and resource check as the wizard (`odh.training.capacity.preflight`), the same status
summary as the job's page, the same diagnosis when a job fails. The cluster is the one the
kubeconfig names (`KUBECONFIG`, `~/.kube/config`; `oc login` writes it) or, inside a pod,
the pod's service account; pass `client=TrainingClient(...)` for another. A `namespace`
left out is the kubeconfig context's (in a pod: the pod's own), else "default".

Every error is an `odh.training.errors.ODHError`: `ValidationError` (a setting the
wizard would refuse), `ResourceQuotaExceeded` (the job can never fit its quota or any
node), `AuthenticationError`, `JobFailedError`, `JobTimeoutError` and the cluster's own
refusals (`ClusterError` and its kinds); each carries `suggestions`.
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import threading
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Self

from odh.training import creating, errors
from odh.training.capacity.fit import Fix
from odh.training.capacity.preflight import Preflight, preflight
from odh.training.cluster.jobwatch import job_changes, wait_until_gone
from odh.training.i18n import _
from odh.training.jobstatus import JobStatus, Phase, ResourceSpec
from odh.training.kinds import JobKind, kind_for_slug
from odh.training.logs.logfollow import (
    follow_pod_lines,
    pod_expected,
    pod_for,
    read_text,
    wait_for_pod,
)
from odh.training.manifests.importing import (
    ManifestImportError,
    parse_manifest_text,
)
from odh.training.manifests.templates import BUILTIN_TEMPLATES, template_by_slug
from odh.training.queues.start import progress_ends, read_standing
from odh.training.sdk import InvalidSpec, TrainingClient
from odh.training.spec import (
    EnvVar,
    JobSpec,
    ManifestError,
    PVCVolume,
    build_manifest,
    clone_spec,
    manifest_yaml,
)
from odh.training.spec import read_manifest as spec_from_manifest
from odh.training.status.summary import JobSummary

__all__ = ["FIX_ARGUMENTS", "MPIJob", "QuotaWarning", "SettingWarning", "TrainingJob",
           "default_client", "fix_arguments"]

MPI_ALIASES = {"openmpi": "OpenMPI", "intelmpi": "Intel", "intel": "Intel", "mpich": "MPICH"}
# the spec's attribute -> how the SDK's constructor names it
SDK_FIELDS = {"cpu_per_worker": "worker_resources.cpu",
              "memory_per_worker": "worker_resources.memory",
              "gpus_per_worker": "worker_resources.gpus",
              "launcher_cpu": "launcher_resources.cpu",
              "launcher_memory": "launcher_resources.memory", "queue_name": "queue",
              "queue_priority": "priority"}
# a fix's change -> the constructor argument that makes it
FIX_ARGUMENTS = {"workers": "workers", "cpu_per_worker": "worker_resources.cpu",
                 "memory_per_worker": "worker_resources.memory",
                 "gpus_per_worker": "worker_resources.gpus",
                 "launcher_cpu": "launcher_resources.cpu",
                 "launcher_memory": "launcher_resources.memory",
                 "slots_per_worker": "slots_per_worker", "node_selector": "node_selector",
                 "command": "command", "queue_name": "queue"}

_clients: dict[tuple[str | None, str | None], TrainingClient] = {}
_clients_lock = threading.Lock()


class QuotaWarning(UserWarning):
    """The job fits the cluster but not the quota's room now: it will wait, Pending."""


class SettingWarning(UserWarning):
    """A setting the wizard allows but warns about (an -np that does not match Workers x
    Slots per worker, a memory limit without request...): the job is created."""


def default_client(kubeconfig: str | None = None, context: str | None = None
                   ) -> TrainingClient:
    """One TrainingClient per kubeconfig and context, shared by the jobs that use it."""
    key = (kubeconfig, context)
    with _clients_lock:
        if key not in _clients:
            _clients[key] = TrainingClient(kubeconfig=kubeconfig, context=context)
        return _clients[key]


def refusal_error(refused: creating.CreateRefused,
                  names: dict[str, str] | None = None) -> errors.ODHError:
    """A create refused before anything was sent, as the SDK raises it (`names`: the
    spec's fields as the job's constructor names them)."""
    if refused.reason == creating.UNKNOWN_FIELDS:
        return errors.ValidationError(refused.unknown[0], str(refused))
    if refused.reason == creating.NOT_SERVED:
        return errors.NotServed(str(refused), status=404)
    if refused.reason == creating.INVALID:
        return InvalidSpec(refused.findings, names=SDK_FIELDS if names is None else names)
    if refused.reason == creating.COUNT_QUOTA_FULL:  # nothing of the job's mends it
        room = refused.room  # the oldest finished jobs first, with the calls that delete them
        first = [room.label() + " (" + "; ".join(
            f"MPIJob.get({name!r}, {room.namespace!r}).delete()" for name in room.names)
            + ")"] if room is not None and room.makes_room else []
        return errors.ResourceQuotaExceeded(str(refused),
                                            suggestions=first + errors.count_quota_advice())
    fixes = refused.checked.fit.fixes if refused.checked is not None else []
    return errors.ResourceQuotaExceeded(
        " ".join(refused.problems),
        suggestions=[f"{fix.label} ({fix_arguments(fix)})" for fix in fixes]
        + [_("Pass force=True to create it anyway.")])


def fix_arguments(fix: Fix) -> str:
    """A fix as the constructor's arguments: "workers=2, worker_resources.gpus=8"."""
    return ", ".join(f"{FIX_ARGUMENTS.get(k, k)}={v!r}" for k, v in fix.changes.items()
                     if k in FIX_ARGUMENTS)


def _resources(value: ResourceSpec | Mapping[str, Any] | None, what: str) -> ResourceSpec:
    if value is None:
        return ResourceSpec()
    if isinstance(value, ResourceSpec):
        return value
    if isinstance(value, Mapping):
        unknown = set(value) - {"cpu", "memory", "gpus"}
        if unknown:
            raise errors.ValidationError(what, _("unknown key %(key)s: use cpu, memory and "
                                                 "gpus.") % {"key": sorted(unknown)[0]})
        return ResourceSpec(**value)
    raise errors.ValidationError(what, _("give a ResourceSpec(cpu=..., memory=..., gpus=...)."))


def _env(value: Mapping[str, str] | Sequence[EnvVar | Mapping[str, Any]] | None
         ) -> list[EnvVar]:
    if not value:
        return []
    if isinstance(value, Mapping):
        return [EnvVar(name=str(k), value=str(v)) for k, v in value.items()]
    found = []
    for item in value:
        if isinstance(item, EnvVar):
            found.append(item)
        elif isinstance(item, Mapping):
            found.append(EnvVar.from_manifest(dict(item)))
        else:
            raise errors.ValidationError("env", _("give a dict of NAME: value, or a list of "
                                                  "EnvVar."))
    return found


def _volumes(value: Sequence[PVCVolume | Mapping[str, Any]] | None) -> list[PVCVolume]:
    found = []
    for item in value or []:
        if isinstance(item, PVCVolume):
            found.append(item)
        elif isinstance(item, Mapping):
            claim = item.get("claim_name") or item.get("claim") or item.get("claimName")
            mount = item.get("mount_path") or item.get("mountPath")
            if not claim or not mount:
                raise errors.ValidationError("volumes", _(
                    "each volume needs claim_name (a PersistentVolumeClaim of the project) "
                    "and mount_path, e.g. {\"claim_name\": \"datasets\", \"mount_path\": "
                    "\"/data\"}."))
            found.append(PVCVolume(claim_name=str(claim), mount_path=str(mount),
                                   read_only=bool(item.get("read_only", False))))
        else:
            raise errors.ValidationError("volumes", _("give PVCVolume objects or dicts."))
    return found


class TrainingJob:
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
        wanted = _phase(status) if status else None
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

    def status(self) -> JobStatus:
        """Where the job stands now (phase, Workers by state, start, completion); for a
        job that names a Kueue queue and has not finished, `queue` too: its position, what
        it needs against what is free, the jobs ahead and its expected start, as far as
        you may read them (odh.training.queues.standing.QueueStanding)."""
        from odh.training.diagnosis import diagnose
        from odh.training.diagnosis.gather import Sources, gather
        from odh.training.diagnosis.story import tell
        from odh.training.status.queries import job_detail
        cluster = self.client.cluster
        detail = job_detail(cluster, self.kind, self.namespace, self.name)
        summary = detail.summary
        status = JobStatus.from_summary(summary)
        standing = None
        if summary.queue and not summary.is_finished:
            standing = read_standing(cluster, self.kind, detail.job,
                                     ends_in=progress_ends(cluster))
            status = dataclasses.replace(status, queue=standing)
        # its one line, as the dashboard and `describe` say it (odh.training.diagnosis.story): the
        # diagnosis from what its headline rests on (objects, events, log tails)
        facts = gather(cluster, detail.job, detail.pods, detail.events, summary=summary,
                       sources=Sources(brief=True, read_nodes=False))
        queued = standing.headline() if standing is not None and summary.held_by_queue \
            else None
        told = tell(summary, diagnose(facts), queued)
        # `step` says the same (the lifecycle step alone: `summary().lifecycle_step`)
        return dataclasses.replace(status, step=str(told.line), headline=str(told.line))

    def watch(self, timeout: float | None = None) -> Iterator[JobStatus]:
        """Each new status as it happens (driven by a watch on the job, not by polling),
        the current one first; ends after the job has finished, or after `timeout`
        seconds, or when it is deleted."""
        deadline = None if timeout is None else time.monotonic() + timeout
        last: JobStatus | None = None
        for obj in job_changes(self.client.cluster, self.kind, self.namespace, self.name,
                               deadline=deadline):
            if obj is None:
                return
            current = self.status()
            if current.changed_from(last):
                last = current
                yield current
            if current.is_finished:
                return

    def wait_for_completion(self, timeout: float = 3600) -> JobStatus:
        """Return the final status once the job Succeeded; raise JobFailedError (with the
        diagnosis, its suggestions and the log lines it rests on) if it failed, and
        JobTimeoutError after `timeout` seconds."""
        last: JobStatus | None = None
        for last in self.watch(timeout=timeout):
            if last.phase == Phase.FAILED:
                raise self.client.failure(self.name, self.namespace, self.kind)
            if last.phase == Phase.SUCCEEDED:
                return last
        if last is not None and last.phase in (Phase.SUCCEEDED, Phase.FAILED):
            return last
        try:
            last = self.status()
        except errors.NotFound:
            raise errors.NotFound(_("%(name)s was deleted before it finished.")
                                  % {"name": self.name}, status=404,
                                  namespace=self.namespace) from None
        raise errors.JobTimeoutError(
            _("%(name)s is still %(status)s after %(seconds)d seconds.") % {
                "name": self.name, "status": last.phase.value, "seconds": int(timeout)},
            status=last)

    def cost(self):
        """What the job has cost so far (not finished) or in all (finished), at the prices
        the dashboard's administrators set, as it publishes them (the ConfigMap
        mpijob-dashboard-prices in $ODH_DASHBOARD_NAMESPACE, by default mpijob-dashboard):
        an `odh.training.cost.Cost` (`.total` a Decimal, `.currency`, `.text` "12.35
        USD", `.basis` what it counts), or None when no price is set."""
        from odh.training.cost import job_cost, read_prices
        from odh.training.status.queries import job_detail
        cluster = self.client.cluster
        prices = read_prices(cluster)
        if not prices.is_set:
            return None
        detail = job_detail(cluster, self.kind, self.namespace, self.name)
        return job_cost(prices, self.kind, detail.job, detail.summary.duration_seconds())

    def diagnose(self):
        """Why the job failed, waits or looks unwell, and what to do (None: all is well)."""
        return self.client.diagnose(self.name, self.namespace, self.kind)

    def get_logs(self, component: str = "launcher", worker_id: int | None = None,
                 follow: bool = False, tail: int | None = None,
                 previous: bool = False) -> Iterator[str]:
        """The Launcher's log lines (`component="launcher"`) or Worker `worker_id`'s
        (`component="worker"`). With `follow`, lines come as they are written until the
        pod ends, waiting first for a pod or container that has not started; a dropped
        connection is picked up again without losing or repeating a line. Without it, the
        lines there are: none yet for a job that is starting. `previous`: the crashed run
        (the container's log before it last restarted; NotFound when it never did)."""
        if component not in ("launcher", "worker"):
            raise ValueError(_('component is "launcher" or "worker".'))
        if component == "worker" and worker_id is None:
            raise ValueError(_("worker_id is required for a Worker's log: "
                               "get_logs(component=\"worker\", worker_id=0)."))
        if previous and follow:
            raise ValueError(_("A crashed run has ended: read it without follow."))
        index = worker_id if component == "worker" else None
        cluster = self.client.cluster
        if follow:
            pod = wait_for_pod(cluster, self.kind, self.namespace, self.name, index)
        else:
            try:
                pod = pod_for(cluster, self.kind, self.namespace, self.name, index)
            except errors.NotFound:
                if not pod_expected(cluster, self.kind, self.namespace, self.name, index):
                    raise  # no such job, or a pod it will never have
                return iter(())
            text = read_text(cluster, self.namespace, pod, tail, previous=previous)
            return iter((text or "").splitlines())
        return (text for _stamp, text in follow_pod_lines(
            self.client.cluster, self.namespace, pod.name, pod.container, tail=tail))

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


class MPIJob(TrainingJob):
    """An MPIJob: described in Python, created and followed in the cluster."""

    kind = kind_for_slug("mpijob")

    def __init__(self, name: str, namespace: str | None = None, workers: int = 1,
                 slots_per_worker: int | None = None, image: str = "",
                 command: Sequence[str] | None = None,
                 launcher_resources: ResourceSpec | Mapping[str, Any] | None = None,
                 worker_resources: ResourceSpec | Mapping[str, Any] | None = None,
                 env: Mapping[str, str] | Sequence[EnvVar] | None = None,
                 volumes: Sequence[PVCVolume | Mapping[str, Any]] | None = None,
                 mpi_implementation: str = "OpenMPI", clean_pod_policy: str = "Running",
                 ttl_seconds_after_finished: int | None = 3600, *,
                 backoff_limit: int | None = None, queue: str = "", priority: str = "",
                 priority_class: str = "",
                 node_selector: Mapping[str, str] | None = None,
                 labels: Mapping[str, str] | None = None,
                 annotations: Mapping[str, str] | None = None,
                 client: TrainingClient | None = None, kubeconfig: str | None = None,
                 context: str | None = None) -> None:
        launcher = _resources(launcher_resources, "launcher_resources")
        worker = _resources(worker_resources, "worker_resources")
        if launcher.gpus:
            raise errors.ValidationError("launcher_resources.gpus", _(
                "the Launcher only starts mpirun and needs no GPU: give GPUs to the Workers "
                "(worker_resources) and leave the Launcher's at 0."))
        spec = self.kind.new_spec(
            name=name, namespace=namespace or "", image=image, command=list(command or []),
            workers=workers, cpu_per_worker=worker.cpu, memory_per_worker=worker.memory,
            gpus_per_worker=worker.gpus, launcher_cpu=launcher.cpu,
            launcher_memory=launcher.memory, slots_per_worker=slots_per_worker,
            mpi_implementation=MPI_ALIASES.get(str(mpi_implementation).lower(),
                                               str(mpi_implementation)),
            env=_env(env), volumes=_volumes(volumes), node_selector=dict(node_selector or {}),
            queue_name=queue, priority_class=priority_class,
            clean_pod_policy=clean_pod_policy,
            ttl_seconds_after_finished=ttl_seconds_after_finished,
            backoff_limit=backoff_limit,
            queue_priority=priority, labels=dict(labels or {}),
            annotations=dict(annotations or {}))
        super().__init__(spec, client, kubeconfig, context)

    @classmethod
    def from_template(cls, template_name: str, **overrides: Any) -> MPIJob:
        """A job from one of the dashboard's built-in templates ("horovod-pytorch",
        "horovod-tensorflow", "deepspeed-mpi", "intel-mpi"), with `overrides` as the
        constructor takes them: `MPIJob.from_template("horovod-pytorch", name="bert",
        namespace="team-nlp", workers=4)`."""
        template = template_by_slug(template_name)
        if template is None:
            raise errors.ValidationError("template_name", _(
                'there is no template "%(name)s": use one of %(names)s.') % {
                "name": template_name[:60],
                "names": ", ".join(t.slug for t in BUILTIN_TEMPLATES)})
        options = {k: overrides.pop(k) for k in ("client", "kubeconfig", "context")
                   if k in overrides}
        spec = template.new_spec(str(overrides.pop("name", "")),
                                 str(overrides.pop("namespace", "") or ""))
        job = cls.from_spec(spec, **options)
        job.update(**overrides)
        return job

    def update(self, **settings: Any) -> MPIJob:
        """Change settings before `create`, named as the constructor names them."""
        spec = self.spec
        for key, value in settings.items():
            if key in ("worker_resources", "launcher_resources"):
                res = _resources(value, key)
                if key == "worker_resources":
                    spec.cpu_per_worker, spec.memory_per_worker = res.cpu, res.memory
                    spec.gpus_per_worker = res.gpus
                else:
                    spec.launcher_cpu, spec.launcher_memory = res.cpu, res.memory
            elif key == "env":
                spec.env = _env(value)
            elif key == "volumes":
                spec.volumes = _volumes(value)
            elif key == "queue":
                spec.queue_name = str(value)
            elif key == "priority":
                spec.queue_priority = str(value)
            elif key == "mpi_implementation":
                spec.mpi_implementation = MPI_ALIASES.get(str(value).lower(), str(value))
            elif key == "command":
                spec.command = list(value)
            elif key in {f.name for f in dataclasses.fields(spec)} and key != "base":
                setattr(spec, key, value)
            else:
                raise errors.ValidationError(key, _("MPIJob has no setting %(key)s.")
                                             % {"key": key[:60]})
        return self


def _phase(status: str) -> Phase:
    for phase in Phase:
        if phase.value.lower() == str(status).lower():
            return phase
    raise errors.ValidationError("status", _("use one of %(statuses)s.") % {
        "statuses": ", ".join(p.value for p in Phase)})

