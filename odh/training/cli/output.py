"""What the command line prints: tables kubectl users read without thinking, `describe`'s
sections, and records (`-o json`, `-o yaml`) that scripts parse.

Tables are plain text (no colours, no symbols), so `grep` and `awk` work on them; the
status words are the dashboard's (Pending, Running, Succeeded, Failed, Suspended).
`describe` right-aligns its labels so that each line reads `Label: value` with one space
(`describe ... | grep -q 'Status: Running'` works, as the plan's CI example does).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, TextIO

import yaml

from odh.training import cost
from odh.training.cluster.events import event_time, involved
from odh.training.cluster.events import message as event_message
from odh.training.diagnosis.story import Story, tell
from odh.training.durations import format_duration, format_timestamp
from odh.training.i18n import _, ngettext
from odh.training.jobstatus import JobStatus
from odh.training.manifests.retries import job_policy, lineage_of, lineage_text, wish_text
from odh.training.manifests.totals import totals_for
from odh.training.quantity import format_cpu, format_memory, format_resources
from odh.training.spec import ManifestError, read_manifest
from odh.training.status.summary import JobSummary

FORMATS = ("json", "yaml", "wide")
SHOWN_EVENTS = 15  # the newest; -o json|yaml gives them all


def table(rows: list[list[str]], out: TextIO, indent: str = "") -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write(indent + "   ".join(cell.ljust(w) for cell, w in
                                      zip(row, widths, strict=True)).rstrip() + "\n")


def ago(moment: datetime | None, now: datetime) -> str:
    """"5m ago": the largest unit or two of the time since `moment`."""
    if moment is None:
        return "-"
    text = format_duration((now - moment).total_seconds())
    return _("%(duration)s ago") % {"duration": " ".join(text.split()[:2])}


def short_age(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "-"
    return " ".join(format_duration((now - moment).total_seconds()).split()[:2])


def dump(data: Any, fmt: str, out: TextIO) -> None:
    if fmt == "json":
        out.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        out.write(yaml.safe_dump(data, sort_keys=False, allow_unicode=True,
                                 default_flow_style=False))


def _stamp(value: datetime | None) -> str | None:
    return format_timestamp(value) if value else None


def _ref(s: JobSummary) -> str:
    return f"{s.namespace}/{s.kind.slug}/{s.name}"


def job_record(s: JobSummary, now: datetime, told: Any = None) -> dict[str, Any]:
    """One job as `list -o json|yaml` gives it; `step` is its story (odh.training.diagnosis.story)
    when `told`, else its lifecycle step."""
    status = JobStatus.from_summary(s)
    return {"name": s.name, "namespace": s.namespace, "type": s.kind.kind,
            "status": str(s.status), "reason": s.reason, "message": s.message,
            "step": str(told.line if told is not None else s.lifecycle_step),
            "workers": {"ready": s.workers_ready, "total": s.workers_total,
                        "running": status.workers_running, "pending": status.workers_pending,
                        "failed": status.workers_failed},
            "gpus": s.gpus, "restarts": s.restarts, "createdBy": s.created_by,
            "created": _stamp(s.created), "started": _stamp(s.started),
            "finished": _stamp(s.finished),
            "durationSeconds": round(s.duration_seconds(now), 3)}


def print_list(summaries: list[JobSummary], out: TextIO, now: datetime, *,
               fmt: str = "", all_namespaces: bool = False, told: dict | None = None) -> None:
    """`told`: each job's story by "<ns>/<kind slug>/<name>" (STEP says it)."""
    told = told or {}
    if fmt in ("json", "yaml"):
        dump({"items": [job_record(s, now, told.get(_ref(s))) for s in summaries]}, fmt, out)
        return
    if not summaries:
        out.write(_("No training jobs found. Create one with: odh training create mpijob "
                    "--help") + "\n")
        return
    head = [_("NAME"), _("TYPE"), _("STATUS"), _("WORKERS"), _("CREATED")]
    if fmt == "wide":
        head += [_("GPUS"), _("RESTARTS"), _("DURATION"), _("CREATED BY"), _("STEP")]
    if all_namespaces:
        head.insert(0, _("NAMESPACE"))
    rows = [head]
    for s in summaries:
        row = [s.name, s.kind.kind, str(s.status), f"{s.workers_ready}/{s.workers_total}",
               ago(s.created, now)]
        if fmt == "wide":
            line = told[_ref(s)].line if _ref(s) in told else s.lifecycle_step
            row += [str(s.gpus), str(s.restarts), format_duration(s.duration_seconds(now)),
                    s.created_by or "-", str(line) or "-"]
        if all_namespaces:
            row.insert(0, s.namespace)
        rows.append(row)
    table(rows, out)


def _allocation(job: dict, s: JobSummary) -> list[tuple[str, str]]:
    """CPU, Memory, GPU totals with the per-Worker figure, from the job's manifest."""
    if not s.kind.creatable:  # only a kind the dashboard describes reads as a spec
        return [(_("GPU"), str(s.gpus))] if s.gpus else []
    try:
        totals = totals_for(read_manifest(job))
    except (ManifestError, ValueError, TypeError):
        return []

    def each(total: str, one: str) -> str:
        return _("%(total)s (%(each)s per worker)") % {"total": total, "each": one}

    lines = [(_("CPU"), each(format_cpu(totals.total_cpu), format_cpu(totals.cpu_per_worker))),
             (_("Memory"), each(format_memory(totals.total_memory),
                                format_memory(totals.memory_per_worker)))]
    lines.append((_("GPU"), each(str(totals.total_gpus), str(totals.gpus_per_worker))))
    return lines


def _labelled(lines: Iterable[tuple[str, str]], out: TextIO, indent: str = "") -> None:
    lines = list(lines)
    width = max(len(label) for label, _value in lines) + 1
    for label, value in lines:  # a line without a label goes on the one before
        head = f"{label + ':':>{width}}" if label else " " * width
        out.write(f"{indent}{head} {value}\n")


def _workers_text(s: JobSummary) -> str:
    running = sum(w.status == "Running" for w in s.workers
                  if not s.kind.runs_mpirun or w.role == "Worker")
    return _("%(running)d/%(total)d running") % {"running": running, "total": s.workers_total}


def told_with(s: JobSummary, diagnosis: Any, standing: Any = None) -> Story:
    """The job's story (odh.training.diagnosis.story): `describe`'s Step line, as the
    dashboard's."""
    queued = standing.headline() if standing is not None and s.held_by_queue else None
    return tell(s, diagnosis, queued)


def describe_record(job: dict, s: JobSummary, events: list[dict], diagnosis: Any,
                    now: datetime, standing: Any = None, prices: Any = None
                    ) -> dict[str, Any]:
    """`describe -o json|yaml`: the job's record, its pods, resources, events, diagnosis,
    where it stands in Kueue's queue (`queue`: null when it names none), and its cost at
    the dashboard's published prices (`cost`: null without prices)."""
    record = job_record(s, now, told_with(s, diagnosis, standing))
    record["pods"] = [{"name": r.name, "role": r.role, "index": r.index, "status": r.status,
                       "reason": r.reason, "message": r.message, "node": r.node,
                       "restarts": r.restarts, "ready": r.ready, "exitCode": r.exit_code,
                       "created": _stamp(r.created)} for r in s.replicas]
    record["resources"] = {label.lower(): value for label, value in _allocation(job, s)}
    record["events"] = [{"time": _stamp(event_time(e)), "type": e.get("type", ""),
                         "reason": e.get("reason", ""), "object": involved(e).get("name", ""),
                         "message": event_message(e)} for e in _in_time_order(events)]
    record["diagnosis"] = None if diagnosis is None else {
        "headline": diagnosis.headline, "culprit": str(diagnosis.culprit),
        "text": diagnosis.text(),
        "suggestions": [x.text for x in diagnosis.suggestions]}
    record["queue"] = None if standing is None else standing.to_dict()
    policy, lineage = job_policy(job), lineage_of(job)
    record["retry"] = {"retries": policy.retries, "on": policy.on,
                       "retryOf": lineage.first if lineage.attempt else None,
                       "attempt": lineage.attempt}
    charged = cost.job_cost(prices, s.kind, job, s.duration_seconds(now)) \
        if prices is not None and prices.is_set else None
    record["cost"] = None if charged is None else {
        "total": str(charged.total), "currency": charged.currency, "text": charged.text,
        "finished": s.is_finished, "basis": charged.basis}
    return record


def _in_time_order(events: list[dict]) -> list[dict]:
    oldest = datetime.min.replace(tzinfo=UTC)
    return sorted(events, key=lambda e: event_time(e) or oldest)


def print_describe(job: dict, s: JobSummary, events: list[dict], diagnosis: Any,
                   out: TextIO, now: datetime, standing: Any = None,
                   prices: Any = None) -> None:
    status = str(s.status)
    told = told_with(s, diagnosis, standing)
    lines = [(_("Name"), s.name), (_("Namespace"), s.namespace), (_("Type"), s.kind.kind),
             (_("Status"), status)]
    if s.reason:
        lines.append((_("Reason"), s.reason))
    lines += [(_("Nodes") if s.kind.counts_nodes else _("Workers"), _workers_text(s)),
              (_("Duration"), format_duration(s.duration_seconds(now))),
              # at the dashboard's published prices (odh.training.cost), when it has any
              *(cost.describe_lines(prices, s.kind, job, s.duration_seconds(now),
                                    s.is_finished) if prices is not None else []),
              (_("Step"), str(told.line) or "-"),
              (_("Restarts"), str(s.restarts)),
              (_("Created"), f"{_stamp(s.created) or '-'} ({ago(s.created, now)})"),
              (_("Created by"), s.created_by or _("unknown"))]
    # automatic retry: what it asked for, which retry it is (odh/training/manifests/retries)
    lines += [(label, text) for label, text in (
        (_("Automatic retry"), wish_text(job_policy(job))), (_("Retry of"), lineage_text(job)))
        if text]
    if s.message and diagnosis is None:  # else the diagnosis says the cluster's words
        lines.append((_("Message"), " ".join(s.message.split())))
    if standing is not None:
        lines.append((_("Queue"), standing.sentence()))
        if standing.expected_text():
            lines.append(("", standing.expected_text()))
        if standing.ahead_text():
            lines.append(("", standing.ahead_text()))
        if standing.waiting and standing.message:
            lines.append(("", _("Kueue: %(message)s") % {"message": standing.message}))
    _labelled(lines, out)
    if s.replicas:
        out.write("\n" + _("Worker Status:") + "\n")
        rows = [[_("POD"), _("STATUS"), _("AGE"), _("NODE"), _("RESTARTS"), _("NAME")]]
        for r in s.replicas:
            state = r.status + (f" ({r.reason})" if r.reason else "")
            rows.append([r.label, state, short_age(r.created, now), r.node or "-",
                         str(r.restarts), r.name])
        table(rows, out, indent="  ")
    allocation = _allocation(job, s)
    if allocation:
        out.write("\n" + _("Resource Allocation:") + "\n")
        _labelled(allocation, out, indent="  ")
    out.write("\n" + _("Events:") + "\n")
    if events:
        rows = [[_("AGE"), _("TYPE"), _("REASON"), _("OBJECT"), _("MESSAGE")]]
        for e in _in_time_order(events)[-SHOWN_EVENTS:]:
            rows.append([short_age(event_time(e), now), str(e.get("type", "")),
                         str(e.get("reason", "")), str(involved(e).get("name", "")),
                         " ".join(event_message(e).split())[:160]])
        table(rows, out, indent="  ")
    else:
        out.write("  " + _("<none>") + "\n")
    if diagnosis is not None:
        out.write("\n" + _("Diagnosis:") + "\n")
        out.write("".join(f"  {line}\n" for line in diagnosis.text().splitlines()))


def totals_text(spec) -> str:
    """"2 Workers x 1 CPU, 1Gi, 1 GPU, 1 slot per worker" (what is not set is left out);
    "2 Nodes x ..., 1 process per node" for a kind whose Workers are nodes."""
    totals = totals_for(spec)
    each = format_resources(totals.cpu_per_worker or None, totals.memory_per_worker or None,
                            totals.gpus_per_worker)
    values = {"workers": totals.workers, "slots": spec.effective_slots}
    if spec.kind.counts_nodes:
        workers = ngettext("%(workers)d Node", "%(workers)d Nodes", totals.workers) % values
        slots = ngettext("%(slots)d process per node", "%(slots)d processes per node",
                         spec.effective_slots) % values
    else:
        workers = ngettext("%(workers)d Worker", "%(workers)d Workers", totals.workers) % values
        slots = ngettext("%(slots)d slot per worker", "%(slots)d slots per worker",
                         spec.effective_slots) % values
    return f"{workers} x {each}, {slots}" if each else f"{workers}, {slots}"


def now_utc() -> datetime:
    return datetime.now(UTC)

