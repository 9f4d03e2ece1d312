"""Validation rules for what the job is: names, image, command, sizes and MPI settings."""

from __future__ import annotations

import os.path
import shlex
from collections.abc import Iterator
from decimal import Decimal

from odh.training.checks.images import ImageError, parse_image
from odh.training.checks.names import (
    DNS1035_LABEL,
    MAX_WORKERS,
    is_dns1123_subdomain,
    max_job_name_length,
)
from odh.training.checks.syntax import is_dns1123_label
from odh.training.findings import NP_MISMATCH, WARNING, FieldError, ValidationContext
from odh.training.i18n import _, ngettext, shown
from odh.training.quantity import QuantityError, format_cpu, parse_quantity
from odh.training.spec import (
    JobSpec,
)

MAX_GPUS_PER_WORKER = 16
MAX_SLOTS_PER_WORKER = 1024
# Below this no container runtime can start a container (runc refuses less than 4MiB-ish).
MIN_MEMORY = Decimal(4 * 2**20)
NAME_EXAMPLE = "bert-finetune"
_LAUNCHERS = ("mpirun", "mpiexec", "horovodrun", "mpiexec.hydra")
_NP_FLAGS = ("-np", "-n", "--np", "--n", "--num-proc")
_PROGRAMS = ("python", "python3", "bash", "sh")

Findings = Iterator[FieldError]


def text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_name(spec: JobSpec, context: ValidationContext) -> Findings:
    name = text(spec.name)
    values = {"name": shown(name), "example": NAME_EXAMPLE, "namespace": text(spec.namespace)}
    if not name:
        yield FieldError("name", _('Enter a job name, for example "%(example)s".') % values)
        return
    if DNS1035_LABEL.fullmatch(name.rstrip("-")) is None:
        yield FieldError("name", _('Job name "%(name)s" is not valid: use lower-case letters, '
                                   'digits and "-", starting with a letter (for example '
                                   '"%(example)s").') % values)
        return
    if name.endswith("-"):
        yield FieldError("name", _('Job name "%(name)s" is not valid: it must end with a letter '
                                   'or digit, not "-".') % values)
        return
    workers = spec.workers if is_int(spec.workers) and 1 <= spec.workers <= MAX_WORKERS \
        else MAX_WORKERS
    limit = max_job_name_length(workers)
    if len(name) > limit:
        values.update(limit=limit, suffix=f"-worker-{workers - 1}")
        yield FieldError("name", _('The name is too long: at most %(limit)d characters leave '
                                   'room for the "%(suffix)s" suffix the Workers get.') % values)
        return
    if name in context.existing_names:
        yield FieldError("name", _('A job called "%(name)s" already exists in %(namespace)s: '
                                   "choose another name.") % values)


def check_namespace(spec: JobSpec, context: ValidationContext) -> Findings:
    namespace = text(spec.namespace)
    if not namespace:
        yield FieldError("namespace", _("Choose the project to run the job in."))
    elif not is_dns1123_label(namespace):
        yield FieldError("namespace", _('"%(name)s" is not a valid project name: use lower-case '
                                        'letters, digits and "-".') % {"name": shown(namespace)})


def _image(field: str, reference: str) -> Findings:
    try:
        image = parse_image(reference)
    except ImageError as exc:
        yield FieldError(field, str(exc))
        return
    if not image.pinned:
        yield FieldError(field, _('No tag is given, so the image tagged "latest" is pulled, '
                                  'which can change between runs: add a tag (for example '
                                  '"%(image)s:1.0").') % {"image": shown(reference, 80)},
                         WARNING)


def check_images(spec: JobSpec, context: ValidationContext) -> Findings:
    image = text(spec.image)
    if not image.strip():
        yield FieldError("image", _('Enter the training image, for example '
                                    '"quay.io/my-team/train:1.0".'))
    else:
        yield from _image("image", image)
    # a separate image for the Workers, where the kind has one
    worker_image = text(getattr(spec, "worker_image", ""))
    if worker_image and worker_image != image:
        yield from _image("worker_image", worker_image)
    pull_secret = text(getattr(spec, "image_pull_secret", ""))
    if pull_secret and not is_dns1123_subdomain(pull_secret):
        yield FieldError("image_pull_secret", _(
            '"%(name)s" is not a Secret\'s name: lowercase letters, digits, "-" and ".", '
            'starting and ending with a letter or digit (see "oc get secrets").')
            % {"name": shown(pull_secret, 60)})


def _np_location(words: list[str]) -> tuple[str, int, bool] | None:
    """(launcher, index of the word holding N, whether it is "-np=N") for mpirun-like
    commands; the search stops at the program mpirun starts."""
    launcher = ""
    for index, word in enumerate(words):
        if not launcher:
            base = os.path.basename(word)
            launcher = base if base in _LAUNCHERS else ""
            continue
        if word in _PROGRAMS or word.endswith(".py") or word.startswith("/"):
            return None
        flag, eq, _value = word.partition("=")
        if flag in _NP_FLAGS:
            if eq:
                return launcher, index, True
            return (launcher, index + 1, False) if index + 1 < len(words) else None
    return None


def command_processes(command: list[str]) -> tuple[str, int] | None:
    """(launcher, N) when the command asks mpirun/horovodrun for N processes (-np N)."""
    words: list[str] = []
    for part in command:
        try:
            words.extend(shlex.split(part) if " " in part else [part])
        except ValueError:
            words.append(part)
    location = _np_location(words)
    if location is None:
        return None
    launcher, index, inline = location
    value = words[index].partition("=")[2] if inline else words[index]
    if value.isdecimal() and len(value) < 10:
        return launcher, int(value)
    return None


def with_processes(command: list[str], processes: int) -> list[str]:
    """The command with its -np value replaced, when -np N is among its own words."""
    changed = list(command)
    location = _np_location(changed)
    if location is not None:
        _launcher, index, inline = location
        flag = changed[index].partition("=")[0]
        changed[index] = f"{flag}={processes}" if inline else str(processes)
    return changed


def check_command(spec: JobSpec, context: ValidationContext) -> Findings:
    command = [text(part) for part in spec.command] if isinstance(spec.command, list) else []
    if not command:
        return  # the Launcher runs its image's entrypoint (the review says so)
    if not command[0].strip():
        yield FieldError("command", _('The command starts with an empty word: write the '
                                      'program the Launcher runs first, for example '
                                      '"horovodrun -np 2 python train.py", or leave the '
                                      "command empty to run the image's entrypoint."))
        return
    asked = command_processes(command)
    if asked is None or not is_int(spec.workers) or not is_int(spec.gpus_per_worker) \
            or not is_int(spec.slots_per_worker or 1):
        return
    launcher, processes = asked
    slots = spec.effective_slots
    total = spec.workers * slots
    if processes != total and spec.workers >= 1 and slots >= 1:
        # said where Workers are chosen (the Resources step), not before: both ways to agree
        values = {"np": processes, "workers": spec.workers, "slots": slots, "total": total}
        if processes % slots == 0 and processes // slots <= MAX_WORKERS:
            values["other"] = ngettext("choose %(count)d worker", "choose %(count)d workers",
                                       processes // slots) % {"count": processes // slots}
        elif processes % spec.workers == 0:
            values["other"] = ngettext(
                "choose %(count)d slot per worker", "choose %(count)d slots per worker",
                processes // spec.workers) % {"count": processes // spec.workers}
        if launcher == "horovodrun":
            message = _("The command starts %(np)d MPI ranks (-np %(np)d) but %(workers)d "
                        "workers x %(slots)d slots give %(total)d: change -np to %(total)d, "
                        "or %(other)s.") if "other" in values else \
                _("The command starts %(np)d MPI ranks (-np %(np)d) but %(workers)d "
                  "workers x %(slots)d slots give %(total)d: change -np to %(total)d.")
        else:
            message = _("The command starts %(np)d MPI ranks (-np %(np)d) but %(workers)d "
                        "workers x %(slots)d slots give %(total)d: change -np to %(total)d "
                        "(or leave it out, so mpirun starts one rank per slot), or "
                        "%(other)s.") if "other" in values else \
                _("The command starts %(np)d MPI ranks (-np %(np)d) but %(workers)d "
                  "workers x %(slots)d slots give %(total)d: change -np to %(total)d, or "
                  "leave it out so mpirun starts one rank per slot.")
        yield FieldError("workers", message % values, WARNING, NP_MISMATCH)


def check_workers(spec: JobSpec, context: ValidationContext) -> Findings:
    workers = spec.workers
    if not is_int(workers) or not 1 <= workers <= MAX_WORKERS:
        yield FieldError("workers", _("Number of workers must be a whole number from 1 to "
                                      "%(max)d (you entered %(value)s).")
                         % {"max": MAX_WORKERS, "value": shown(workers)})


_RESOURCE_KINDS = {"cpu_per_worker": "cpu", "memory_per_worker": "memory",
                   "launcher_cpu": "cpu", "launcher_memory": "memory"}


def resource_label(field: str, nodes: bool = False) -> str:
    """The form label of a resource field, translated; `nodes`: the kind counts its pods
    as nodes (`JobKind.counts_nodes`), as the wizard's labels then say."""
    labels = {"cpu_per_worker": _("CPUs per worker"), "memory_per_worker": _("Memory per worker"),
              "gpus_per_worker": _("GPUs per worker"), "launcher_cpu": _("Launcher CPUs"),
              "launcher_memory": _("Launcher memory")}
    if nodes:
        labels.update(cpu_per_worker=_("CPUs per node"), memory_per_worker=_("Memory per node"),
                      gpus_per_worker=_("GPUs per node"))
    return labels.get(field, field)


def _unset(field: str, what: str, kind: str) -> FieldError:
    values = {"what": what}
    if kind == "cpu":
        message = _("%(what)s is empty, so the pod gets no guaranteed CPU and may run slowly: "
                    "enter an amount such as 4 or 500m.")
    else:
        message = _("%(what)s is empty, so the pod gets no guaranteed memory and may be stopped "
                    "when the node runs short: enter an amount such as 16Gi or 512Mi.")
    return FieldError(field, message % values, WARNING)


def _small_memory(field: str, what: str, raw: str, amount: Decimal) -> FieldError:
    values = {"what": what, "value": shown(raw), "bytes": shown(format(amount, "f"))}
    if raw.strip().replace(".", "", 1).isdecimal():
        values["suggestion"] = raw.strip() + "Gi"
        return FieldError(field, _('%(what)s "%(value)s" is only %(bytes)s bytes, too little to '
                                   "start a container: add a unit (did you mean "
                                   "%(suggestion)s?).") % values)
    return FieldError(field, _("%(what)s (%(value)s) is too little to start a container: use at "
                               "least 4Mi.") % values)


def check_resources(spec: JobSpec, context: ValidationContext) -> Findings:
    for field, kind in _RESOURCE_KINDS.items():
        what = resource_label(field, spec.kind.counts_nodes)
        raw = text(getattr(spec, field))
        if not raw.strip():
            yield _unset(field, what, kind)
            continue
        try:
            amount = parse_quantity(raw)
        except QuantityError as exc:
            yield FieldError(field, str(exc))
            continue
        values = {"what": what}
        if amount <= 0:
            message = _("%(what)s must be more than 0: enter an amount such as 4 or 500m.") \
                if kind == "cpu" else \
                _("%(what)s must be more than 0: enter an amount such as 16Gi or 512Mi.")
            yield FieldError(field, message % values)
        elif kind == "cpu" and amount < Decimal("0.001"):
            yield FieldError(field, _("%(what)s is less than 1m (a thousandth of a CPU), the "
                                      "smallest amount Kubernetes gives: use at least 1m.")
                             % values)
        elif kind == "memory" and amount < MIN_MEMORY:
            yield _small_memory(field, what, raw, amount)
    gpus = spec.gpus_per_worker
    if not is_int(gpus) or not 0 <= gpus <= MAX_GPUS_PER_WORKER:
        yield FieldError("gpus_per_worker", _("GPUs per worker must be a whole number from 0 to "
                                              "%(max)d (you entered %(value)s).")
                         % {"max": MAX_GPUS_PER_WORKER, "value": shown(gpus)})


def _whole_cpus(raw: object) -> int | None:
    try:
        amount = parse_quantity(text(raw))
    except QuantityError:
        return None
    return int(amount) if amount >= 1 else None


def check_slots(spec: JobSpec, context: ValidationContext) -> Findings:
    slots = spec.slots_per_worker
    if slots is None:
        return
    nodes = spec.kind.counts_nodes  # a TrainJob: processes per node, in upstream's words
    if not is_int(slots) or not 1 <= slots <= MAX_SLOTS_PER_WORKER:
        yield FieldError("slots_per_worker", (
            _("Processes per node must be a whole number from 1 to %(max)d: each runs one "
              "rank.") if nodes else
            _("Slots per worker must be a whole number from 1 to %(max)d: each slot runs one "
              "MPI rank.")) % {"max": MAX_SLOTS_PER_WORKER})
        return
    gpus = spec.gpus_per_worker
    if is_int(gpus) and gpus > 0:
        values = {"slots": slots, "gpus": gpus, "idle": gpus - slots}
        if slots > gpus:
            yield FieldError("slots_per_worker", (_(
                "Processes per node (%(slots)d) is more than GPUs per node (%(gpus)d): use one "
                "process per GPU.") if nodes else _(
                "Slots per worker (%(slots)d) is more than GPUs per worker (%(gpus)d): each slot "
                "runs one MPI rank; with GPUs use one slot per GPU.")) % values, WARNING)
        elif slots < gpus:
            yield FieldError("slots_per_worker", (_(
                "Processes per node (%(slots)d) is less than GPUs per node (%(gpus)d): %(idle)d "
                "GPUs on each node stay idle unless your script starts its own processes; use "
                "one process per GPU.") if nodes else _(
                "Slots per worker (%(slots)d) is less than GPUs per worker (%(gpus)d): %(idle)d "
                "GPUs on each Worker stay idle unless your script starts its own processes; "
                "use one slot per GPU.")) % values, WARNING)
        return
    cpus = _whole_cpus(spec.cpu_per_worker)
    if cpus is not None and slots > cpus:
        yield FieldError("slots_per_worker", (_(
            "Processes per node (%(slots)d) is more than CPUs per node (%(cpus)s): the "
            "processes share CPUs and run slower; use at most %(cpus)s processes or more "
            "CPUs.") if nodes else _(
            "Slots per worker (%(slots)d) is more than CPUs per worker (%(cpus)s): the ranks "
            "share CPUs and run slower; use at most %(cpus)s slots or more CPUs."))
            % {"slots": slots, "cpus": format_cpu(Decimal(cpus))}, WARNING)
