"""Evidence kept before the cluster deletes it: what a diagnosis needs of a container that
failed, taken when it fails.

A job written from the upstream examples runs its Launcher with the operator's default
`restartPolicy: OnFailure`: the kubelet restarts a failed mpirun in place, and at the
Launcher Job's backoff limit the Job controller deletes the pod, its log with it (and
`ttlSecondsAfterFinished` then deletes the Job). Read afterwards, such a job has no
Launcher to read: "We could not tell why". The watcher therefore keeps, per job, each
failed run as it happens (`moments`): the container's termination (reason, exit code,
message) and the last lines of its log (the previous run's when a restart count moves,
the current run's when a container ends in failure), and the last state of a pod that had
failed when it is deleted. The diagnosis takes them back as the pods and log tails they
were (`ghosts`, `kept_tails`), so such a job is told as one whose pods were kept.

Pure functions: the dashboard's watch hub finds the moments and reads the logs
(training/live/hub/keepers/evidence.py), its database keeps them.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from odh.training.paths import as_dict, as_list, get_path

Obj = dict[str, Any]

TAIL_LINES = 120
STOPPED = 143  # SIGTERM: what the kubelet sends the containers of a pod being deleted
RUNS_KEPT = 3  # per pod and container: the latest failed runs


@dataclass(frozen=True)
class Moment:
    """A run of a container that ended in failure, or a failed pod that went away.

    `previous`: the run before the container's current one (read with previous=true);
    `run`: which run it was (the container's restart count then); `gone`: the pod was
    deleted (nothing to read: its last state is kept). `pod` is the compact pod as it was.
    """

    pod_name: str
    container: str
    run: int
    previous: bool
    terminated: Obj
    pod: Obj
    gone: bool = False


def _statuses(pod: Obj | None) -> dict[str, Obj]:
    return {str(as_dict(s).get("name") or ""): as_dict(s)
            for s in as_list(get_path(pod or {}, ["status", "containerStatuses"]))}


def _failed(terminated: Obj) -> bool:
    if not terminated:
        return False
    code = terminated.get("exitCode")
    if code == STOPPED:
        return False  # asked to stop, as the containers of a pod being deleted are
    return code not in (0, None) or terminated.get("reason") not in (None, "", "Completed")


def failed_here(pod: Obj) -> bool:
    """Whether a container of the pod ended in failure, now or in a run before, or the pod
    itself failed (evicted, its node lost)."""
    if get_path(pod, ["status", "phase"]) == "Failed":
        return True
    return any(_failed(as_dict(get_path(s, ["state", "terminated"]))) or
               _failed(as_dict(get_path(s, ["lastState", "terminated"])))
               for s in _statuses(pod).values())


def moments(before: Obj | None, after: Obj | None) -> list[Moment]:
    """What a change of one pod (`after` None: deleted) leaves to keep."""
    if after is None:
        if before is None or not failed_here(before):
            return []
        name = str(get_path(before, ["metadata", "name"], ""))
        return [Moment(name, "", -1, False, {}, _as_it_failed(snapshot(before)), gone=True)]
    if get_path(after, ["metadata", "deletionTimestamp"]):
        return []  # being deleted: its containers end because they are told to
    found = []
    name = str(get_path(after, ["metadata", "name"], ""))
    old = _statuses(before)
    for container, status in _statuses(after).items():
        was = old.get(container, {})
        restarts, earlier = int(status.get("restartCount") or 0), int(was.get("restartCount") or 0)
        last = as_dict(get_path(status, ["lastState", "terminated"]))
        if restarts > earlier and _failed(last):
            found.append(Moment(name, container, restarts - 1, True, last, snapshot(after)))
        ended = as_dict(get_path(status, ["state", "terminated"]))
        ended_before = as_dict(get_path(was, ["state", "terminated"]))
        if _failed(ended) and not ended_before:
            found.append(Moment(name, container, restarts, False, ended, snapshot(after)))
    return found


def _as_it_failed(pod: Obj) -> Obj:
    """A deleted pod as it was before its deletion stopped it: a container that ended with
    SIGTERM then, after a failed run, shows that failed run."""
    for status in as_list(get_path(pod, ["status", "containerStatuses"])):
        status = as_dict(status)
        ended = as_dict(get_path(status, ["state", "terminated"]))
        last = as_dict(get_path(status, ["lastState", "terminated"]))
        if ended.get("exitCode") == STOPPED and _failed(last):
            status["state"] = {"terminated": last}
    return pod


def snapshot(pod: Obj) -> Obj:
    """The pod as the diagnosis reads it, small: who it is (name, labels, owners), where
    it ran, what it asked for, and how its containers ended."""
    # a copy: the watcher's index keeps the pod itself
    meta = copy.deepcopy(as_dict(pod.get("metadata")))
    spec = copy.deepcopy(as_dict(pod.get("spec")))
    status = copy.deepcopy(as_dict(pod.get("status")))
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {key: meta[key] for key in ("name", "namespace", "uid", "labels",
                                                "annotations", "ownerReferences",
                                                "creationTimestamp") if key in meta},
        "spec": {"nodeName": spec.get("nodeName"), "restartPolicy": spec.get("restartPolicy"),
                 "nodeSelector": spec.get("nodeSelector"),
                 "containers": [{k: as_dict(c).get(k) for k in ("name", "image", "command",
                                                                "args", "resources")}
                                for c in as_list(spec.get("containers"))]},
        "status": {key: status[key] for key in ("phase", "reason", "message", "conditions",
                                                "containerStatuses", "startTime", "podIP")
                   if key in status},
    }


@dataclass(frozen=True)
class Kept:
    """One kept moment, as the dashboard stores it."""

    pod_name: str
    container: str
    run: int
    previous: bool
    pod: Obj
    log: str  # the last lines, with the runtime's timestamps ("" when none was read)
    gone: bool = False


def ghosts(live_pods: list[Obj], kept: list[Kept]) -> list[Obj]:
    """The pods the cluster no longer has, as they were last kept (a deleted pod's last
    state, else its latest failed run's)."""
    live = {str(get_path(p, ["metadata", "name"], "")) for p in live_pods}
    latest: dict[str, Kept] = {}
    for k in sorted(kept, key=lambda k: (k.gone, k.run)):
        if k.pod_name not in live:
            latest[k.pod_name] = k
    return [k.pod for k in latest.values()]


def kept_tails(live_pods: list[Obj], kept: list[Kept]) -> dict[str, str]:
    """The log tails of pods the cluster no longer has, by pod name: each one's latest
    failed run that was read."""
    live = {str(get_path(p, ["metadata", "name"], "")) for p in live_pods}
    found: dict[str, tuple[int, str]] = {}
    for k in kept:
        if k.pod_name in live or not k.log:
            continue
        if k.pod_name not in found or k.run > found[k.pod_name][0]:
            found[k.pod_name] = (k.run, k.log)
    return {pod: text for pod, (_run, text) in found.items()}


# -- kept on the job itself, for every reader ------------------------------------------------
# The dashboard's database is its own; `odh training describe`, the SDK and `kubectl
# describe` read the cluster. So the watcher also writes what it kept, small, on the job
# object (an annotation, with the watcher's service account): whoever may read the job
# reads it, and it goes with the job. Each log tail is what a container's
# `terminationMessagePolicy: FallbackToLogsOnError` would show anyone who may read its pod
# (the kubelet keeps the last 80 lines, at most 2 KiB there: 4 KiB here, with timestamps).
ANNOTATION = "opendatahub.io/kept-evidence"
ANNOTATION_LINES = 80
ANNOTATION_LOG_BYTES = 4096
ANNOTATION_BYTES = 48 * 1024  # of the API server's 256 KiB for all of an object's annotations
ANNOTATION_MOMENTS = 8


def _short_tail(text: str) -> str:
    lines = text.splitlines()[-ANNOTATION_LINES:]
    while lines and len("\n".join(lines).encode()) > ANNOTATION_LOG_BYTES:
        lines.pop(0)
    return "\n".join(lines)


def _compact(pod: Obj) -> Obj:
    """The snapshot without what a diagnosis does not read of a pod that is gone: its
    annotations and its containers' command lines."""
    pod = copy.deepcopy(pod)
    as_dict(pod.get("metadata")).pop("annotations", None)
    for container in as_list(get_path(pod, ["spec", "containers"])):
        if isinstance(container, dict):
            container.pop("command", None)
            container.pop("args", None)
    return pod


def _as_record(k: Kept) -> Obj:
    return {"pod": k.pod_name, "container": k.container, "run": k.run,
            "previous": k.previous, "gone": k.gone, "snapshot": _compact(k.pod),
            "log": _short_tail(k.log)}


def kept_on_job(job: Obj) -> list[Kept]:
    """What the watcher wrote on the job (`ANNOTATION`); nothing where it wrote nothing or
    something else is there (a person may edit a job's annotations)."""
    raw = get_path(job, ["metadata", "annotations", ANNOTATION])
    if not isinstance(raw, str):
        return []
    try:
        records = json.loads(raw)
    except ValueError:
        return []
    kept = []
    for record in as_list(records):
        record = as_dict(record)
        pod, snapshot_ = record.get("pod"), as_dict(record.get("snapshot"))
        if not isinstance(pod, str) or not pod or get_path(snapshot_, ["metadata", "name"]) != pod:
            continue
        try:
            run = int(record.get("run", 0))
        except (TypeError, ValueError):
            continue
        kept.append(Kept(pod, str(record.get("container") or ""), run,
                         bool(record.get("previous")), snapshot_, str(record.get("log") or ""),
                         bool(record.get("gone"))))
    return kept


def annotation_with(job: Obj, moment: Kept) -> str:
    """The annotation's new value: what the job carries, with `moment`; the newest
    ANNOTATION_MOMENTS that fit in ANNOTATION_BYTES (a pod's last state when it went
    away outlives its runs)."""
    key = (moment.pod_name, moment.container, moment.run)
    kept = [k for k in kept_on_job(job) if (k.pod_name, k.container, k.run) != key]
    kept.append(moment)
    records = [_as_record(k) for k in kept][-ANNOTATION_MOMENTS:]
    while True:
        text = json.dumps(records, separators=(",", ":"), sort_keys=True)
        if len(text.encode()) <= ANNOTATION_BYTES or len(records) <= 1:
            return text
        runs = [i for i, r in enumerate(records) if not r["gone"]]
        records.pop(runs[0] if runs else 0)
