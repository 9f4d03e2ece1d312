"""Built-in job templates: a working starting point for each MPI framework people use.

Each template is a spec (of the kind it creates) without name and project. The images
that run their SSH server as `mpiuser` (the MPI Operator's and Kubeflow Trainer's images)
carry a base manifest with what the spec model does not name: the non-root user, the SSH
key path and the Workers' sshd command, so the job built from them runs as their upstream
examples do.
Templates start the Launcher once every Worker is ready, so mpirun finds them all.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any

import yaml

from odh.training.i18n import LazyText, gettext_lazy
from odh.training.spec import EnvVar, JobSpec, new_spec, read_manifest

HOROVOD_IMAGE = "docker.io/horovod/horovod:0.28.1"
DEEPSPEED_IMAGE = "ghcr.io/kubeflow/trainer/deepspeed-runtime:v2.0.0"
INTEL_IMAGE = "docker.io/mpioperator/mpi-pi:intel"
HOSTFILE = "/etc/mpi/hostfile"


@dataclass(frozen=True)
class JobTemplate:
    slug: str
    # Built-in titles and descriptions are LazyText: translated whenever they are rendered
    # (str()); saved templates carry their own words.
    title: str | LazyText
    description: str | LazyText
    spec: JobSpec

    def new_spec(self, name: str = "", namespace: str = "") -> JobSpec:
        """A fresh copy of the template's spec (base included) under a name and project."""
        spec = copy.deepcopy(self.spec)
        spec.name, spec.namespace = name, namespace
        return spec


# The non-root SSH setup of the mpioperator/base and Kubeflow Trainer MPI images.
_MPIUSER_MANIFEST = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {}
spec:
  sshAuthMountPath: /home/mpiuser/.ssh
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            securityContext:
              runAsUser: 1000
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: worker
            securityContext:
              runAsUser: 1000
            command: [/usr/sbin/sshd]
            args: [-De, -f, /home/mpiuser/.sshd_config]
            readinessProbe:
              tcpSocket:
                port: 2222
              initialDelaySeconds: 2
"""


def _mpiuser_spec(**settings: Any) -> JobSpec:
    """A spec on the mpiuser base manifest, with the dashboard's defaults and `settings`."""
    defaults = {"clean_pod_policy": "Running", "disable_sidecar_injection": True}
    return dataclasses.replace(read_manifest(yaml.safe_load(_MPIUSER_MANIFEST)),
                               **{**defaults, **settings})


def _horovod(script: str, *arguments: str) -> JobSpec:
    return new_spec(
        image=HOROVOD_IMAGE,
        command=["horovodrun", "-np", "2", "--hostfile", HOSTFILE, "python", script,
                 *arguments],
        workers=2, cpu_per_worker="8", memory_per_worker="32Gi", gpus_per_worker=1,
        launcher_cpu="1", launcher_memory="2Gi",
        env=[EnvVar("NCCL_DEBUG", "INFO")],
        launcher_creation_policy="WaitForWorkersReady",
    )


def _builtin() -> list[JobTemplate]:
    return [
        JobTemplate(
            slug="horovod-pytorch", title=gettext_lazy("Horovod + PyTorch"),
            description=gettext_lazy(
                "Data-parallel PyTorch training with Horovod: 2 Workers with 1 GPU each run the "
                "MNIST example from the Horovod image. Replace the script with yours, and keep "
                "-np equal to workers x slots."),
            spec=_horovod("/horovod/examples/pytorch/pytorch_mnist.py", "--epochs", "3")),
        JobTemplate(
            slug="horovod-tensorflow", title=gettext_lazy("Horovod + TensorFlow"),
            description=gettext_lazy(
                "Data-parallel TensorFlow 2 (Keras) training with Horovod: 2 Workers with 1 GPU "
                "each run the Keras MNIST example from the Horovod image. Replace the script "
                "with yours, and keep -np equal to workers x slots."),
            spec=_horovod("/horovod/examples/tensorflow2/tensorflow2_keras_mnist.py")),
        JobTemplate(
            slug="deepspeed-mpi", title=gettext_lazy("DeepSpeed (MPI backend)"),
            description=gettext_lazy(
                "DeepSpeed launched through OpenMPI on Kubeflow's DeepSpeed image: 2 Workers with "
                "4 GPUs each, one slot per GPU. Point the command at your training script and "
                "DeepSpeed config, for example on a mounted volume."),
            spec=_mpiuser_spec(
                image=DEEPSPEED_IMAGE,
                command=["deepspeed", "--launcher", "openmpi", "--hostfile", HOSTFILE,
                         "/workspace/train.py", "--deepspeed", "--deepspeed_config",
                         "/workspace/ds_config.json"],
                workers=2, cpu_per_worker="32", memory_per_worker="128Gi", gpus_per_worker=4,
                launcher_cpu="2", launcher_memory="4Gi",
                env=[EnvVar("NCCL_DEBUG", "INFO")],
                launcher_creation_policy="WaitForWorkersReady")),
        JobTemplate(
            slug="intel-mpi", title=gettext_lazy("Intel MPI"),
            description=gettext_lazy(
                "Intel MPI on CPUs: 2 Workers compute pi with the MPI Operator's Intel example "
                "image, over TCP (I_MPI_FABRICS=shm:ofi, FI_PROVIDER=tcp). Replace the image and "
                "program with yours."),
            spec=_mpiuser_spec(
                image=INTEL_IMAGE, mpi_implementation="Intel",
                command=["mpirun", "-n", "2", "/home/mpiuser/pi"],
                workers=2, cpu_per_worker="1", memory_per_worker="1Gi",
                launcher_cpu="1", launcher_memory="1Gi",
                env=[EnvVar("I_MPI_FABRICS", "shm:ofi"), EnvVar("FI_PROVIDER", "tcp"),
                     EnvVar("I_MPI_DEBUG", "5")],
                launcher_creation_policy="WaitForWorkersReady")),
    ]


BUILTIN_TEMPLATES: list[JobTemplate] = _builtin()


def template_by_slug(slug: str) -> JobTemplate | None:
    return next((t for t in BUILTIN_TEMPLATES if t.slug == slug), None)
