"""`MPIJob`: an MPIJob of the MPI Operator from Python, its constructor, its templates and
its settings named as the constructor names them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from odh.training import errors
from odh.training.i18n import _
from odh.training.jobs.arguments import (
    MPI_ALIASES,
    env_vars,
    pvc_volumes,
    resource_spec,
    retry_wish,
    updated_wish,
)
from odh.training.jobs.trainingjob import TrainingJob
from odh.training.jobstatus import ResourceSpec
from odh.training.kinds import kind_for_slug
from odh.training.manifests.templates import BUILTIN_TEMPLATES, template_by_slug
from odh.training.sdk import TrainingClient
from odh.training.spec import EnvVar, PVCVolume


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
                 retries: int | None = None, retry_on: str = "platform",
                 client: TrainingClient | None = None, kubeconfig: str | None = None,
                 context: str | None = None) -> None:
        launcher = resource_spec(launcher_resources, "launcher_resources")
        worker = resource_spec(worker_resources, "worker_resources")
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
            env=env_vars(env), volumes=pvc_volumes(volumes),
            node_selector=dict(node_selector or {}),
            queue_name=queue, priority_class=priority_class,
            clean_pod_policy=clean_pod_policy,
            ttl_seconds_after_finished=ttl_seconds_after_finished,
            backoff_limit=backoff_limit,
            queue_priority=priority, labels=dict(labels or {}),
            annotations=retry_wish(annotations, retries, retry_on))
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
                res = resource_spec(value, key)
                if key == "worker_resources":
                    spec.cpu_per_worker, spec.memory_per_worker = res.cpu, res.memory
                    spec.gpus_per_worker = res.gpus
                else:
                    spec.launcher_cpu, spec.launcher_memory = res.cpu, res.memory
            elif key in ("retries", "retry_on"):
                spec.annotations = updated_wish(spec.annotations, key, value)
            elif key == "env":
                spec.env = env_vars(value)
            elif key == "volumes":
                spec.volumes = pvc_volumes(value)
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

