"""The spec of a job as a person describes it, whatever its kind: what the shared checks,
the fit and quota rules, the wizard's steps, the review and the create path read from a
spec (`JobSpec`), the parts of a pod every kind's spec is made of (env, volumes,
tolerations), and how a kind builds and reads its manifest (`SpecModel`, which a kind the
dashboard creates carries: `JobKind.spec_model`).

A kind's own spec class (MPIJobSpec in kinds/mpijob/model.py) has these fields and may add
its own; only its kind's package imports it. Code elsewhere gets a spec from the kind
(`kind.new_spec(...)`, `kind.read_manifest(...)`) and reads it through `JobSpec`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from odh.training.kinds.base import JobKind
    from odh.training.kinds.commandline import CommandLine


class ManifestError(ValueError):
    """A manifest the dashboard cannot read as a job of a kind it creates."""


@dataclass
class EnvVar:
    name: str
    value: str = ""
    # A valueFrom block (secretKeyRef, fieldRef...) kept as the API writes it.
    value_from: dict | None = None

    def to_manifest(self) -> dict:
        if self.value_from:
            return {"name": self.name, "valueFrom": copy.deepcopy(self.value_from)}
        return {"name": self.name, "value": self.value}

    @classmethod
    def from_manifest(cls, entry: dict) -> EnvVar:
        value = entry.get("value")
        value_from = entry.get("valueFrom")
        return cls(name=str(entry.get("name", "")), value="" if value is None else str(value),
                   value_from=copy.deepcopy(value_from) if isinstance(value_from, dict) else None)


def volume_name_for(claim_name: str) -> str:
    """A pod volume name for a claim; prefixed so it cannot clash with the operator's own
    `ssh-auth` and `mpi-job-config` volumes."""
    stem = re.sub(r"[^a-z0-9-]+", "-", claim_name.lower()).strip("-")
    return f"pvc-{stem}"[:63].rstrip("-")


@dataclass
class PVCVolume:
    claim_name: str
    mount_path: str
    read_only: bool = False
    name: str = ""
    sub_path: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            self.name = volume_name_for(self.claim_name)


# A Secret's or ConfigMap's kind as the wizard and the spec name it -> (the envFrom reference,
# the pod volume's field, the field naming the object in that volume)
SOURCE_KINDS = {"secret": ("secretRef", "secret", "secretName"),
                "configmap": ("configMapRef", "configMap", "name")}


@dataclass
class EnvSource:
    """Every key of a Secret or ConfigMap as an environment variable (an envFrom entry)."""

    kind: str  # "secret" or "configmap"
    name: str

    def to_manifest(self) -> dict:
        ref = SOURCE_KINDS.get(self.kind, SOURCE_KINDS["configmap"])[0]
        return {ref: {"name": self.name}}

    @classmethod
    def from_manifest(cls, entry: dict) -> EnvSource | None:
        """The entry as an EnvSource; None for one with more than a name (a prefix,
        optional), which a rebuild keeps as it is."""
        for kind, (ref, _field, _name) in SOURCE_KINDS.items():
            found = entry.get(ref)
            if isinstance(found, dict) and set(entry) == {ref} and set(found) == {"name"}:
                return cls(kind=kind, name=str(found["name"]))
        return None


@dataclass
class SourceVolume:
    """A Secret or ConfigMap mounted as files (one file per key) at a path."""

    kind: str  # "secret" or "configmap"
    name: str
    mount_path: str
    volume: str = ""  # the pod volume's name

    def __post_init__(self) -> None:
        if not self.volume:
            stem = re.sub(r"[^a-z0-9-]+", "-", self.name.lower()).strip("-")
            self.volume = f"{self.kind}-{stem}"[:63].rstrip("-")


NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_REQUIRED_TERMS = ["affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                   "nodeSelectorTerms"]


@dataclass
class NodeRequirement:
    """A node label the pods require (node affinity, required at scheduling): `key`
    `operator` (In, NotIn: one of `values`; Exists, DoesNotExist: no values)."""

    key: str
    operator: str = "In"
    values: list[str] = field(default_factory=list)

    def to_manifest(self) -> dict:
        entry: dict = {"key": self.key, "operator": self.operator}
        if self.values:
            entry["values"] = list(self.values)
        return entry

    @classmethod
    def from_manifest(cls, entry: dict) -> NodeRequirement:
        values = entry.get("values")
        return cls(key=str(entry.get("key", "")), operator=str(entry.get("operator", "")),
                   values=[str(v) for v in values] if isinstance(values, list) else [])


def read_node_requirements(pod_spec: dict) -> list[NodeRequirement]:
    """The required node affinity of a pod spec, where it is one term of label
    expressions (what the wizard writes); [] otherwise (a rebuild keeps it as it is)."""
    terms: object = pod_spec
    for key in _REQUIRED_TERMS:
        terms = terms.get(key) if isinstance(terms, dict) else None
    if not (isinstance(terms, list) and len(terms) == 1 and isinstance(terms[0], dict)
            and set(terms[0]) == {"matchExpressions"}
            and isinstance(terms[0]["matchExpressions"], list)):
        return []
    return [NodeRequirement.from_manifest(e) for e in terms[0]["matchExpressions"]
            if isinstance(e, dict)]


def node_requirements_path() -> list[str]:
    return list(_REQUIRED_TERMS)


@dataclass
class Toleration:
    key: str
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    seconds: int | None = None

    def to_manifest(self) -> dict:
        entry: dict = {}
        if self.key:
            entry["key"] = self.key
        entry["operator"] = self.operator
        if self.value:
            entry["value"] = self.value
        if self.effect:
            entry["effect"] = self.effect
        if self.seconds is not None:
            entry["tolerationSeconds"] = self.seconds
        return entry

    @classmethod
    def from_manifest(cls, entry: dict) -> Toleration:
        seconds = entry.get("tolerationSeconds")
        return cls(key=str(entry.get("key", "")), operator=str(entry.get("operator", "Equal")),
                   value=str(entry.get("value", "")), effect=str(entry.get("effect", "")),
                   seconds=seconds if isinstance(seconds, int) else None)


class JobSpec(Protocol):
    """A job as a person describes it: Workers (a kind's nodes) of one size, the lead pod's
    size (the Launcher's; "" where a kind has none), what runs, where, and in which queue.

    Resource strings are Kubernetes quantities; "" means "not set". `slots_per_worker` is
    the processes each Worker runs (None: the kind's default, `effective_slots`). `base`
    is the manifest the spec was read from, whose other fields a rebuild keeps.
    """

    kind: ClassVar[JobKind]
    name: str
    namespace: str
    image: str
    command: list[str]
    workers: int
    cpu_per_worker: str
    memory_per_worker: str
    gpus_per_worker: int
    launcher_cpu: str
    launcher_memory: str
    slots_per_worker: int | None
    env: list[EnvVar]
    volumes: list[PVCVolume]
    node_selector: dict[str, str]
    tolerations: list[Toleration]
    priority_class: str
    queue_name: str
    queue_priority: str
    labels: dict[str, str]
    annotations: dict[str, str]
    created_by: str
    description: str
    image_pull_secret: str
    base: dict | None

    @property
    def default_slots(self) -> int: ...

    @property
    def effective_slots(self) -> int: ...


@dataclass(frozen=True)
class SpecModel:
    """How the dashboard makes a kind's jobs: its spec class, the manifest built from a spec,
    the spec read from a manifest (ManifestError says what is wrong), and a copy under a
    new name with what the cluster wrote about the original dropped."""

    spec_class: Callable[..., Any]
    build: Callable[[Any], dict]
    read: Callable[[dict], Any]
    clone: Callable[[Any, str], Any]
    # the checks of settings only this kind has (after the shared rules of validation.py):
    # rule(spec, ValidationContext) -> FieldErrors
    rules: tuple[Callable[[Any, Any], Iterable[Any]], ...] = ()
    # the fields whose checks this kind's rules make in place of the shared rules'
    own_fields: frozenset[str] = frozenset()
    # the spec sizes a lead pod of its own (launcher_cpu, launcher_memory); False: the
    # kind's lead is sized elsewhere (a TrainJob's runtime) and those stay ""
    sizes_launcher: bool = True
    # the checks against what the cluster holds, with the person's client, run by the
    # preflight before anything else: rule(ClusterClient, spec) -> FieldErrors (a rule may
    # raise errors.NotServed: the cluster lacks the kind's API)
    cluster_rules: tuple[Callable[[Any, Any], Iterable[Any]], ...] = ()
    # shared fields the spec carries for the shared readers but a person does not set for
    # this kind (its runtime does): the wizard does not ask for them
    unset_fields: frozenset[str] = frozenset()
    # how `odh training create` speaks of the kind's jobs (its flags, its manifest's fields)
    command_line: CommandLine = field(kw_only=True)
