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
(training/live/hub/evidence.py), its database keeps them.
"""

from __future__ import annotations

import copy
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
