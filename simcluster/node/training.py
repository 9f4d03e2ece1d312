"""Training programs: sshd in MPI workers, the mpirun launcher, PyTorch/TensorFlow trainers.

Output is deterministic per job (numbers seeded from namespace and job name): the same
job always writes the same lines. Launchers and masters carry out the job's failure
annotation (behaviour.py); what each one prints is the real tool's wording (OpenMPI 4 /
ORTE help texts, sshd, Python tracebacks). The parts: what they share and the tools'
failure texts (training_texts.py), sshd and the MPI launcher (mpi_launcher.py), the
PyTorchJob/TFJob trainer (trainer.py); the names workloads.py and the tests use are here.
"""

from __future__ import annotations

from simcluster.node.mpi_launcher import MpiLauncher, Sshd, launched_program
from simcluster.node.trainer import Trainer
from simcluster.node.training_texts import (
    LAUNCHERS,
    TRAINERS,
    cuda_oom_error,
    gpu_memory_mib,
    nccl_aborted,
    oom_traceback,
    script_name,
)

__all__ = ["LAUNCHERS", "TRAINERS", "MpiLauncher", "Sshd", "Trainer", "cuda_oom_error",
           "gpu_memory_mib", "launched_program", "nccl_aborted", "oom_traceback",
           "script_name"]
