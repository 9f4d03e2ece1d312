"""How the kubelet's view of a pod is written into `pod.status`, as kubelet 1.31 writes it.

Conditions come in the kubelet's order (PodReadyToStartContainers, Initialized, Ready,
ContainersReady), then the scheduler's PodScheduled; an evicted pod's DisruptionTarget
comes first. A condition keeps its lastTransitionTime while its status stays the same.
The phase follows the kubelet's getPhase(). A pod whose node was lost is written as the
node controller writes it: the last status the kubelet reported, with phase Failed, reason
NodeLost and the Ready condition False.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simcluster.node import images

if TYPE_CHECKING:
    from simcluster.node.kubelet import ContainerRuntime, PodRuntime

Obj = dict[str, Any]

KUBELET_CONDITIONS = ("DisruptionTarget", "PodReadyToStartContainers", "Initialized", "Ready",
                      "ContainersReady")
WAITING_FOR_START = ("Waiting", "Pulling", "Restarting")
RUNNING = ("Running", "Stopping")


def _running_view(c: ContainerRuntime) -> Obj:
    return {"running": {"startedAt": c.started_at_text}}


def container_status(pod: PodRuntime, c: ContainerRuntime) -> Obj:
    spec_image = str(c.spec.get("image") or "")
    ran = c.runs > 0
    state: Obj
    last: Obj = {}
    if c.state in RUNNING:
        state = _running_view(c)
        if c.terminated:
            last = {"terminated": dict(c.terminated)}
    elif c.state == "Terminated" or (c.state in WAITING_FOR_START and ran and
                                     not c.crash_message and not c.config_error):
        state = {"terminated": dict(c.terminated or {})}
        if c.earlier:
            last = {"terminated": dict(c.earlier)}
    else:
        waiting: Obj
        if c.state == "ConfigError" or (c.state in WAITING_FOR_START and c.config_error):
            waiting = {"reason": "CreateContainerConfigError", "message": c.config_error}
        elif c.state == "CrashLoopBackOff" or (c.state in WAITING_FOR_START and
                                               c.crash_message):
            waiting = {"reason": "CrashLoopBackOff", "message": c.crash_message}
        elif c.state == "ErrImagePull":
            waiting = {"reason": "ErrImagePull",
                       "message": images.pull_error(spec_image, pod.behaviour.pull_error)}
        elif c.state == "ImagePullBackOff" or (c.state == "Pulling" and c.pull_failures):
            waiting = {"reason": "ImagePullBackOff",
                       "message": f'Back-off pulling image "{spec_image}"'}
        else:
            waiting = {"reason": "ContainerCreating"}
        state = {"waiting": waiting}
        if c.terminated:
            last = {"terminated": dict(c.terminated)}
    status: Obj = {
        "image": images.normalize(spec_image) if ran else spec_image,
        "imageID": images.image_id(spec_image) if ran else "",
        "lastState": last,
        "name": c.name,
        "ready": c.state in RUNNING,
        "restartCount": c.restart_count,
        "started": c.state in RUNNING,
        "state": state,
    }
    if c.container_id:
        status["containerID"] = c.container_id
    return {k: status[k] for k in sorted(status)}


def phase(pod: PodRuntime, statuses: list[Obj] | None = None) -> str:
    """kubelet getPhase(): from the container statuses and the restart policy."""
    if pod.state == "Evicted" or pod.lost_message:
        return "Failed"
    if pod.state in ("Bound", "Accepted", "MountWaiting"):
        return "Pending"
    statuses = statuses if statuses is not None else [container_status(pod, c)
                                                      for c in pod.containers]
    running = stopped = succeeded = waiting = 0
    for st in statuses:
        state = st["state"]
        if "running" in state:
            running += 1
        elif "terminated" in state:
            stopped += 1
            if state["terminated"].get("exitCode") == 0:
                succeeded += 1
        elif st["lastState"].get("terminated"):
            stopped += 1
        else:
            waiting += 1
    policy = pod.restart_policy
    if waiting > 0:
        return "Pending"
    if running > 0:
        return "Running"
    if stopped > 0:
        if policy == "Always":
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        if policy == "Never":
            return "Failed"
        return "Running"
    return "Pending"


def _conditions(pod: PodRuntime, statuses: list[Obj], ph: str) -> list[Obj]:
    conds: list[Obj] = []
    if pod.eviction_message:
        conds.append({"type": "DisruptionTarget", "status": "True",
                      "reason": "TerminationByKubelet", "message": pod.eviction_message})
    sandbox = pod.state in ("SandboxReady", "Terminating") and bool(pod.pod_ip)
    conds.append({"type": "PodReadyToStartContainers", "status": "True" if sandbox else "False"})
    initialized: Obj = {"type": "Initialized", "status": "True"}
    if pod.init_names and not pod.init_statuses:
        initialized = {"type": "Initialized", "status": "False",
                       "reason": "ContainersNotInitialized",
                       "message": "containers with incomplete status: "
                                  f"[{' '.join(pod.init_names)}]"}
    elif ph == "Succeeded":
        initialized["reason"] = "PodCompleted"
    conds.append(initialized)
    unready = [st["name"] for st in statuses if not st["ready"]]
    for ctype in ("Ready", "ContainersReady"):
        if ph == "Succeeded":
            conds.append({"type": ctype, "status": "False", "reason": "PodCompleted"})
        elif ph == "Failed":
            conds.append({"type": ctype, "status": "False", "reason": "PodFailed"})
        elif unready:
            conds.append({"type": ctype, "status": "False", "reason": "ContainersNotReady",
                          "message": f"containers with unready status: [{' '.join(unready)}]"})
        else:
            conds.append({"type": ctype, "status": "True"})
    return conds


def _lost(pod: PodRuntime, old: Obj, now: str) -> Obj:
    """What the node controller writes over the last status of a pod on a lost node."""
    status = dict(old)
    conditions = []
    for c in old.get("conditions") or []:
        if c.get("type") == "Ready" and c.get("status") != "False":
            c = {**c, "status": "False", "lastTransitionTime": now}
        conditions.append(c)
    status.update({"phase": "Failed", "conditions": conditions, "reason": "NodeLost",
                   "message": pod.lost_message})
    return status


def render(pod: PodRuntime, old: Obj, now: str) -> Obj:
    """The pod's new status, given its current one (scheduler-owned parts are kept)."""
    if pod.lost_message:
        return _lost(pod, old, now)
    statuses = [container_status(pod, c) for c in pod.containers]
    ph = phase(pod, statuses)
    previous = {c.get("type"): c for c in old.get("conditions") or []}
    conditions = []
    for cond in _conditions(pod, statuses, ph):
        before = previous.get(cond["type"])
        changed = before is None or before.get("status") != cond["status"]
        conditions.append({**cond, "lastProbeTime": None,
                           "lastTransitionTime": now if changed else
                           before.get("lastTransitionTime", now)})
    conditions += [c for c in old.get("conditions") or []
                   if c.get("type") not in KUBELET_CONDITIONS]
    status: Obj = {k: v for k, v in old.items()
                   if k in ("qosClass", "nominatedNodeName")}
    status.update({"phase": ph, "conditions": conditions, "containerStatuses": statuses})
    if pod.host_ip:
        status["hostIP"] = pod.host_ip
        status["hostIPs"] = [{"ip": pod.host_ip}]
    if pod.pod_ip:
        status["podIP"] = pod.pod_ip
        status["podIPs"] = [{"ip": pod.pod_ip}]
    if pod.start_time:
        status["startTime"] = pod.start_time
    if pod.eviction_message:
        status["reason"] = "Evicted"
        status["message"] = pod.eviction_message
    if pod.init_statuses:
        status["initContainerStatuses"] = pod.init_statuses
    return status
