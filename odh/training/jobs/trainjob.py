"""`TrainJob`: a Kubeflow Trainer v2 TrainJob from Python, beside `MPIJob`, with the same
methods (create, status, watch, wait_for_completion, get_logs, diagnose, suspend, resume,
delete: `odh.training.jobs.trainingjob.TrainingJob`), and `list_runtimes`: the runtimes it
may run on.

    from odh.training import TrainJob, list_runtimes

    print([r.name for r in list_runtimes("team-nlp")])
    job = TrainJob("pi", runtime="mpi-distributed", num_nodes=2, namespace="team-nlp",
                   image="quay.io/team-nlp/pi:1.0", command=["mpirun", "/home/mpiuser/pi"],
                   resources_per_node={"cpu": "4", "memory": "8Gi", "gpus": 1})
    job.create(wait=True)

Its nodes are the TrainJob's Workers (`numNodes`); `num_proc_per_node` is the processes
each runs (`numProcPerNode`, None: the runtime's). Created through the one create path:
the runtime is checked first (it exists, it runs MPI when `mpi_implementation` is asked
for, the cluster has the Trainer at all), then the wizard's checks.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from odh.training import errors
from odh.training.i18n import _
from odh.training.jobs.arguments import (
    env_vars,
    pvc_volumes,
    resource_spec,
    retry_wish,
    updated_wish,
)
from odh.training.jobs.clients import default_client
from odh.training.jobs.trainingjob import TrainingJob
from odh.training.jobstatus import ResourceSpec
from odh.training.kinds import Runtime, Runtimes, kind_for_slug, read_runtimes
from odh.training.sdk import TrainingClient
from odh.training.spec import EnvVar, PVCVolume

__all__ = ["Runtime", "Runtimes", "TrainJob", "list_runtimes"]

# the spec's attribute -> how TrainJob's constructor names it
TRAINJOB_FIELDS = {"workers": "num_nodes", "slots_per_worker": "num_proc_per_node",
                   "cpu_per_worker": "resources_per_node.cpu",
                   "memory_per_worker": "resources_per_node.memory",
                   "gpus_per_worker": "resources_per_node.gpus", "queue_name": "queue",
                   "queue_priority": "priority"}
_RENAMED = {v: k for k, v in TRAINJOB_FIELDS.items() if "." not in v}


def list_runtimes(namespace: str | None = None, *, client: TrainingClient | None = None
                  ) -> builtins.list[Runtime]:
    """The runtimes TrainJobs of `namespace` may run on: the cluster's
    ClusterTrainingRuntimes, then the project's TrainingRuntimes (each with its framework
    and description). Without the right to list the cluster's, those the project's
    TrainJobs use (odh.training.kinds.read_runtimes). NotServed: no Trainer."""
    return read_runtimes_of(namespace, client=client).items


def read_runtimes_of(namespace: str | None = None, *, client: TrainingClient | None = None
                     ) -> Runtimes:
    """`list_runtimes`, and whether the cluster's runtimes could be listed."""
    client = client or default_client()
    return read_runtimes(client.cluster, namespace or client.default_namespace or "default")


class TrainJob(TrainingJob):
    """A TrainJob (trainer.kubeflow.org/v1alpha1): described in Python, created and
    followed in the cluster."""

    kind = kind_for_slug("trainjob")
    _sdk_fields: ClassVar[dict[str, str]] = TRAINJOB_FIELDS

    def __init__(self, name: str, runtime: str = "mpi-distributed", num_nodes: int = 1,
                 image: str = "", command: Sequence[str] | None = None,
                 resources_per_node: ResourceSpec | Mapping[str, Any] | None = None,
                 num_proc_per_node: int | None = None, namespace: str | None = None,
                 env: Mapping[str, str] | Sequence[EnvVar] | None = None,
                 queue: str = "", *, runtime_kind: str = "ClusterTrainingRuntime",
                 mpi_implementation: str = "", priority: str = "",
                 volumes: Sequence[PVCVolume | Mapping[str, Any]] | None = None,
                 node_selector: Mapping[str, str] | None = None,
                 labels: Mapping[str, str] | None = None,
                 annotations: Mapping[str, str] | None = None,
                 retries: int | None = None, retry_on: str = "platform",
                 client: TrainingClient | None = None, kubeconfig: str | None = None,
                 context: str | None = None) -> None:
        per_node = resource_spec(resources_per_node, "resources_per_node")
        spec = self.kind.new_spec(
            name=name, namespace=namespace or "", runtime=runtime, runtime_kind=runtime_kind,
            image=image, command=list(command or []), workers=num_nodes,
            cpu_per_worker=per_node.cpu, memory_per_worker=per_node.memory,
            gpus_per_worker=per_node.gpus, slots_per_worker=num_proc_per_node,
            mpi_implementation=mpi_implementation, env=env_vars(env), volumes=pvc_volumes(volumes),
            node_selector=dict(node_selector or {}), queue_name=queue, queue_priority=priority,
            labels=dict(labels or {}), annotations=retry_wish(annotations, retries, retry_on))
        super().__init__(spec, client, kubeconfig, context)

    def update(self, **settings: Any) -> TrainJob:
        """Change settings before `create`, named as the constructor names them."""
        spec = self.spec
        for key, value in settings.items():
            if key == "resources_per_node":
                res = resource_spec(value, key)
                spec.cpu_per_worker, spec.memory_per_worker = res.cpu, res.memory
                spec.gpus_per_worker = res.gpus
            elif key in ("retries", "retry_on"):
                spec.annotations = updated_wish(spec.annotations, key, value)
            elif key == "env":
                spec.env = env_vars(value)
            elif key == "volumes":
                spec.volumes = pvc_volumes(value)
            elif key == "command":
                spec.command = list(value)
            elif key in _RENAMED:
                setattr(spec, _RENAMED[key], value)
            elif key in ("name", "namespace", "runtime", "runtime_kind", "image",
                         "mpi_implementation", "node_selector", "labels", "annotations"):
                setattr(spec, key, value)
            else:
                raise errors.ValidationError(key, _("TrainJob has no setting %(key)s.")
                                             % {"key": key[:60]})
        return self

    def get_logs(self, component: str = "launcher", worker_id: int | None = None,
                 follow: bool = False, tail: int | None = None,
                 previous: bool = False) -> Iterator[str]:
        """As MPIJob.get_logs; a node's log is `component="node"` (or "worker") with its
        index as `worker_id`. A runtime without a launcher (torch) starts with node 0."""
        return super().get_logs("worker" if component == "node" else component, worker_id,
                                follow, tail, previous)
