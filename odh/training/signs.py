"""Signs worth telling while a job still runs or waits, read from what the watcher sees:
a job Pending longer than a person's N minutes, a possible hang, a pod that restarted, and
the early warnings before a failure (MPIJob-041): a container's memory over 90% of its limit
for minutes, an ETA past the job's `activeDeadlineSeconds`.

Each `Sign` names one occurrence (`key`): the watcher claims (job uid, signal, key) in the
database once, so a sign is told once however many watchers see it, and again only when it
happens anew (another run of the container, another silence, another restart). The words
are the diagnosis' own where it has them (odh.training.diagnosis): its headline says what
was seen, its advice what to do. Nothing here reads a cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation

from odh.training.diagnosis.common import container_state
from odh.training.diagnosis.facts import Facts
from odh.training.diagnosis.model import Action, Diagnosis
from odh.training.diagnosis.rules.running import _retry_text, possible_hang
from odh.training.durations import format_duration, parse_timestamp
from odh.training.i18n import _
from odh.training.logs.progress import Progress, progress_source
from odh.training.paths import get_path
from odh.training.quantity import display_memory, parse_quantity
from odh.training.status.summary import JobStatus, JobSummary

Obj = dict
PENDING, HANG, RESTART, MEMORY, DEADLINE = "pending", "hang", "restart", "memory", "deadline"
SIGNALS = (PENDING, HANG, RESTART, MEMORY, DEADLINE)
MEMORY_SHARE = 0.9
# "for minutes": the working set's lowest over this window is over MEMORY_SHARE of the limit
MEMORY_WINDOW_SECONDS = 300


@dataclass(frozen=True)
class Sign:
    signal: str
    key: str  # the occurrence: told once per (job, signal, key)
    at: datetime  # when it happened (or was seen): told to subscriptions older than that
    headline: str  # what was seen
    advice: str = ""  # what to do


def advice_of(diagnosis: Diagnosis | None, most: int = 2) -> str:
    """The diagnosis' advice and fixes in its own words (those that need no command)."""
    if diagnosis is None:
        return ""
    texts = [str(s.text) for s in diagnosis.suggestions
             if s.action in (Action.ADVICE, Action.FIX) and not s.command]
    return " ".join(texts[:most])


def pending_sign(summary: JobSummary, diagnosis: Diagnosis | None, now: datetime,
                 minutes: int) -> Sign | None:
    """Pending for `minutes` or more (one occurrence per wait, per N)."""
    since = summary.since or summary.created
    if summary.status != JobStatus.PENDING or since is None:
        return None
    long_at = since + timedelta(minutes=minutes)
    if now < long_at:
        return None
    headline = _("Pending for %(duration)s") % {
        "duration": format_duration((now - since).total_seconds())}
    if diagnosis is not None:
        headline = f"{headline}: {diagnosis.headline}"
    return Sign(PENDING, f"{since.isoformat()}/{minutes}m", long_at, headline,
                advice_of(diagnosis))


def restart_signs(summary: JobSummary, job: Obj, pods: list[Obj], now: datetime) -> list[Sign]:
    """One per pod whose containers restarted, per restart count seen."""
    if summary.status not in (JobStatus.RUNNING, JobStatus.PENDING):
        return []
    by_name = {str(get_path(p, ["metadata", "name"]) or ""): p for p in pods}
    facts = Facts(summary=summary, job=job, pods=pods, events=[], now=now)
    found = []
    for replica in summary.replicas:
        if replica.restarts <= 0 or not replica.exists:
            continue
        last = container_state(by_name.get(replica.name, {}), last=True)
        at = parse_timestamp(last.get("finishedAt")) or now
        values = {"pod": replica.label, "retry": _retry_text(facts, replica.restarts)}
        running = replica.status == "Running" and replica.reason in ("", "Running")
        headline = (_("%(pod)s crashed and restarted (%(retry)s)") if running else
                    _("%(pod)s crashed and is restarting (%(retry)s)")) % values
        if last.get("reason"):
            headline += " " + _("Its last run ended with exit code %(code)s (%(reason)s).") % {
                "code": last.get("exitCode", "?"), "reason": last.get("reason")}
        found.append(Sign(RESTART, f"{replica.name}#{replica.restarts}", at, headline, _(
            "If it keeps crashing, suspend or delete the job so it does not hold its GPUs.")))
    return found


def hang_sign(facts: Facts) -> Sign | None:
    """The diagnosis' possible hang (no log line past the hang threshold, the GPUs idle or
    not known), one occurrence per silence (since the last line it heard)."""
    diagnosis = possible_hang(facts)
    source = progress_source(facts.s.replicas)
    if diagnosis is None or source is None:
        return None
    tail = facts.log_of(getattr(source, "name", ""))
    since = (tail.last_time if tail else None) or getattr(source, "started", None) or \
        facts.s.started
    key = f"{getattr(source, 'name', '')}@{since.isoformat() if since else ''}"
    return Sign(HANG, key, facts.now, diagnosis.headline, advice_of(diagnosis))


def _bytes(value: object) -> Decimal | None:
    try:
        found = parse_quantity(str(value))
    except (InvalidOperation, ValueError, TypeError):
        return None
    return found if found > 0 else None


def memory_signs(summary: JobSummary, pods: list[Obj],
                 lowest: Mapping[tuple[str, str], float], now: datetime,
                 window: float = MEMORY_WINDOW_SECONDS) -> list[Sign]:
    """Containers whose working set stayed over MEMORY_SHARE of their memory limit for the
    whole window (`lowest`: (pod, container) -> the least bytes over the window), one
    occurrence per run of the container."""
    if summary.status != JobStatus.RUNNING:
        return []
    labels = {r.name: r.label for r in summary.replicas}
    found = []
    for pod in pods:
        name = str(get_path(pod, ["metadata", "name"]) or "")
        started = {str(c.get("name")): parse_timestamp(get_path(c, ["state", "running",
                                                                    "startedAt"]))
                   for c in get_path(pod, ["status", "containerStatuses"]) or []}
        for container in get_path(pod, ["spec", "containers"]) or []:
            cname = str(container.get("name") or "")
            limit = _bytes(get_path(container, ["resources", "limits", "memory"]))
            used = lowest.get((name, cname))
            since = started.get(cname)
            if limit is None or used is None or since is None or \
                    (now - since).total_seconds() < window:
                continue  # no limit, no numbers, or not running the whole window
            if used < float(limit) * MEMORY_SHARE:
                continue
            values = {"pod": labels.get(name, name), "percent": int(used * 100 / float(limit)),
                      "used": display_memory(Decimal(int(used))),
                      "limit": display_memory(limit), "window": format_duration(window)}
            found.append(Sign(MEMORY, f"{name}/{cname}@{since.isoformat()}", now, _(
                "%(pod)s has used over %(percent)d%% of its memory limit for %(window)s "
                "(%(used)s of %(limit)s): it may be OOMKilled soon") % values, _(
                "Clone the job with more memory per Worker, or lower the batch size or the "
                "data loader's workers, before the kernel kills it.")))
    return found


def deadline_sign(summary: JobSummary, job: Obj, progress: Progress | None,
                  now: datetime) -> Sign | None:
    """At its pace (the ETA its progress tells), training ends after the job's
    `activeDeadlineSeconds`: one occurrence per run."""
    deadline = get_path(job, ["spec", "runPolicy", "activeDeadlineSeconds"])
    if summary.status != JobStatus.RUNNING or summary.started is None or progress is None \
            or not isinstance(deadline, int) or isinstance(deadline, bool) or deadline <= 0:
        return None
    eta = progress.eta_at(now)
    if eta is None:
        return None
    stopped_at = summary.started + timedelta(seconds=deadline)
    if now + timedelta(seconds=eta) <= stopped_at:
        return None
    values = {"eta": format_duration(eta), "deadline": format_duration(deadline),
              "left": format_duration((stopped_at - now).total_seconds())}
    return Sign(DEADLINE, summary.started.isoformat(), now, _(
        "At its pace training needs %(eta)s more, but its deadline of %(deadline)s stops it "
        "in %(left)s") % values, " ".join((
            _("Raise or remove runPolicy.activeDeadlineSeconds: export the job's YAML, change "
              "it and create it again."),
            _("Save checkpoints, so a job stopped at its deadline can resume."))))
