"""Fixes a diagnosis offers: changes to the job's configuration that a clone applies.

Every fix that changes amounts is checked with the wizard's own resource check
(`odh.training.capacity.fit.check_fit`) against the project's quotas, LimitRanges and the nodes as
far as they could be read, "as if the job were replaced": the quota this job's own pods
hold counts as free, since the clone takes their place once the job is deleted.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from decimal import Decimal
from typing import Any

from odh.training.capacity.allocation import TERMINAL_PHASES, pod_requests
from odh.training.capacity.fit import check_fit, keep_processes_in_step
from odh.training.capacity.quota import compute_name
from odh.training.diagnosis.facts import Facts
from odh.training.diagnosis.model import JobFix
from odh.training.i18n import _, ngettext
from odh.training.kinds import kind_for_object
from odh.training.manifests.totals import amount, gpus
from odh.training.paths import as_dict, get_path
from odh.training.quantity import GPU_RESOURCE, format_memory
from odh.training.spec import JobSpec, ManifestError, read_manifest

GI = Decimal(2**30)
# memory sizes people ask for, in GiB: the next one up is the fix
NICE_GIB = (1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
            1536, 2048)
_BATCH_FLAGS = ("--batch-size", "--batch_size", "--per_device_train_batch_size",
                "--per-device-train-batch-size", "--train_batch_size", "--train-batch-size",
                "--micro-batch-size", "--micro_batch_size", "--bs")


def spec_of(job: dict) -> JobSpec | None:
    """The job as the wizard describes it (MPIJobs only: the others are not cloned here)."""
    kind = kind_for_object(job)
    if kind is None or not kind.creatable:
        return None
    try:
        return read_manifest(job)
    except ManifestError:
        return None


def quotas_without_job(quotas: list[dict], pods: list[dict]) -> list[dict]:
    """The quotas with what this job's own live pods count taken off their use."""
    held: dict[str, Decimal] = {}
    count = 0
    for pod in pods:
        if get_path(pod, ["status", "phase"]) in TERMINAL_PHASES:
            continue
        count += 1
        for name, value in pod_requests(pod).items():
            held[name] = held.get(name, Decimal(0)) + value
    adjusted = []
    for quota in quotas:
        quota = copy.deepcopy(quota)
        used = as_dict(get_path(quota, ["status", "used"]))
        for key, raw in list(used.items()):
            name = compute_name(str(key))
            taken = Decimal(count) if key in ("pods", "count/pods") else held.get(name)
            if not taken:
                continue
            left = max(amount(str(raw)) - taken, Decimal(0))
            used[key] = format(left.normalize(), "f")
        adjusted.append(quota)
    return adjusted


def _report(facts: Facts, spec: JobSpec):
    quotas = quotas_without_job(facts.quotas or [], facts.pods)
    return check_fit(spec, quotas, facts.limit_ranges or [], facts.nodes or [], spec.namespace)


def fits(facts: Facts, spec: JobSpec, changes: dict[str, Any]) -> bool:
    """Does the change bring no new trouble: no quota line, LimitRange bound or node size
    that the job met before and the changed job would not? (What did not fit before, the
    change is not asked to fix: a full GPU quota does not stop a memory fix.)"""
    before = _report(facts, spec)
    after = _report(facts, dataclasses.replace(spec, **changes))
    failing = {line.resource for line in before.lines if not line.fits}
    if any(not line.fits and line.resource not in failing for line in after.lines):
        return False
    if after.node_problem and not before.node_problem:
        return False
    return set(after.problems) <= set(before.problems) or \
        len(after.problems) <= len(before.problems)


def still_waits(facts: Facts, spec: JobSpec, changes: dict[str, Any]) -> str:
    """A note for a fix after which the job still would not fit right now."""
    after = _report(facts, dataclasses.replace(spec, **changes))
    if after.fits:
        return ""
    return _("The project's quota has no room for the copy right now: it will wait, Pending, "
             "until it does.") if any(not line.fits for line in after.lines) else ""


def _with_np(spec: JobSpec, changes: dict[str, Any]) -> dict[str, Any]:
    return keep_processes_in_step(spec, changes)


# -- memory ---------------------------------------------------------------------------------------
def memory_fix(facts: Facts, spec: JobSpec, launcher: bool,
               peak: float | None) -> JobFix | None:
    """The next memory size up (past the peak seen, when known) that still fits."""
    field = "launcher_memory" if launcher else "memory_per_worker"
    current = amount(getattr(spec, field))
    floor = max(current * Decimal("1.2"), Decimal(str(peak)) * Decimal("1.2") if peak else 0)
    for size in NICE_GIB:
        value = size * GI
        if value <= floor or value <= current:
            continue
        changes = {field: format_memory(value)}
        if not fits(facts, spec, changes):
            continue
        values = {"memory": format_memory(value), "now": format_memory(current) if current
                  else _("no limit")}
        label = (_("Clone with %(memory)s of memory for the Launcher (now %(now)s)") if launcher
                 else _("Clone with %(memory)s of memory per Worker (now %(now)s)")) % values
        return JobFix(label, changes, note=still_waits(facts, spec, changes))
    return None


# -- the command line -----------------------------------------------------------------------------
def _batch_flag(command: list[str]) -> tuple[int, str, int, bool] | None:
    """(index, flag, value, inline) of the batch-size argument in a command line."""
    for index, word in enumerate(command):
        flag, eq, value = word.partition("=")
        if flag not in _BATCH_FLAGS:
            continue
        if not eq:
            value = command[index + 1] if index + 1 < len(command) else ""
            index += 1
        if value.isdecimal() and int(value) > 1:
            return index, flag, int(value), bool(eq)
    return None


def batch_size_fix(spec: JobSpec) -> JobFix | None:
    """Half the batch size named on the command line (`--batch-size 64` -> 32)."""
    words = [str(w) for w in spec.command]
    found = _batch_flag(words)
    if found is None:
        return None
    index, flag, value, inline = found
    smaller = value // 2
    changed = list(words)
    changed[index] = f"{flag}={smaller}" if inline else str(smaller)
    return JobFix(_("Clone with %(flag)s %(smaller)d (now %(value)d)")
                  % {"flag": flag, "smaller": smaller, "value": value},
                  {"command": changed})


def batch_size_in_command(spec: JobSpec) -> int | None:
    found = _batch_flag([str(w) for w in spec.command])
    return found[2] if found else None


# -- Workers and GPUs -----------------------------------------------------------------------------
def more_workers_fix(facts: Facts, spec: JobSpec) -> JobFix | None:
    """Twice the Workers (and the GPUs with them), when that fits."""
    if spec.workers < 1:
        return None
    for workers in (spec.workers * 2, spec.workers + 1):
        changes = _with_np(spec, {"workers": workers})
        if fits(facts, spec, changes):
            label = ngettext("Clone with %(workers)d Worker (now %(now)d)",
                             "Clone with %(workers)d Workers (now %(now)d)", workers) % {
                "workers": workers, "now": spec.workers}
            return JobFix(label, changes, note=still_waits(facts, spec, changes))
    return None


def fewer_workers_fix(spec: JobSpec, workers: int, note: str) -> JobFix | None:
    if not 1 <= workers < spec.workers:
        return None
    label = ngettext("Clone with %(workers)d Worker (now %(now)d)",
                     "Clone with %(workers)d Workers (now %(now)d)", workers) % {
        "workers": workers, "now": spec.workers}
    return JobFix(label, _with_np(spec, {"workers": workers}), note=note)


def fit_fixes(facts: Facts, spec: JobSpec) -> list[JobFix]:
    """The wizard's own fixes for a job that does not fit (quota, LimitRange, nodes)."""
    quotas = quotas_without_job(facts.quotas or [], facts.pods)
    report = check_fit(spec, quotas, facts.limit_ranges or [], facts.nodes or [],
                       spec.namespace)
    fixes = []
    for fix in report.fixes:
        changes = dict(fix.changes)
        workers = changes.get("workers")
        gpu_count = changes.get("gpus_per_worker")
        if isinstance(workers, int) and isinstance(gpu_count, int) and gpu_count:
            label = _("Clone with %(workers)d Workers x %(gpus)s") % {
                "workers": workers, "gpus": gpus(gpu_count)}
        else:
            label = _("Clone with this change: %(change)s") % {"change": fix.label}
        fixes.append(JobFix(label, changes, note=still_waits(facts, spec, changes)))
    return fixes


# -- other settings --------------------------------------------------------------------------------
def sidecar_fix() -> JobFix:
    return JobFix(_("Clone with the Istio sidecar disabled"),
                  {"disable_sidecar_injection": True})


def edit_fix(label: str, focus: str, note: str = "") -> JobFix:
    """No change to make for the person, but a field to correct in the clone."""
    return JobFix(label, {}, focus=focus, note=note)


def pod_memory(pod: dict) -> tuple[Decimal, Decimal]:
    """(request, limit) of memory of the pod's main container (0 when unset)."""
    containers = get_path(pod, ["spec", "containers"]) or [{}]
    resources = as_dict(as_dict(containers[0]).get("resources"))
    limit = amount(str(as_dict(resources.get("limits")).get("memory", "")))
    request = amount(str(as_dict(resources.get("requests")).get("memory", ""))) or limit
    return request, limit


def pod_gpu_request(pod: dict) -> int:
    return int(pod_requests(pod).get(GPU_RESOURCE, 0))


def words(text: str) -> list[str]:
    return re.findall(r"\S+", text)


def secret_fix(facts: Facts, missing: str) -> JobFix | None:
    """A clone whose environment takes its values from a Secret of the project that has
    every key the job reads from the missing one (the first by name)."""
    spec = spec_of(facts.job)
    if spec is None or not facts.secret_keys:
        return None
    needed = sorted({str(get_path(e.value_from, ["secretKeyRef", "key"], ""))
                     for e in spec.env if _secret_of(e.value_from) == missing})
    if not needed:
        return None
    found = [name for name, keys in sorted(facts.secret_keys.items())
             if name != missing and set(needed) <= set(keys)]
    if not found:
        return None
    other = found[0]
    rows = []
    for e in spec.env:
        value_from = copy.deepcopy(e.value_from)
        if _secret_of(value_from) == missing:
            value_from["secretKeyRef"]["name"] = other
        rows.append({"name": e.name, "value": e.value, "value_from": value_from})
    return JobFix(ngettext("Clone using the Secret “%(name)s”, which has the key %(keys)s",
                           "Clone using the Secret “%(name)s”, which has the keys %(keys)s",
                           len(needed)) % {"name": other, "keys": ", ".join(needed)},
                  {"env": rows})


def _secret_of(value_from: dict | None) -> str:
    return str(get_path(value_from or {}, ["secretKeyRef", "name"], ""))


def pull_secret_fix(facts: Facts) -> JobFix | None:
    """A clone that pulls its image with one of the project's pull secrets (the first by
    name that the job does not use already)."""
    spec = spec_of(facts.job)
    if spec is None or not facts.pull_secrets:
        return None
    others = [name for name in facts.pull_secrets if name != spec.image_pull_secret]
    if not others:
        return None
    return JobFix(_("Clone using the pull secret “%(name)s”") % {"name": others[0]},
                  {"image_pull_secret": others[0]})
