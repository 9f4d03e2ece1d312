"""The TrainJob (`trainer.kubeflow.org/v1alpha1`, Kubeflow Trainer v2): a runtime's JobSet of
batch Jobs, its nodes asked for in `spec.trainer`. Listed, watched, diagnosed and created
here; its spec model, manifest, rules and runtimes are beside this module, and the
package's __init__ makes the kind of them all (`TRAINJOB`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from odh.training.i18n import LazyText
from odh.training.kinds.base import (
    REPLICATED_JOB_LABEL,
    JobKind,
    role_name,
)
from odh.training.logs.progress import Progress, reported
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import GPU_RESOURCE, container_requests

GROUP, VERSION, KIND = "trainer.kubeflow.org", "v1alpha1", "TrainJob"
API_VERSION = f"{GROUP}/{VERSION}"

# the replicated jobs of the upstream runtimes (manifests/base/runtimes)
_REPLICATED_JOBS = "launcher|node|dataset-initializer|model-initializer|initializer"
_JOB_NAME = re.compile(rf"(?P<job>.+?)-(?:{_REPLICATED_JOBS})-\d+")
_POD_NAME = re.compile(rf"(?P<job>.+?)-(?:{_REPLICATED_JOBS})-\d+-\d+-[a-z0-9]{{5}}")


@dataclass(frozen=True)
class TrainJobKind(JobKind):
    @property
    def waiting_for_controller(self) -> LazyText | None:
        return None  # the Trainer writes no condition until there is something to say

    def pod_role(self, labels: dict) -> str:
        # the replicated job's name: "node" (the Workers) or "launcher"
        return role_name(str(labels.get(REPLICATED_JOB_LABEL, "node")))

    def expected_replicas(self, job: dict) -> list[tuple[str, int, int]]:
        trainer = as_dict(get_path(job, ["spec", "trainer"]))
        nodes = trainer.get("numNodes")
        resources = {"resources": as_dict(trainer.get("resourcesPerNode"))}
        gpus = int(container_requests(resources).get(GPU_RESOURCE, 0))
        count = max(0, nodes) if isinstance(nodes, int) and not isinstance(nodes, bool) else 1
        return [("Worker", count, gpus)]

    def commands(self, job: dict) -> list[list[str]]:
        trainer = as_dict(get_path(job, ["spec", "trainer"]))
        return [[str(a) for a in (*as_list(trainer.get("command")),
                                  *as_list(trainer.get("args")))]]

    def reported_progress(self, job: dict) -> Progress | None:
        # upstream's status.trainerStatus (alpha, the TrainJobStatus feature gate): what the
        # trainer reports of itself, as of lastUpdatedTime
        status = as_dict(get_path(job, ["status", "trainerStatus"]))
        return reported(status.get("progressPercentage"),
                        status.get("estimatedRemainingSeconds"), status.get("lastUpdatedTime"))

    def placeholder_name(self, job_name: str, role: str, index: int) -> str:
        return f"{job_name}-node-0-{index}"

    def running_without_condition(self, job: dict) -> bool:
        # the JobSet's Jobs run before the Trainer says anything
        return any(isinstance(j, dict) and (j.get("active") or 0) > 0
                   for j in as_list(get_path(job, ["status", "jobsStatus"])))

    def event_job_name(self, involved_kind: str, name: str) -> str | None:
        # the JobSet has the TrainJob's name; its Jobs are <job>-<replicated job>-<index>
        # and their pods <job>-<replicated job>-<index>-<pod index>-<suffix>, the replicated
        # jobs being those the upstream runtimes name (a job name may hold hyphens too)
        if involved_kind in (self.kind, "JobSet"):
            return name
        pattern = {"Job": _JOB_NAME, "Pod": _POD_NAME}.get(involved_kind)
        match = pattern.fullmatch(name) if pattern is not None else None
        return match.group("job") if match else None

    def pod_name_regex(self, escaped_name: str) -> str:
        # JobSet pods: <job>-<replicated job>-<job index>-<pod index>-<suffix>
        return rf"{escaped_name}-[a-z0-9-]+-[0-9]+-[0-9]+-[a-z0-9]{{5}}"
