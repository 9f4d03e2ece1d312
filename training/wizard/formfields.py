"""The wizard's form fields: which step shows which field (named as the spec's attributes,
plus the GPU type), the fields a kind's spec has, how a runtime is named in its select, and
which form field shows a message about a spec attribute."""

from __future__ import annotations

import dataclasses
import re

from odh.training.kinds import JobKind

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
MAX_ROWS = 100  # environment variables / volumes read from one form
MAX_TEXT = 64 * 1024

# Which wizard step shows which field (names = spec attributes, plus gpu_product and the
# automatic retry's two).
CONFIGURATION_FIELDS = ("namespace", "runtime", "name", "description", "image",
                        "image_pull_secret", "command", "working_dir")
ESSENTIAL_RESOURCE_FIELDS = ("workers", "cpu_per_worker", "memory_per_worker",
                             "gpus_per_worker")
ADVANCED_FIELDS = (
    "launcher_cpu", "launcher_memory", "slots_per_worker", "mpi_implementation",
    "gpu_product", "node_selector", "node_affinity", "tolerations", "priority_class", "queue_name",
    "queue_priority", "clean_pod_policy", "ttl_seconds_after_finished", "backoff_limit",
    "launcher_creation_policy", "disable_sidecar_injection", "labels", "annotations",
    "retries", "retry_on",
)
# kept in the job's annotations, asked for on their own (odh/training/manifests/retries.py)
RETRY_FIELDS = ("retries", "retry_on")
RESOURCE_FIELDS = ESSENTIAL_RESOURCE_FIELDS + ADVANCED_FIELDS
ROW_FIELDS = {"env": ("name", "value"), "volumes": ("claim_name", "mount_path", "sub_path"),
              # a Secret or ConfigMap ("secret/<name>"): all its keys as variables, or
              # mounted as files
              "env_from": ("source",), "source_volumes": ("source", "mount_path"),
              # a new PersistentVolumeClaim made with the job (odh.training.manifests.claims)
              "claims": ("name", "size", "access_mode", "storage_class", "mount_path")}
# The simple mode (training.wizard.simple): the draft's mark, and what its one step asks
# besides the Configuration step's fields
SIMPLE_KEY = "_simple"
SIMPLE_RESOURCE_FIELDS = ("workers", "gpus_per_worker")
STEP_FIELDS = {"configuration": CONFIGURATION_FIELDS, "resources": RESOURCE_FIELDS}
CHECKBOX_FIELDS = ("disable_sidecar_injection",)
INT_FIELDS = ("workers", "gpus_per_worker", "slots_per_worker", "ttl_seconds_after_finished",
              "backoff_limit")
OPTIONAL_INT_FIELDS = ("slots_per_worker", "ttl_seconds_after_finished", "backoff_limit")
ROW_PREFIX = {"env": "env", "volumes": "volume", "env_from": "envfrom",
              "source_volumes": "srcvol", "claims": "claim"}
ROW_FORM_PREFIXES = tuple(f"{prefix}-" for prefix in ROW_PREFIX.values())


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
    if "annotations" in names:
        names.update(RETRY_FIELDS)
    return frozenset(names)



def form_text(value: object) -> str:
    """A posted or kept value as text: "" for anything else."""
    # NUL is not text a job can carry, and PostgreSQL's jsonb refuses it.
    return value.replace("\x00", "") if isinstance(value, str) else ""


# --- validation messages -> form fields -------------------------------------------------

_ROW_ERROR = re.compile(r"(?P<rows>env_from|env|source_volumes|volumes|claims|tolerations)"
                        r"\[(?P<index>\d+)\](?:\.(?P<attr>\w+))?")


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
    if form_field in RESOURCE_FIELDS or form_field.startswith(ROW_FORM_PREFIXES) \
            or form_field in ROW_FIELDS:
        return "resources"
    return "review"
