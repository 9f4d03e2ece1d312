"""Controllers running inside simcluster, as a real cluster runs them in its control plane.

Each module owns one controller; `all_controllers` lists them in start order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simcluster.controllers.base import Controller

if TYPE_CHECKING:
    from simcluster.cluster import Cluster


def all_controllers(cluster: Cluster) -> list[Controller]:
    from simcluster.controllers.batchjob import JobController
    from simcluster.controllers.kubeflow_v1 import PyTorchJobController, TFJobController
    from simcluster.controllers.mpijob.controller import MPIJobController

    controllers: list[Controller] = []
    controllers += [MPIJobController(cluster), JobController(cluster),
                    PyTorchJobController(cluster), TFJobController(cluster)]
    from simcluster.node.kubelet import Kubelet
    from simcluster.placement.scheduler import Scheduler

    controllers += [Scheduler(cluster), Kubelet(cluster)]
    if serves_kueue(cluster):
        from simcluster.placement.kueue import KueueController

        cluster.kueue = KueueController(cluster)  # the visibility API asks it its order
        controllers.append(cluster.kueue)
    if serves_jobset(cluster):
        from simcluster.controllers.jobset.controller import JobSetController

        controllers.append(JobSetController(cluster))
    if serves_trainer(cluster):
        from simcluster.controllers.trainjob.controller import TrainJobController

        controllers.append(TrainJobController(cluster))
    return controllers


def serves_kueue(cluster: Cluster) -> bool:
    return cluster.registry.by_kind("kueue.x-k8s.io/v1beta1", "Workload") is not None


def serves_trainer(cluster: Cluster) -> bool:
    """The Trainer runs when the cluster serves both TrainJob and JobSet."""
    return (cluster.registry.by_kind("trainer.kubeflow.org/v1alpha1", "TrainJob") is not None
            and cluster.registry.by_kind("jobset.x-k8s.io/v1alpha2", "JobSet") is not None)


def serves_jobset(cluster: Cluster) -> bool:
    return cluster.registry.by_kind("jobset.x-k8s.io/v1alpha2", "JobSet") is not None
