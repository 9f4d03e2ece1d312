"""Jobs side by side: their settings as rows, the rows that differ, and runs "similar"
to a failed one (the same image and training script) that succeeded.

Works from manifests (a live job or a history record's `spec`), so a job that is gone
compares like one that is still there. The kinds the dashboard creates (MPIJobs, TrainJobs)
are read through the wizard's own model (`read_manifest`): the rows are the wizard's
fields, in its words. Other kinds show their
image, command, replicas and resources per replica type.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from odh.training.checks.syntax import command_text
from odh.training.i18n import _
from odh.training.kinds import kind_for_object
from odh.training.paths import as_dict, as_list, get_path
from odh.training.spec import ManifestError, read_manifest
from odh.training.status.pods import role_name


@dataclass(frozen=True)
class Setting:
    key: str
    label: str
    value: str


def _mpijob_settings(job: dict) -> list[Setting] | None:
    try:
        spec = read_manifest(job)
    except ManifestError:
        return None
    env = "; ".join(f"{e.name}={e.value}" if not e.value_from else
                    _("%(name)s from %(source)s") % {"name": e.name,
                                                     "source": ", ".join(sorted(e.value_from))}
                    for e in spec.env)
    volumes = "; ".join(f"{v.claim_name} → {v.mount_path}" for v in spec.volumes)
    nodes = spec.kind.counts_nodes  # a TrainJob: its runtime and nodes, in upstream's words
    rows = [
        ("runtime", _("Runtime"), f"{spec.runtime} ({spec.runtime_kind})") if nodes else None,
        ("image", _("Training image"), spec.image),
        None if nodes else ("worker_image", _("Worker image"), spec.worker_image or spec.image),
        ("command", _("Command"), command_text(spec.command)),
        ("workers", _("Nodes") if nodes else _("Workers"), str(spec.workers)),
        ("slots_per_worker", _("Processes per node") if nodes else _("Slots per worker"),
         str(spec.effective_slots)),
        ("cpu_per_worker", _("CPUs per node") if nodes else _("CPUs per worker"),
         spec.cpu_per_worker),
        ("memory_per_worker", _("Memory per node") if nodes else _("Memory per worker"),
         spec.memory_per_worker),
        ("gpus_per_worker", _("GPUs per node") if nodes else _("GPUs per worker"),
         str(spec.gpus_per_worker)),
        None if nodes else ("launcher_cpu", _("Launcher CPUs"), spec.launcher_cpu),
        None if nodes else ("launcher_memory", _("Launcher memory"), spec.launcher_memory),
        ("mpi_implementation", _("MPI implementation"), spec.mpi_implementation),
        ("env", _("Environment variables"), env),
        ("volumes", _("Volumes"), volumes),
        ("node_selector", _("Node selector"), ", ".join(f"{k}={v}" for k, v in
                                                        sorted(spec.node_selector.items()))),
        None if nodes else ("priority_class", _("Priority class"), spec.priority_class),
        ("queue_name", _("Kueue queue"), spec.queue_name),
        ("queue_priority", _("Queue priority"), spec.queue_priority),
        None if nodes else ("disable_sidecar_injection", _("Istio sidecar"),
                            _("disabled") if spec.disable_sidecar_injection else _("allowed")),
    ]
    return [Setting(key, label, value or "") for key, label, value in filter(None, rows)]


def _other_settings(job: dict) -> list[Setting]:
    kind = kind_for_object(job)
    field = kind.replica_specs_field if kind else ""
    rows: list[Setting] = []
    for raw_role, replica in sorted(as_dict(get_path(job, ["spec", field])).items()):
        role = role_name(str(raw_role))
        containers = as_list(get_path(replica, ["template", "spec", "containers"]))
        container = as_dict(containers[0]) if containers else {}
        limits = as_dict(get_path(container, ["resources", "limits"])) or \
            as_dict(get_path(container, ["resources", "requests"]))
        argv = [str(w) for w in as_list(container.get("command")) + as_list(container.get("args"))]
        rows += [
            Setting(f"{raw_role}.replicas", _("%(role)s replicas") % {"role": role},
                    str(as_dict(replica).get("replicas", 1))),
            Setting(f"{raw_role}.image", _("%(role)s image") % {"role": role},
                    str(container.get("image", ""))),
            Setting(f"{raw_role}.command", _("%(role)s command") % {"role": role},
                    command_text(argv)),
            Setting(f"{raw_role}.resources", _("%(role)s resources") % {"role": role},
                    ", ".join(f"{k}={v}" for k, v in sorted(limits.items()))),
        ]
    return rows


def settings_of(job: dict) -> list[Setting]:
    """A job's settings, in the order the comparison shows them."""
    kind = kind_for_object(job)
    if kind is not None and kind.creatable:
        found = _mpijob_settings(job)
        if found is not None:
            return found
    return _other_settings(job)


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    values: tuple[str, ...]

    @property
    def differs(self) -> bool:
        return len(set(self.values)) > 1


def compare(columns: Sequence[list[Setting]]) -> list[Row]:
    """One row per setting any job has, with each job's value ("" where it has none)."""
    order: list[tuple[str, str]] = []
    for settings in columns:
        for setting in settings:
            if (setting.key, setting.label) not in order:
                order.append((setting.key, setting.label))
    values = [{s.key: s.value for s in settings} for settings in columns]
    return [Row(key, label, tuple(v.get(key, "") for v in values)) for key, label in order]


def differences(a: list[Setting], b: list[Setting], limit: int = 3) -> list[str]:
    """What `b` sets differently from `a`: "Memory per worker 64Gi" (at most `limit`)."""
    rows = [r for r in compare([a, b]) if r.differs]
    return [f"{r.label} {r.values[1] or '-'}" for r in rows[:limit]]


# -- similar runs ----------------------------------------------------------------------------------
def _program(command: str) -> str:
    """The training script a command runs (`train.py`), else its first word."""
    words = command.split()
    scripts = [w for w in words if w.endswith(".py")]
    return os.path.basename(scripts[0]) if scripts else (words[0] if words else "")


def _repository(image: str) -> str:
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return name.rsplit(":", 1)[0] if ":" in last else name


def similar_to(job: dict, candidates: Sequence[tuple[str, dict]],
               limit: int = 3) -> list[tuple[str, list[str]]]:
    """Of `candidates` ((id, manifest), newest first), those that run the same training
    script from the same image repository as `job`, fewest differences first: (id, the
    differences)."""
    mine = {s.key: s.value for s in settings_of(job)}
    if "image" not in mine:
        return []
    found = []
    for ident, manifest in candidates:
        theirs = settings_of(manifest)
        values = {s.key: s.value for s in theirs}
        if _repository(values.get("image", "")) != _repository(mine["image"]) or \
                _program(values.get("command", "")) != _program(mine.get("command", "")):
            continue
        found.append((ident, differences(settings_of(job), theirs)))
    found.sort(key=lambda pair: len(pair[1]))
    return found[:limit]



# -- runs over time ----------------------------------------------------------------------------
def progress_over_time(lines: Sequence[str], started: float,
                       total_hint: int | None = None) -> list[tuple[float, float]]:
    """(minutes since the start, percent done) from a log tail read with timestamps."""
    from odh.training.logs.progress import parse_progress, progress_points
    points = progress_points(lines, total_hint=total_hint)
    latest = parse_progress(lines, total_hint=total_hint)
    total = latest.total if latest else None
    if not total:
        return []
    out = []
    for point in points:
        if point.at is None or point.family != points[-1].family:
            continue
        out.append((round((point.at.timestamp() - started) / 60, 2),
                    round(100 * min(1.0, point.done / total), 1)))
    return out


def gpu_hours(gpus: int, seconds: float | None) -> float:
    return round(gpus * (seconds or 0.0) / 3600.0, 2)
