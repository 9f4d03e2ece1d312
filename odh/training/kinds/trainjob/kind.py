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
    LayoutRef,
    pod_gpus,
    role_name,
)
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import GPU_RESOURCE, container_requests

GROUP, VERSION, KIND = "trainer.kubeflow.org", "v1alpha1", "TrainJob"
API_VERSION = f"{GROUP}/{VERSION}"
_RUNTIME_PLURALS = {"ClusterTrainingRuntime": "clustertrainingruntimes",
                    "TrainingRuntime": "trainingruntimes"}

# the replicated jobs of the upstream runtimes (manifests/base/runtimes)
_REPLICATED_JOBS = "launcher|node|dataset-initializer|model-initializer|initializer"
_JOB_NAME = re.compile(rf"(?P<job>.+?)-(?:{_REPLICATED_JOBS})-\d+")
# the JobSet controller's Failed message, which the Trainer copies onto the TrainJob
_FIRST_FAILED = re.compile(r"first failed job: ([a-z0-9][-a-z0-9.]*[a-z0-9])")
_POD_NAME = re.compile(rf"(?P<job>.+?)-(?:{_REPLICATED_JOBS})-\d+-\d+-[a-z0-9]{{5}}")


@dataclass(frozen=True)
class TrainJobKind(JobKind):
    @property
    def waiting_for_controller(self) -> LazyText | None:
        return None  # the Trainer writes no condition until there is something to say

    def pod_role(self, labels: dict) -> str:
        # the replicated job's name: "node" (the Workers) or "launcher"
        return role_name(str(labels.get(REPLICATED_JOB_LABEL, "node")))

    def pod_templates(self, manifest: dict) -> dict[str, dict]:
        # the trainer's resourcesPerNode replace the node container's resources (upstream's
        # jobset plugin); the rest of the pods, and a Launcher, are the runtime's to write
        trainer = as_dict(get_path(manifest, ["spec", "trainer"]))
        if "resourcesPerNode" not in trainer:
            return {}
        return {"Worker": {"containers": [{"name": "node", "resources": as_dict(
            trainer.get("resourcesPerNode"))}]}}

    def output_pod_specs(self, manifest: dict) -> list[dict]:
        # the trainer's command and env run in the node container, which mounts what the
        # podSpecOverrides entry for the node job gives it (the runtime's own pods aside)
        from odh.training.kinds.trainjob.manifest import node_override, override_container
        from odh.training.kinds.trainjob.model import NODE

        trainer = as_dict(get_path(manifest, ["spec", "trainer"]))
        entry = node_override(manifest)
        container = {"name": NODE, "command": as_list(trainer.get("command")),
                     "args": as_list(trainer.get("args")), "env": as_list(trainer.get("env")),
                     "volumeMounts": as_list(override_container(entry).get("volumeMounts"))}
        return [{"containers": [container], "volumes": as_list(entry.get("volumes"))}]

    def layout_ref(self, job: dict) -> LayoutRef | None:
        # The runtime, not the JobSet: it is there before the Trainer builds the JobSet (a
        # TrainJob just created, one whose JobSet could not be built) and one read of it
        # serves every job on it; the JobSet's replicated jobs are made from it.
        ref = as_dict(get_path(job, ["spec", "runtimeRef"]))
        kind = str(ref.get("kind") or "ClusterTrainingRuntime")
        name = str(ref.get("name") or "")
        if not name or kind not in _RUNTIME_PLURALS:
            return None
        namespace = str(get_path(job, ["metadata", "namespace"]) or "") \
            if kind == "TrainingRuntime" else ""
        return LayoutRef(GROUP, VERSION, _RUNTIME_PLURALS[kind], namespace, name)

    def layout_resources(self) -> tuple[tuple[str, str, str], ...]:
        return tuple((GROUP, VERSION, plural) for plural in _RUNTIME_PLURALS.values())

    def expected_replicas(self, job: dict, layout: dict | None = None
                          ) -> list[tuple[str, int, int]]:
        # The Trainer's layout (upstream's mpi and jobset plugins): numNodes nodes, the
        # runtime's mlPolicy.numNodes where the TrainJob does not say; an MPI runtime adds a
        # Launcher, which with runLauncherAsNode is one of the nodes (and sized as one), so
        # the node Job has one pod fewer. Without the runtime: numNodes nodes, no Launcher.
        trainer = as_dict(get_path(job, ["spec", "trainer"]))
        policy = as_dict(get_path(layout, ["spec", "mlPolicy"])) if layout else {}
        nodes = trainer.get("numNodes", policy.get("numNodes"))
        resources = {"resources": as_dict(trainer.get("resourcesPerNode"))}
        gpus = int(container_requests(resources).get(GPU_RESOURCE, 0))
        count = max(0, nodes) if isinstance(nodes, int) and not isinstance(nodes, bool) else 1
        mpi = policy.get("mpi")
        if not isinstance(mpi, dict) or not self._runtime_job(layout, "launcher"):
            return [("Worker", count, gpus)]
        if mpi.get("runLauncherAsNode") is True:
            return [("Launcher", 1, gpus), ("Worker", max(1, count - 1), gpus)]
        launcher = as_dict(get_path(self._runtime_job(layout, "launcher"),
                                    ["template", "spec", "template", "spec"]))
        return [("Launcher", 1, pod_gpus(launcher)), ("Worker", count, gpus)]

    def commands(self, job: dict) -> list[list[str]]:
        trainer = as_dict(get_path(job, ["spec", "trainer"]))
        return [[str(a) for a in (*as_list(trainer.get("command")),
                                  *as_list(trainer.get("args")))]]

    def progress_report(self, job: dict) -> tuple[object, object, object] | None:
        # upstream's status.trainerStatus (alpha, the TrainJobStatus feature gate): what the
        # trainer reports of itself, as of lastUpdatedTime
        status = get_path(job, ["status", "trainerStatus"])
        if not isinstance(status, dict):
            return None
        return (status.get("progressPercentage"), status.get("estimatedRemainingSeconds"),
                status.get("lastUpdatedTime"))

    @staticmethod
    def _runtime_job(layout: dict | None, name: str) -> dict:
        """The runtime's replicated job of this name ({} when it has none)."""
        return next((j for j in as_list(get_path(layout, ["spec", "template", "spec",
                                                          "replicatedJobs"]))
                     if isinstance(j, dict) and j.get("name") == name), {})

    def failed_batch_jobs(self, job: dict) -> list[tuple[str, str, str]]:
        name = str(get_path(job, ["metadata", "name"]) or "")
        failed = next((c for c in as_list(get_path(job, ["status", "conditions"]))
                       if isinstance(c, dict) and c.get("type") == "Failed"
                       and c.get("status") == "True"), {})
        found = []
        named = _FIRST_FAILED.search(str(failed.get("message") or ""))
        if named and (role := self.batch_job_role(name, named.group(1))):
            found.append((role, named.group(1), ""))
        for entry in as_list(get_path(job, ["status", "jobsStatus"])):
            count = as_dict(entry).get("failed")
            if not isinstance(count, int) or count <= 0:
                continue
            role = role_name(str(as_dict(entry).get("name") or "node"))
            words = "jobsStatus " + ", ".join(
                f"{key}={as_dict(entry)[key]}" for key in ("name", "active", "succeeded",
                                                           "failed") if key in as_dict(entry))
            if found and found[0][0] == role:
                found[0] = (role, found[0][1], words)
            else:
                found.append((role, "", words))
        return found

    def placeholder_name(self, job_name: str, role: str, index: int | None) -> str:
        # <job>-<replicated job>-<job index>-<pod index>, less the suffix it will get
        job = "launcher" if role == "Launcher" else "node"
        return f"{job_name}-{job}-0-{index or 0}"

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
