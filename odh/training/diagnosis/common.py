"""Small readings every rule shares: a pod's raw object and events, who a rank or a host
is, the log tails that were read, and the job's own (generic) verdict."""

from __future__ import annotations

import re
from datetime import datetime

from odh.training.cluster.events import event_time, involved, message
from odh.training.diagnosis.facts import Facts, LogTail
from odh.training.diagnosis.model import Evidence
from odh.training.i18n import _
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import GPU_RESOURCE
from odh.training.status.pods import ReplicaState, placeholder
from odh.training.status.summary import JobStatus

MAX_QUOTE = 300
_RANK = re.compile(r"^\[(?:\d+,)?(\d+)\]<(?:stdout|stderr)>:")
_RANK_IN_TEXT = re.compile(r"process rank (\d+)")


def quote(text: str, limit: int = MAX_QUOTE) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit - 1] + "…"


def raw_pod(facts: Facts, name: str) -> dict:
    for pod in facts.pods:
        if get_path(pod, ["metadata", "name"]) == name:
            return pod
    return {}


def pod_events(facts: Facts, name: str, reason: str | None = None) -> list[dict]:
    """Events about one pod, oldest first (the job's events are newest first)."""
    found = [e for e in facts.events if involved(e).get("kind") == "Pod"
             and involved(e).get("name") == name
             and (reason is None or e.get("reason") == reason)]
    return sorted(found, key=lambda e: event_time(e) or datetime.min.replace(
        tzinfo=facts.now.tzinfo))


def job_events(facts: Facts, reasons: tuple[str, ...] = ()) -> list[dict]:
    """Events about the job itself and the objects its operator makes for it but its pods
    (its launcher Job; a TrainJob's JobSet and Jobs), oldest first."""
    kind, name = facts.s.kind, facts.s.name
    wanted = {(kind.kind, name), ("Job", f"{name}-launcher")}
    found = [e for e in facts.events
             if (about := (str(involved(e).get("kind") or ""), str(involved(e).get("name") or "")))
             in wanted or (about[0] != "Pod" and kind.event_job_name(*about) == name)]
    if reasons:
        found = [e for e in found if e.get("reason") in reasons]
    return sorted(found, key=lambda e: event_time(e) or datetime.min.replace(
        tzinfo=facts.now.tzinfo))


def event_evidence(event: dict, source: str = "") -> Evidence:
    count = event.get("count") or get_path(event, ["series", "count"])
    text = f"{event.get('reason', '')}: {quote(message(event))}"
    if isinstance(count, int) and count > 1:
        text += " " + _("(%(count)d times)") % {"count": count}
    return Evidence("event", text, source, event_time(event))


def replicas_workers_first(facts: Facts) -> list[ReplicaState]:
    s = facts.s
    launcher = [s.launcher] if s.launcher else []
    return [r for r in s.workers + launcher if r.exists]


def replica_named(facts: Facts, name: str) -> ReplicaState | None:
    for replica in facts.s.replicas:
        if replica.name == name:
            return replica
    return None


def slots_per_worker(facts: Facts) -> int:
    value = get_path(facts.job, ["spec", "slotsPerWorker"], 1)
    return value if isinstance(value, int) and value > 0 else 1


def worker(facts: Facts, index: int) -> ReplicaState:
    """MPIJob Worker `index`, or (its pod already removed, e.g. by cleanPodPolicy) a
    stand-in that still names it."""
    for replica in facts.s.workers:
        if replica.role == "Worker" and replica.index == index:
            return replica
    return placeholder(f"{facts.s.name}-worker-{index}", "Worker", index)


def worker_for_rank(facts: Facts, rank: int) -> ReplicaState | None:
    """The MPIJob Worker that runs MPI rank `rank` (hosts in order, slots ranks each)."""
    if not facts.s.kind.runs_mpirun:
        return None
    return worker(facts, rank // slots_per_worker(facts))


def rank_of(raw_line: str) -> int | None:
    """The MPI rank a tagged line (`[1,3]<stderr>:...`) or mpirun's report names."""
    if m := _RANK.match(raw_line):
        return int(m.group(1))
    if m := _RANK_IN_TEXT.search(raw_line):
        return int(m.group(1))
    return None


def replica_for_host(facts: Facts, host: str) -> ReplicaState | None:
    """The pod an ssh host name (`job-worker-0.job.ns.svc`) or a pod name stands for."""
    by_address = next((get_path(p, ["metadata", "name"]) for p in facts.pods
                       if get_path(p, ["status", "podIP"]) == host), None)
    pod = by_address or host.split(".", 1)[0]
    found = replica_named(facts, pod)
    if found is None and pod.startswith(f"{facts.s.name}-worker-") and \
            pod.rsplit("-", 1)[1].isdecimal():
        found = worker(facts, int(pod.rsplit("-", 1)[1]))
    return found


def tails(facts: Facts) -> list[LogTail]:
    """The log tails read, the Launcher's (current run first) before the others."""
    found = list((facts.logs or {}).values())
    launcher = facts.s.launcher.name if facts.s.launcher else ""
    return sorted(found, key=lambda t: (t.pod != launcher, t.previous))


def launcher_tails(facts: Facts) -> list[LogTail]:
    s = facts.s
    source = s.launcher or next((r for r in s.replicas if r.role in ("Master", "Chief")), None)
    if source is None:
        return []
    return [t for t in tails(facts) if t.pod == source.name]


def job_verdict(facts: Facts) -> Evidence | None:
    """The operator's own reason for a failed job, shown as the consequence it is."""
    s = facts.s
    if s.status != JobStatus.FAILED or not (s.reason or s.message):
        return None
    return Evidence("state", _("The job is marked Failed by its operator (%(reason)s: "
                               "%(message)s): a consequence of the above, not its cause.")
                    % {"reason": s.reason.rstrip("/") or _("no reason"),
                       "message": quote(s.message, 160) or "-"}, s.kind.kind)


def labels(replicas: list[ReplicaState]) -> list[str]:
    return [r.label for r in replicas]


def names(replicas: list[ReplicaState]) -> list[str]:
    return [r.name for r in replicas]


def container_state(pod: dict, last: bool = False) -> dict:
    """The main container's current (or last) terminated/waiting block, {} if none."""
    statuses = as_list(get_path(pod, ["status", "containerStatuses"]))
    status = as_dict(statuses[0]) if statuses else {}
    state = as_dict(status.get("lastState" if last else "state"))
    return as_dict(state.get("terminated")) or as_dict(state.get("waiting"))


def several(replicas: list[ReplicaState]) -> str:
    """"Worker 2", or "Worker 2 and 1 more"."""
    first = replicas[0].label
    if len(replicas) == 1:
        return first
    return _("%(first)s and %(more)d more") % {"first": first, "more": len(replicas) - 1}


def short_of_gpus(replicas) -> bool:
    """Whether unscheduled pods wait for GPUs: the scheduler names them short, or (its
    words not known) the pods ask for some."""
    stuck = [r for r in replicas if r.reason == "Unschedulable"]
    said = [r.message for r in stuck if r.message]
    if said:
        return any(GPU_RESOURCE in text for text in said)
    return any(r.gpus for r in stuck)
