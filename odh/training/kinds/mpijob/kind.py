"""The MPIJob (`kubeflow.org/v2beta1`, the MPI Operator): a Launcher that runs mpirun and
Workers that run sshd. The one kind the dashboard creates; its spec model and manifest are
beside this module (model.py, manifest.py), and the package's __init__ makes the kind of
all three (`MPIJOB`)."""

from __future__ import annotations

from dataclasses import dataclass

from odh.training.i18n import LazyText, gettext_lazy
from odh.training.kinds.base import JOB_ROLE_LABEL, JobKind, role_name

GROUP, VERSION, KIND = "kubeflow.org", "v2beta1", "MPIJob"
API_VERSION = f"{GROUP}/{VERSION}"


@dataclass(frozen=True)
class MPIJobKind(JobKind):
    @property
    def waiting_for_controller(self) -> LazyText | None:
        return gettext_lazy("Waiting for the MPI Operator")

    def pod_role(self, labels: dict) -> str:
        return role_name(str(labels.get(JOB_ROLE_LABEL, "worker")))

    def default_replicas(self, role: str) -> int:
        # the MPI Operator applies Worker replicas 0 in memory
        return 1 if role == "Launcher" else 0

    def event_job_name(self, involved_kind: str, name: str) -> str | None:
        if involved_kind == "Job":  # the Launcher's batch Job, <job>-launcher
            job = name.removesuffix("-launcher")
            return job if job and job != name else None
        return super().event_job_name(involved_kind, name)

    def pod_name_regex(self, escaped_name: str) -> str:
        # the launcher is a batch Job's pod (<job>-launcher-<5 chars>; older operators named
        # the pod <job>-launcher itself)
        return rf"{escaped_name}-(launcher(-[a-z0-9]{{5}})?|worker-[0-9]+)"

