"""Wizard drafts: the fields as a person typed them, and the spec they describe.

A draft keeps text (what the form posted, valid or not) so that nothing a person typed is
ever lost; `spec_from_data` reads that text leniently into a spec of the draft's kind and says which
fields could not even be read (not a whole number, an unclosed quote, a line that is not
`key=value`). How those texts are written and read, and what is said when they cannot be,
is `odh.training.checks.syntax`'s; whether a spec is right is `odh.training.validation`'s. This
module only glues form fields to spec attributes, so the wizard, the SDK and the CLI say
the same things.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

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
from odh.training.spec import EnvVar, JobSpec, PVCVolume, Toleration

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
MAX_ROWS = 100  # environment variables / volumes read from one form
MAX_TEXT = 64 * 1024

# Which wizard step shows which field (names = spec attributes, plus gpu_product).
CONFIGURATION_FIELDS = ("namespace", "runtime", "name", "image", "image_pull_secret", "command")
ESSENTIAL_RESOURCE_FIELDS = ("workers", "cpu_per_worker", "memory_per_worker",
                             "gpus_per_worker")
ADVANCED_FIELDS = (
    "launcher_cpu", "launcher_memory", "slots_per_worker", "mpi_implementation",
    "gpu_product", "node_selector", "tolerations", "priority_class", "queue_name",
    "queue_priority", "clean_pod_policy", "ttl_seconds_after_finished", "backoff_limit",
    "launcher_creation_policy", "disable_sidecar_injection", "labels", "annotations",
)
RESOURCE_FIELDS = ESSENTIAL_RESOURCE_FIELDS + ADVANCED_FIELDS
ROW_FIELDS = {"env": ("name", "value"), "volumes": ("claim_name", "mount_path", "sub_path")}
STEP_FIELDS = {"configuration": CONFIGURATION_FIELDS, "resources": RESOURCE_FIELDS}
CHECKBOX_FIELDS = ("disable_sidecar_injection",)
INT_FIELDS = ("workers", "gpus_per_worker", "slots_per_worker", "ttl_seconds_after_finished",
              "backoff_limit")
OPTIONAL_INT_FIELDS = ("slots_per_worker", "ttl_seconds_after_finished", "backoff_limit")
ROW_PREFIX = {"env": "env", "volumes": "volume"}


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


def runtime_value(kind: str, name: str) -> str:
    """A runtime as the wizard's select names it: "ClusterTrainingRuntime/mpi-distributed"
    (a cluster's and a project's runtime may share a name)."""
    return f"{kind}/{name}" if name else ""


def read_runtime(value: str) -> tuple[str, str]:
    """(runtime kind, name) of a select's value; a bare name keeps the kind "" (the
    spec's default)."""
    kind, _slash, name = value.strip().rpartition("/")
    return kind, name


def kind_fields(kind: JobKind) -> frozenset[str]:
    """The wizard's fields (names of the forms' fields) that a spec of `kind` has and a
    person sets: its spec's attributes, the GPU type (a node selector entry), less those
    the kind leaves to others (`SpecModel.unset_fields`)."""
    model = kind.spec_model
    if model is None:
        return frozenset()
    names = {f.name for f in dataclasses.fields(model.spec_class)} - model.unset_fields
    if "node_selector" in names:
        names.add("gpu_product")
    return frozenset(names)


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
        "annotations": pairs_text(spec.annotations),
        "worker_image": getattr(spec, "worker_image", ""),
        "image_pull_secret": spec.image_pull_secret,
        "created_by": spec.created_by,
    }


# --- posted form -> data ---------------------------------------------------------------

def _text(value: object) -> str:
    # NUL is not text a job can carry, and PostgreSQL's jsonb refuses it.
    return value.replace("\x00", "") if isinstance(value, str) else ""


def merge_post(data: dict, post, step: str) -> dict:
    """The draft's data with one step's posted fields written over it.

    `post` is a QueryDict (or dict) of what the step's form sent. Checkboxes missing from a
    posted step form are off; row lists are rebuilt from their `env-<i>-name` style fields.
    """
    merged = copy.deepcopy(data)
    for name in STEP_FIELDS.get(step, ()):
        if name in CHECKBOX_FIELDS:
            merged[name] = "on" if post.get(name) else ""
        elif name in post:
            merged[name] = _text(post.get(name))
    if step == "resources":
        for rows in ("env", "volumes"):
            merged[rows] = _merge_rows(post, rows, merged.get(rows))
    return merged


def _merge_rows(post, rows: str, before: object) -> list[dict]:
    prefix = ROW_PREFIX[rows]
    old = before if isinstance(before, list) else []
    result = []
    for i in range(MAX_ROWS):
        keys = [f"{prefix}-{i}-{f}" for f in ROW_FIELDS[rows]]
        if not any(k in post for k in keys):
            continue
        row = {f: _text(post.get(f"{prefix}-{i}-{f}", "")).strip() if f != "value"
               else _text(post.get(f"{prefix}-{i}-{f}", "")) for f in ROW_FIELDS[rows]}
        previous = old[i] if i < len(old) and isinstance(old[i], dict) else {}
        if rows == "env":
            row["value_from"] = previous.get("value_from") if post.get(f"{prefix}-{i}-from") \
                else None
            if not row["name"] and not row["value"] and not row["value_from"]:
                continue
        else:
            row["read_only"] = bool(post.get(f"{prefix}-{i}-read_only"))
            row["name"] = _text(previous.get("name")) \
                if previous.get("claim_name") == row["claim_name"] else ""
            if not row["claim_name"] and not row["mount_path"]:
                continue
        result.append(row)
    return result


def add_row(data: dict, rows: str) -> dict:
    merged = copy.deepcopy(data)
    current = merged.get(rows) if isinstance(merged.get(rows), list) else []
    if len(current) < MAX_ROWS:
        blank = {"name": "", "value": "", "value_from": None} if rows == "env" else \
            {"claim_name": "", "mount_path": "", "read_only": False, "sub_path": "", "name": ""}
        current.append(blank)
    merged[rows] = current
    return merged


def remove_row(data: dict, rows: str, index: int) -> dict:
    merged = copy.deepcopy(data)
    current = merged.get(rows) if isinstance(merged.get(rows), list) else []
    if 0 <= index < len(current):
        del current[index]
    merged[rows] = current
    return merged


def apply_changes(data: dict, changes: dict) -> dict:
    """A fix's changes ({spec attribute: value}) written into the draft's text."""
    merged = copy.deepcopy(data)
    for name, value in changes.items():
        if name == "command" and isinstance(value, list):
            merged[name] = command_text([str(v) for v in value])
        elif name == "node_selector" and isinstance(value, dict):
            selector = {str(k): str(v) for k, v in value.items()}
            merged["gpu_product"] = selector.pop(GPU_PRODUCT_LABEL, "")
            merged[name] = pairs_text(selector)
        elif name == "env" and isinstance(value, list):
            merged[name] = [{"name": str(row.get("name", "")), "value": str(row.get("value", "")),
                             "value_from": row.get("value_from")
                             if isinstance(row.get("value_from"), dict) else None}
                            for row in value if isinstance(row, dict)]
        elif name not in RESOURCE_FIELDS and name not in CONFIGURATION_FIELDS:
            continue
        elif isinstance(value, bool):
            merged[name] = "on" if value else ""
        else:
            merged[name] = "" if value is None else str(value)
    return merged


FIXED_KEY = "fixed"  # what a diagnosis' fix changed: {"label", "fields", "note"}
# The Workers and slots were chosen on the Resources step (typed, changed by a fix, or the
# step left with Next or Back): until then a value there is the default or the copy's, and
# the -np check waits.
WORKERS_CHOSEN_KEY = "_workers_chosen"
_WORKER_COUNT = ("workers", "slots_per_worker")


def with_workers_chosen(data: dict, before: dict | None = None) -> dict:
    """`data` marked as having its Workers chosen: always without `before`, else when its
    Workers or slots differ from those of `before`."""
    if before is not None and all(str(data.get(n, "")) == str(before.get(n, ""))
                                  for n in _WORKER_COUNT):
        return data
    return {**data, WORKERS_CHOSEN_KEY: True}


def apply_fix(data: dict, changes: dict, label: str, fields: list[str], note: str = "") -> dict:
    """A diagnosis' fix applied to a clone's draft, and marked: the wizard shows which
    fields it changed (or which one to correct, for a fix that only opens a field)."""
    merged = apply_changes(data, changes)
    merged[FIXED_KEY] = {"label": str(label)[:500], "note": str(note)[:500],
                         "fields": [str(f) for f in fields][:20]}
    return merged


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


def _read_command(result: ReadResult, raw: str) -> list[str]:
    command, problem = read_command(raw)
    if problem:
        result.add("command", problem)
    return command


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
        value = _text(data.get(name, ""))
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
            env.append(EnvVar(name=_text(row.get("name")), value=_text(row.get("value")),
                              value_from=value_from if isinstance(value_from, dict) else None))
    volumes = []
    for row in data.get("volumes") or []:
        if isinstance(row, dict):
            volumes.append(PVCVolume(claim_name=_text(row.get("claim_name")),
                                     mount_path=_text(row.get("mount_path")),
                                     read_only=bool(row.get("read_only")),
                                     name=_text(row.get("name")),
                                     sub_path=_text(row.get("sub_path"))))
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
        annotations=_read_pairs(result, "annotations", text("annotations")),
        created_by=text("created_by").strip(),
        worker_image=text("worker_image").strip(),
        image_pull_secret=text("image_pull_secret").strip(),
        base=copy.deepcopy(base) if isinstance(base, dict) else None,
    )
    # the fields of the wizard's steps the kind's spec has (the MPIJob's own settings are
    # fields of its spec alone)
    result.spec = kind.new_spec(**{k: v for k, v in settings.items() if k in known})
    return result


# --- validation messages -> form fields -------------------------------------------------

_ROW_ERROR = re.compile(r"(?P<rows>env|volumes|tolerations)\[(?P<index>\d+)\](?:\.(?P<attr>\w+))?")


def form_field_for(spec_field: str) -> str:
    """The form field that shows a message about a spec attribute.

    "env[2].name" -> "env-2-name", "volumes[0].mount_path" -> "volume-0-mount_path",
    "tolerations[1]" -> "tolerations"; node selector entries for the GPU product go to the
    GPU type select.
    """
    match = _ROW_ERROR.fullmatch(spec_field)
    if match:
        rows = match.group("rows")
        if rows == "tolerations":
            return "tolerations"
        attr = match.group("attr") or ROW_FIELDS[rows][0]
        return f"{ROW_PREFIX[rows]}-{match.group('index')}-{attr}"
    if spec_field.startswith("node_selector") and GPU_PRODUCT_LABEL in spec_field:
        return "gpu_product"
    if spec_field == "runtime_kind":  # one select names the runtime and its kind
        return "runtime"
    return spec_field.split("[", 1)[0].split(".", 1)[0]


def step_of(form_field: str) -> str:
    """Which step shows a form field: configuration, resources, or review (anything else)."""
    if form_field in CONFIGURATION_FIELDS:
        return "configuration"
    if form_field in RESOURCE_FIELDS or form_field.startswith(("env-", "volume-")) \
            or form_field in ("env", "volumes"):
        return "resources"
    return "review"
