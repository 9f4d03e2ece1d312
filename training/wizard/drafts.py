"""Wizard drafts: the fields as a person typed them, and the spec they describe.

A draft keeps text (what the form posted, valid or not) so that nothing a person typed is
ever lost; `spec_from_data` reads that text leniently into a spec of the draft's kind and says which
fields could not even be read (not a whole number, an unclosed quote, a line that is not
`key=value`). How those texts are written and read, and what is said when they cannot be,
is `odh.training.checks.syntax`'s; whether a spec is right is `odh.training.validation`'s. This
module only glues form fields to spec attributes, so the wizard, the SDK and the CLI say
the same things. The fields themselves are `formfields`'s; a posted step is written into a
draft by `posting`, a fix by `changes`.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from odh.training.checks.affinity import node_affinity_text, read_node_affinity
from odh.training.checks.syntax import (
    command_text,
    pairs_text,
    read_command,
    read_pairs,
    read_tolerations,
    read_whole_number,
    tolerations_text,
)
from odh.training.kinds import JobKind, default_kind, kind_for_manifest
from odh.training.kinds.jobspec import EnvSource, NodeRequirement, SourceVolume
from odh.training.manifests.claims import NewClaim
from odh.training.manifests.retries import (
    PLATFORM,
    RETRIES_ANNOTATION,
    RETRY_ON_ANNOTATION,
    check_retries,
    policy_of,
    with_retries,
)
from odh.training.spec import EnvVar, JobSpec, PVCVolume, Toleration
from training.wizard.formfields import (
    CONFIGURATION_FIELDS,
    GPU_PRODUCT_LABEL,
    INT_FIELDS,
    MAX_TEXT,
    OPTIONAL_INT_FIELDS,
    RESOURCE_FIELDS,
    form_text,
    kind_fields,
    read_runtime,
    runtime_value,
)


@dataclass
class ReadResult:
    spec: JobSpec
    # field name (as the forms name it: "workers", "env-2-name") -> messages
    errors: dict[str, list[str]] = field(default_factory=dict)

    def add(self, name: str, message: str) -> None:
        self.errors.setdefault(name, []).append(message)


# --- spec -> text --------------------------------------------------------------------------

def _optional(value: int | None) -> str:
    return "" if value is None else str(value)



def switch_kind(data: dict, old: JobKind, new: JobKind) -> dict:
    """A draft's text for another kind: what both kinds ask keeps what was typed, except
    where it is still the old kind's default (which becomes the new kind's); what only
    the old kind asks is left empty."""
    if old == new:
        return copy.deepcopy(data)
    before, after = data_from_spec(old.new_spec()), data_from_spec(new.new_spec())
    fields = kind_fields(new)
    merged = copy.deepcopy(data)
    for name in (*CONFIGURATION_FIELDS, *RESOURCE_FIELDS):
        if name not in fields:
            merged[name] = after.get(name, "")
        elif name not in merged or merged.get(name) == before.get(name):
            merged[name] = after.get(name, "")
    return merged


def data_from_spec(spec: JobSpec) -> dict:
    """The wizard's fields for a spec, as text the forms show (a setting the spec's kind
    does not have shows empty)."""
    selector = dict(spec.node_selector)
    gpu_product = selector.pop(GPU_PRODUCT_LABEL, "")
    # the automatic retry's wish: fields of their own, not lines of the annotations
    policy = policy_of(spec.annotations)
    annotations = {k: v for k, v in spec.annotations.items()
                   if k not in (RETRIES_ANNOTATION, RETRY_ON_ANNOTATION)}
    return {
        "namespace": spec.namespace,
        "runtime": runtime_value(getattr(spec, "runtime_kind", ""), getattr(spec, "runtime", "")),
        "name": spec.name,
        "image": spec.image,
        "command": command_text(spec.command),
        "workers": str(spec.workers),
        "cpu_per_worker": spec.cpu_per_worker,
        "memory_per_worker": spec.memory_per_worker,
        "gpus_per_worker": str(spec.gpus_per_worker),
        "launcher_cpu": spec.launcher_cpu,
        "launcher_memory": spec.launcher_memory,
        "slots_per_worker": "" if spec.slots_per_worker is None else str(spec.slots_per_worker),
        "mpi_implementation": getattr(spec, "mpi_implementation", ""),
        "env": [{"name": e.name, "value": e.value, "value_from": e.value_from}
                for e in spec.env],
        "volumes": [{"claim_name": v.claim_name, "mount_path": v.mount_path,
                     "read_only": v.read_only, "sub_path": v.sub_path, "name": v.name}
                    for v in spec.volumes],
        "gpu_product": gpu_product,
        "node_selector": pairs_text(selector),
        "node_affinity": node_affinity_text(getattr(spec, "node_affinity", [])),
        "tolerations": tolerations_text(spec.tolerations),
        "priority_class": spec.priority_class,
        "queue_name": spec.queue_name,
        "queue_priority": spec.queue_priority,
        "clean_pod_policy": getattr(spec, "clean_pod_policy", ""),
        "ttl_seconds_after_finished": _optional(getattr(spec, "ttl_seconds_after_finished", None)),
        "backoff_limit": _optional(getattr(spec, "backoff_limit", None)),
        "launcher_creation_policy": getattr(spec, "launcher_creation_policy", ""),
        "disable_sidecar_injection": "on" if getattr(spec, "disable_sidecar_injection", False)
        else "",
        "labels": pairs_text(spec.labels),
        "annotations": pairs_text(annotations),
        "retries": str(policy.retries) if policy.retries else "",
        "retry_on": policy.on,
        "worker_image": getattr(spec, "worker_image", ""),
        "image_pull_secret": spec.image_pull_secret,
        "created_by": spec.created_by,
        "description": spec.description,
        "working_dir": getattr(spec, "working_dir", ""),
        "env_from": [{"source": f"{e.kind}/{e.name}"} for e in getattr(spec, "env_from", [])],
        "source_volumes": [{"source": f"{v.kind}/{v.name}", "mount_path": v.mount_path,
                            "volume": v.volume} for v in getattr(spec, "source_volumes", [])],
    }


# --- data -> spec --------------------------------------------------------------------------

def _read_int(result: ReadResult, name: str, raw: str, default: int | None) -> int | None:
    if not raw.strip():
        if name in OPTIONAL_INT_FIELDS:
            return None
        result.add(name, _("Enter a whole number."))
        return default
    number, problem = read_whole_number(raw)
    if problem:
        result.add(name, problem)
        return default
    return number


def _read_pairs(result: ReadResult, name: str, raw: str) -> dict[str, str]:
    pairs, problems = read_pairs(raw)
    for problem in problems:
        result.add(name, problem)
    return pairs


def _read_tolerations(result: ReadResult, raw: str) -> list[Toleration]:
    tolerations, problems = read_tolerations(raw)
    for problem in problems:
        result.add("tolerations", problem)
    return tolerations


def _read_retries(result: ReadResult, data: dict, annotations: dict[str, str]
                  ) -> dict[str, str]:
    """The annotations with the automatic retry's fields on them (a draft without those
    fields keeps what its annotations say)."""
    if "retries" not in data:
        return annotations
    raw = form_text(data.get("retries")).strip()
    on = form_text(data.get("retry_on")).strip() or PLATFORM
    try:
        check_retries(raw)
    except ValueError as e:
        result.add("retries", str(e))
        return annotations
    try:
        return with_retries(annotations, raw, on)
    except ValueError as e:
        result.add("retry_on", str(e))
        return annotations


def _read_node_affinity(result: ReadResult, raw: str) -> list[NodeRequirement]:
    requirements, problems = read_node_affinity(raw)
    for problem in problems:
        result.add("node_affinity", problem)
    return requirements


def _read_command(result: ReadResult, raw: str) -> list[str]:
    command, problem = read_command(raw)
    if problem:
        result.add("command", problem)
    return command


def new_claims(data: dict) -> list[NewClaim]:
    """The new volume claims a draft asks for (its "claims" rows), made before the job and
    mounted on its pods; the spec mounts them as volumes after the existing claims."""
    return [NewClaim(name=form_text(row.get("name")).strip(),
                     size=form_text(row.get("size")).strip(),
                     access_mode=form_text(row.get("access_mode")).strip(),
                     storage_class=form_text(row.get("storage_class")).strip(),
                     mount_path=form_text(row.get("mount_path")).strip())
            for row in _rows(data, "claims")]


def claim_rows(claims: list[NewClaim]) -> list[dict]:
    return [{"name": c.name, "size": c.size, "access_mode": c.access_mode,
             "storage_class": c.storage_class, "mount_path": c.mount_path} for c in claims]


def _rows(data: dict, rows: str) -> list[dict]:
    found = data.get(rows)
    return [row for row in found if isinstance(row, dict)] if isinstance(found, list) else []


def spec_from_data(data: dict, base: dict | None = None,
                   kind: JobKind | None = None) -> ReadResult:
    """The spec of `kind` a draft describes, and the fields that could not be read. Without
    a kind: the kind of the manifest the draft started from, else the default kind."""
    kind = kind or kind_for_manifest(base)
    if not kind.wizard_ready:  # the steps show the wizard's kinds only (JobKind.wizard_ready)
        kind = default_kind()
    defaults = kind.new_spec()
    result = ReadResult(spec=defaults)

    def _default(name: str) -> object:
        return getattr(defaults, name, "")

    def text(name: str) -> str:
        value = form_text(data.get(name, ""))
        if len(value) > MAX_TEXT:
            result.add(name, _("This is too long: at most %(limit)d characters.")
                       % {"limit": MAX_TEXT})
            return value[:MAX_TEXT]
        return value

    ints: dict[str, int | None] = {}
    known = {f.name for f in dataclasses.fields(defaults)}
    for name in INT_FIELDS:
        raw = data.get(name)
        if name not in known:  # another kind's setting (the MPIJob's run policy)
            ints[name] = None
            continue
        if raw is None and name not in OPTIONAL_INT_FIELDS:
            ints[name] = getattr(defaults, name)
            continue
        ints[name] = _read_int(result, name, text(name), getattr(defaults, name))

    selector = _read_pairs(result, "node_selector", text("node_selector"))
    gpu_product = text("gpu_product").strip()
    if gpu_product:
        selector[GPU_PRODUCT_LABEL] = gpu_product
    env = []
    for row in data.get("env") or []:
        if isinstance(row, dict):
            value_from = row.get("value_from")
            env.append(EnvVar(name=form_text(row.get("name")), value=form_text(row.get("value")),
                              value_from=value_from if isinstance(value_from, dict) else None))
    volumes = []
    for row in data.get("volumes") or []:
        if isinstance(row, dict):
            volumes.append(PVCVolume(claim_name=form_text(row.get("claim_name")),
                                     mount_path=form_text(row.get("mount_path")),
                                     read_only=bool(row.get("read_only")),
                                     name=form_text(row.get("name")),
                                     sub_path=form_text(row.get("sub_path"))))
    for claim in new_claims(data):  # mounted as the existing claims are
        volumes.append(PVCVolume(claim_name=claim.name, mount_path=claim.mount_path))
    env_from, source_volumes = [], []
    for row in _rows(data, "env_from"):
        source_kind, _slash, name = form_text(row.get("source")).partition("/")
        env_from.append(EnvSource(kind=source_kind, name=name))
    for row in _rows(data, "source_volumes"):
        source_kind, _slash, name = form_text(row.get("source")).partition("/")
        source_volumes.append(SourceVolume(kind=source_kind, name=name,
                                           mount_path=form_text(row.get("mount_path")).strip(),
                                           volume=form_text(row.get("volume"))))
    runtime_kind, runtime = read_runtime(text("runtime")) if "runtime" in data \
        else ("", str(_default("runtime")))
    settings = dict(
        runtime=runtime,
        runtime_kind=runtime_kind or _default("runtime_kind"),
        name=text("name").strip(),
        namespace=text("namespace").strip(),
        image=text("image").strip(),
        command=_read_command(result, text("command")),
        workers=ints["workers"] if ints["workers"] is not None else defaults.workers,
        cpu_per_worker=text("cpu_per_worker").strip(),
        memory_per_worker=text("memory_per_worker").strip(),
        gpus_per_worker=ints["gpus_per_worker"] if ints["gpus_per_worker"] is not None else 0,
        launcher_cpu=text("launcher_cpu").strip(),
        launcher_memory=text("launcher_memory").strip(),
        slots_per_worker=ints["slots_per_worker"],
        mpi_implementation=text("mpi_implementation").strip() or _default("mpi_implementation"),
        env=env,
        volumes=volumes,
        node_selector=selector,
        tolerations=_read_tolerations(result, text("tolerations")),
        node_affinity=_read_node_affinity(result, text("node_affinity")),
        priority_class=text("priority_class").strip(),
        queue_name=text("queue_name").strip(),
        queue_priority=text("queue_priority").strip(),
        clean_pod_policy=text("clean_pod_policy").strip() or _default("clean_pod_policy"),
        ttl_seconds_after_finished=ints["ttl_seconds_after_finished"],
        backoff_limit=ints["backoff_limit"],
        launcher_creation_policy=text("launcher_creation_policy").strip()
        or _default("launcher_creation_policy"),
        disable_sidecar_injection=bool(data.get("disable_sidecar_injection")),
        labels=_read_pairs(result, "labels", text("labels")),
        annotations=_read_retries(result, data, _read_pairs(result, "annotations",
                                                            text("annotations"))),
        created_by=text("created_by").strip(),
        worker_image=text("worker_image").strip(),
        image_pull_secret=text("image_pull_secret").strip(),
        description=text("description").strip(),
        working_dir=text("working_dir").strip(),
        env_from=env_from,
        source_volumes=source_volumes,
        base=copy.deepcopy(base) if isinstance(base, dict) else None,
    )
    # the fields of the wizard's steps the kind's spec has (the MPIJob's own settings are
    # fields of its spec alone)
    result.spec = kind.new_spec(**{k: v for k, v in settings.items() if k in known})
    return result

