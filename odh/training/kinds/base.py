"""What every training job kind answers, so that code elsewhere asks the kind instead of
comparing kind names: its API, its roles and their names, how its pods are labelled and
found, how many pods its spec asks for, how its status reads where conditions do not say
it, and whether the dashboard creates it. A new kind is a module beside this one and a line
in the registry (`odh.training.kinds`); docs/architecture.md walks through it.

This base answers as the Kubeflow Training Operator's v1 kinds do (PyTorchJob, TFJob):
replica specs keyed by role, pods labelled with their replica type and index.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from odh.training.i18n import LazyText, _, gettext_lazy
from odh.training.kinds.jobspec import JobSpec, ManifestError, SpecModel
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import GPU_RESOURCE, container_requests

if TYPE_CHECKING:
    from odh.training.kinds.commandline import CommandLine

# Who created a job, as the OpenShift AI dashboard records it on the object.
CREATED_BY_ANNOTATION = "opendatahub.io/username"
# What links an automatic retry to the first job (odh/training/manifests/retries.py): a
# copy is a job of its own, not that retry, so a clone drops them (the retry puts them back).
RETRY_LINK_ANNOTATIONS = ("opendatahub.io/retry-of", "opendatahub.io/retry-of-uid",
                          "opendatahub.io/retry-attempt")
# What the job is for, in the creator's words (the wizard's Description; the job page's
# Overview shows it).
DESCRIPTION_ANNOTATION = "opendatahub.io/description"
# The Kueue LocalQueue a job is submitted to, and its WorkloadPriorityClass.
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"

# The labels the Kubeflow operators put on a job's pods.
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
OPERATOR_NAME_LABEL = "training.kubeflow.org/operator-name"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
# ... and those of a JobSet's (a TrainJob's) pods.
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
COMPLETION_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"

# Replica-type label values (lower case on v1 pods) to the names people see.
_ROLE_NAMES = {"launcher": "Launcher", "worker": "Worker", "master": "Master",
               "chief": "Chief", "ps": "PS", "evaluator": "Evaluator", "node": "Worker"}


def role_name(raw: str) -> str:
    """"master" (a label value) or "Master" (a spec key) -> "Master"."""
    return _ROLE_NAMES.get(raw.lower(), raw.replace("-", " ").capitalize())


# the roles as sentences and pages name them, in the reader's language (DESIGN.md:
# Launcher, never "master" for MPI)
_ROLE_WORDS = {"Launcher": gettext_lazy("Launcher"), "Worker": gettext_lazy("Worker"),
               "Master": gettext_lazy("Master"), "Chief": gettext_lazy("Chief"),
               "PS": gettext_lazy("Parameter server"), "Evaluator": gettext_lazy("Evaluator"),
               "Node": gettext_lazy("Node")}


def role_word(role: str) -> str:
    """"Worker" -> "ワーカー" on a Japanese page; a role of no known kind as it is."""
    return str(_ROLE_WORDS.get(role, role))


def pod_label(role: str, index: int | None) -> str:
    """"Launcher", "Worker 2": how sentences and pages name a job's pod, translated."""
    word = role_word(role)
    return word if index is None else f"{word} {index}"


@dataclass(frozen=True)
class LayoutRef:
    """The object, besides the job, that says how many pods of each role a job has (a
    TrainJob's runtime: whether it runs a Launcher, and whether that Launcher is one of
    its nodes); `namespace` "" for a cluster-scoped one."""

    group: str
    version: str
    plural: str
    namespace: str
    name: str


def pod_gpus(pod_spec: dict) -> int:
    """GPUs a pod (or pod template spec) asks for: the sum over its containers."""
    return int(sum(container_requests(c).get(GPU_RESOURCE, 0)
                   for c in as_list(pod_spec.get("containers")) if isinstance(c, dict)))


@dataclass(frozen=True)
class JobKind:
    slug: str  # in URLs and the CLI: /jobs/<project>/mpijob/<name>, `odh training get mpijob`
    kind: str
    group: str
    version: str
    plural: str
    label: str  # the name people read
    # the spec's field of replica specs keyed by role ("" for kinds without one)
    replica_specs_field: str = ""
    # the training.kubeflow.org/operator-name of this kind's pods; a pod with another value
    # belongs to a same-named job of another kind
    operator_name: str = ""
    # the roles in the order the job's pages list them; the first is the lead: the pod whose
    # log tells the run, and the one `odh training logs` follows by default
    roles: tuple[str, ...] = ()
    # the lead (the Launcher) runs mpirun and the Workers only sshd: the Workers are counted
    # apart from it, MPI ranks map to Workers, and the Launcher's exit speaks for the ranks
    runs_mpirun: bool = False
    # the label on its pods that names the job
    pod_job_label: str = JOB_NAME_LABEL
    # the words pages use for a role where the kind has its own (a TrainJob's Workers are
    # its nodes: "Node 1"); code keeps the role ("Worker") whatever the kind calls it
    role_words: tuple[tuple[str, str], ...] = ()
    # its spec class and manifest: a kind that has one is created here (None: shown only)
    spec_model: SpecModel | None = None
    # the wizard's steps ask this kind's questions (the fields of its spec), so the wizard
    # opens its new jobs, clones, retries and fixes; a creatable kind without them is
    # created by the SDK, the CLI and an import, and its pages offer no wizard copy
    wizard_ready: bool = False
    # its pods are counted as nodes, upstream's word (a TrainJob's numNodes,
    # numProcPerNode, resourcesPerNode): the wizard says "Nodes", "Processes per node"
    counts_nodes: bool = False
    # the SDK's class whose constructor the wizard's "SDK code" writes for this kind's jobs
    # (odh.training.manifests.trainjobcode); "": TrainingClient().create_<slug>(spec)
    sdk_class: str = ""
    # where in the job's spec it is suspended (`runPolicy.suspend` on the Kubeflow kinds)
    suspend_path: tuple[str, ...] = ("runPolicy", "suspend")

    @property
    def creatable(self) -> bool:
        """The dashboard builds, checks, creates, clones, retries and fixes this kind's spec."""
        return self.spec_model is not None

    def _model(self) -> SpecModel:
        if self.spec_model is None:
            raise ManifestError(_("the dashboard does not create %(kind)s jobs")
                                % {"kind": self.label})
        return self.spec_model

    def new_spec(self, **fields: Any) -> JobSpec:
        """A spec of this kind with these fields (the others at their defaults)."""
        return self._model().spec_class(**fields)

    def build_manifest(self, spec: JobSpec) -> dict:
        """The manifest the cluster is sent for a spec of this kind."""
        return self._model().build(spec)

    def read_manifest(self, manifest: dict) -> JobSpec:
        """The spec a manifest of this kind describes (ManifestError says what is wrong)."""
        return self._model().read(manifest)

    def clone_spec(self, spec: JobSpec, new_name: str) -> JobSpec:
        """A copy under a new name, ready to create (server-written state dropped)."""
        return self._model().clone(spec, new_name)

    @property
    def command_line(self) -> CommandLine:
        """How `odh training create` speaks of this kind's jobs: its own flags, its fields'
        flags and manifest paths, what it cannot be created without."""
        return self._model().command_line

    def sets(self, field: str) -> bool:
        """Whether a person sets this field of the spec for this kind's jobs, so that a fix
        (a clone with a changed setting) may change it: not for a kind the dashboard does not
        create, nor for a field the kind leaves to others (a TrainJob's Launcher size, which
        its runtime sets: `SpecModel.unset_fields`)."""
        model = self.spec_model
        if model is None or field in model.unset_fields:
            return False
        spec_class = model.spec_class
        return not dataclasses.is_dataclass(spec_class) or \
            field in {f.name for f in dataclasses.fields(spec_class)}

    def word_for(self, role: str) -> str:
        """What this kind's pages call a role: "Node" for a TrainJob's "Worker"."""
        return dict(self.role_words).get(role, role)

    def pod_label(self, role: str, index: int | None) -> str:
        """"Launcher", "Worker 2", "Node 2": a pod of this kind as sentences name it."""
        return pod_label(self.word_for(role), index)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def plural_label(self) -> str:
        """"MPIJobs": the kind's name is a proper noun, the same in every language."""
        return f"{self.label}s"

    @property
    def lead_role(self) -> str:
        return self.roles[0] if self.roles else "Worker"

    @property
    def waiting_for_controller(self) -> LazyText | None:
        """The step of a job that has no condition yet: its operator has not taken it up."""
        return gettext_lazy("Waiting for the Training Operator")

    def pod_role(self, labels: dict) -> str:
        """The role of a pod of this kind, from its labels ("Master", "Worker")."""
        return role_name(str(labels.get(REPLICA_TYPE_LABEL, labels.get(JOB_ROLE_LABEL,
                                                                           "worker"))))

    def default_replicas(self, role: str) -> int:
        """The replicas of a role whose spec does not say (the v1 operators default to 1)."""
        return 1

    def pod_templates(self, manifest: dict) -> dict[str, dict]:
        """The pod specs the job's manifest writes, by role ("Launcher", "Worker"), as far
        as it writes them (what checks a job's pods before they exist read: a
        LimitRange's bounds)."""
        return {role_name(str(role)): as_dict(get_path(replica, ["template", "spec"]))
                for role, replica in as_dict(get_path(manifest, ["spec",
                                                                 self.replica_specs_field]))
                .items() if isinstance(replica, dict)}

    def output_pod_specs(self, manifest: dict) -> list[dict]:
        """The pod specs whose containers' commands, environment and mounts say where the
        job writes (odh.training.artifacts.outputs): its pod templates, the lead's first."""
        return [spec for _role, spec in sorted(self.pod_templates(manifest).items(),
                                               key=lambda item: item[0] != self.lead_role)]

    def layout_ref(self, job: dict) -> LayoutRef | None:
        """The object the job's spec leaves its layout to (None: the spec says it all), to
        be read and handed to `expected_replicas` as `layout`."""
        return None

    def layout_resources(self) -> tuple[tuple[str, str, str], ...]:
        """(group, version, plural) of every kind of object `layout_ref` may name."""
        return ()

    def expected_replicas(self, job: dict, layout: dict | None = None
                          ) -> list[tuple[str, int, int]]:
        """(role, replicas, GPUs per pod) as the job's spec asks for them; `layout`: the
        object `layout_ref` names, as read (None: not read, or not there)."""
        expected = []
        for role, replica in as_dict(get_path(job, ["spec", self.replica_specs_field])).items():
            if not isinstance(replica, dict):
                continue
            name = role_name(str(role))
            default = self.default_replicas(name)
            count = replica.get("replicas", default)
            count = max(0, count) if isinstance(count, int) and not isinstance(count, bool) \
                else default
            gpus = pod_gpus(as_dict(get_path(replica, ["template", "spec"])))
            expected.append((name, count, gpus))
        return expected

    def commands(self, job: dict) -> list[list[str]]:
        """The command and arguments of each container its spec names, the lead role's first
        (where a progress log's totals may be named: `--epochs 90`)."""
        order = {role: i for i, role in enumerate(self.roles)}
        specs = sorted(as_dict(get_path(job, ["spec", self.replica_specs_field])).items(),
                       key=lambda item: order.get(role_name(str(item[0])), len(order)))
        return [[str(a) for a in (*as_list(c.get("command")), *as_list(c.get("args")))]
                for _role, replica in specs
                for c in as_list(get_path(replica, ["template", "spec", "containers"]))
                if isinstance(c, dict)]

    def progress_report(self, job: dict) -> tuple[object, object, object] | None:
        """How far the job's training has got as its controller reports it on the job, as it
        says it: (percent done, seconds left, as of when), any of them unknown; None where it
        says nothing (the Kubeflow v1 kinds: their progress is read from a log).
        odh.training.logs.progress.reported makes a Progress of it."""
        return None

    def batch_job_role(self, job_name: str, batch_job: str) -> str | None:
        """The role whose pods a batch Job of the job runs, from the Job's name ("Launcher"
        for an MPIJob's <job>-launcher, "Worker" for a TrainJob's <job>-node-0); None for a
        Job that is not the job's."""
        if not batch_job.startswith(f"{job_name}-") or \
                self.event_job_name("Job", batch_job) not in (job_name, None):
            return None
        rest = re.sub(r"-[0-9]+$", "", batch_job[len(job_name) + 1:])
        return role_name(rest) if rest else None

    def failed_batch_jobs(self, job: dict) -> list[tuple[str, str, str]]:
        """(role, Job name or "" when the status does not name it, the status's own words)
        for each batch Job of the job that its status says failed (a TrainJob's
        jobsStatus); the operators of the other kinds say it in their conditions."""
        return []

    def placeholder_name(self, job_name: str, role: str, index: int | None) -> str:
        """The name a pod not created yet is shown under (the name its operator will give
        it); `index` None for the one pod of its role (the Launcher)."""
        return f"{job_name}-{role.lower()}" if index is None else \
            f"{job_name}-{role.lower()}-{index}"

    def running_without_condition(self, job: dict) -> bool:
        """Whether the job runs though no condition says so yet."""
        return False

    def event_job_name(self, involved_kind: str, name: str) -> str | None:
        """The name of the job of this kind an event about this object may concern: the job
        itself, or one of its pods by the name its operator gives them (a pod already deleted
        is known by its name only). None: not one of this kind's."""
        if involved_kind == self.kind:
            return name
        if involved_kind == "Pod":
            match = re.fullmatch(self.pod_name_regex("(?P<job>.+?)"), name)
            return match.group("job") if match else None
        return None

    def pod_name_regex(self, escaped_name: str) -> str:
        """A regular expression (RE2, matched whole) for the names of the pods of the job
        whose name, escaped for RE2, is `escaped_name` (Prometheus selects them by it)."""
        roles = "|".join(r.lower() for r in self.roles) or "worker"
        return rf"{escaped_name}-({roles})-[0-9]+"
