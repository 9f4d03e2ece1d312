"""The troubleshooting guide's pages: one per scenario the diagnosis tells apart.

The pages themselves are Markdown files in `docs/troubleshooting/<slug>.md`, readable in
the repository and served by the dashboard; this is their list, in the guide's order.
"""

from __future__ import annotations

from odh.training.diagnosis.model import Culprit
from odh.training.i18n import gettext_lazy

# slug -> (title, the class it usually belongs to)
PAGES = {
    "oom-killed": (gettext_lazy("Out of memory (OOMKilled)"), Culprit.CONFIGURATION),
    "cuda-out-of-memory": (gettext_lazy("CUDA out of memory"), Culprit.CONFIGURATION),
    "image-pull": (gettext_lazy("The image cannot be pulled"), Culprit.CONFIGURATION),
    "command-not-found": (gettext_lazy("Command not found or not executable"),
                          Culprit.CONFIGURATION),
    "volume": (gettext_lazy("A volume, Secret or ConfigMap is missing"), Culprit.CONFIGURATION),
    "mpi-communication": (gettext_lazy("MPI communication failure"), Culprit.CONFIGURATION),
    "never-fits": (gettext_lazy("The job can never start"), Culprit.CONFIGURATION),
    "admission-refused": (gettext_lazy("Pods refused by a LimitRange or admission"),
                          Culprit.CONFIGURATION),
    "deadline-exceeded": (gettext_lazy("Deadline exceeded"), Culprit.CONFIGURATION),
    "invalid-job": (gettext_lazy("The MPI Operator refused the job"), Culprit.CONFIGURATION),
    "exit-code": (gettext_lazy("The training program failed"), Culprit.CODE),
    "segfault": (gettext_lazy("Segmentation fault"), Culprit.CODE),
    "possible-hang": (gettext_lazy("Possible hang"), Culprit.CODE),
    "worker-restarting": (gettext_lazy("A Worker crashed and is restarting"), Culprit.CODE),
    "low-gpu-utilization": (gettext_lazy("Low GPU utilization"), Culprit.CODE),
    "evicted": (gettext_lazy("Evicted"), Culprit.PLATFORM),
    "node-lost": (gettext_lazy("The node was lost"), Culprit.PLATFORM),
    "waiting-for-capacity": (gettext_lazy("Waiting for GPUs"), Culprit.CAPACITY),
    "quota": (gettext_lazy("Waiting on the project's quota"), Culprit.CAPACITY),
    "preempted": (gettext_lazy("Preempted"), Culprit.CAPACITY),
    "backoff-limit": (gettext_lazy("A Job reached its backoff limit"), Culprit.UNKNOWN),
    "unknown": (gettext_lazy("We could not tell why"), Culprit.UNKNOWN),
}


def page_title(slug: str) -> str:
    page = PAGES.get(slug)
    return str(page[0]) if page else slug
