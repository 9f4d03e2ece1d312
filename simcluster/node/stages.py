"""Every transition the kubelet makes, in one table (in the spirit of KWOK's Stage objects).

A pod and each of its containers is a small state machine. A stage says: from these states
(`sources`), when these named conditions hold (`when`; a leading `!` negates), after this
nominal delay (seconds, or the name of a function in DELAYS) move to `target` and emit
these events. A stage with `on` is not timed: it fires when that happens to the object
(the program exits, the pod is deleted or evicted). The kubelet (kubelet.py) runs the
table; what a state looks like in the pod's status is podstatus.py; what happens on
entering a state (start the program, count a restart, delete the pod) is in
Kubelet._enter_pod and Kubelet._enter_container. To add a behaviour, add a stage (tests
may give the Kubelet their own table).

Pod states: Bound -> Accepted -> SandboxReady -> Finished, or -> Terminating -> Removed
(graceful deletion), or -> Evicted, or -> Lost (its node stopped answering); Accepted ->
MountWaiting -> Accepted while a secret or configMap volume's object is missing.
Container states: Waiting -> Pulling -> Running -> Terminated, with ErrImagePull /
ImagePullBackOff, ConfigError (CreateContainerConfigError), Restarting / CrashLoopBackOff and
Stopping on the way. A container that is not Running when its pod is deleted or evicted
stays where it is: every stage that would move it on needs `sandbox_ready`. The first stage
that matches wins.

Event messages are `str.format` templates over the fields of kubelet.StageContext.fields().
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simcluster.node.images import go_duration

if TYPE_CHECKING:
    from simcluster.node.kubelet import StageContext


@dataclass(frozen=True)
class Event:
    type: str  # Normal | Warning
    reason: str
    message: str  # template
    container: bool = True  # involvedObject.fieldPath spec.containers{<name>}
    component: str = ""  # the event's source; "" is the node's kubelet


@dataclass(frozen=True)
class Stage:
    name: str
    level: str  # "pod" or "container"
    sources: tuple[str, ...]
    target: str
    delay: float | str = 0.0
    when: tuple[str, ...] = ()
    on: str = ""  # "" (timed) | "exit" | "delete" | "stop" | "evict" | "kill" | "lose"
    events: tuple[Event, ...] = ()


# -- the table ----------------------------------------------------------------------------------
CREATED_STARTED = (Event("Normal", "Created", "Created container {container}"),
                   Event("Normal", "Started", "Started container {container}"))
BEFORE_START = ("Waiting", "Restarting")

PULLED_PRESENT = Event("Normal", "Pulled", 'Container image "{image}" already present on machine')
PULLED_FRESH = Event("Normal", "Pulled",
                     'Successfully pulled image "{image}" in {pull_duration} ({pull_duration} '
                     "including waiting). Image size: {image_size} bytes.")
CONFIG_FAILED = Event("Warning", "Failed", "Error: {config_error}")
CONFIG_RETRY_SECONDS = 10.0  # the kubelet's pod worker back-off after a failed sync

STAGES: tuple[Stage, ...] = (
    # pod: the kubelet takes the bound pod, mounts its volumes, creates its sandbox, tears it
    # down when done
    Stage("pod-accepted", "pod", ("Bound",), "Accepted", 0.2, when=("node_exists",)),
    Stage("volume-mount-failed", "pod", ("Accepted",), "MountWaiting", 0.5,
          when=("!volumes_ready",),
          events=(Event("Warning", "FailedMount", 'MountVolume.SetUp failed for volume '
                        '"{volume}" : {volume_error}', container=False),)),
    Stage("volume-mount-retry", "pod", ("MountWaiting",), "Accepted", "mount_back_off"),
    Stage("sandbox-ready", "pod", ("Accepted",), "SandboxReady", "sandbox_seconds",
          when=("volumes_ready",)),
    Stage("pod-finished", "pod", ("SandboxReady",), "Finished", 0.5, when=("pod_terminal",)),
    Stage("pod-terminating", "pod",
          ("Bound", "Accepted", "MountWaiting", "SandboxReady", "Finished", "Lost"),
          "Terminating", on="delete"),
    Stage("pod-removed", "pod", ("Terminating",), "Removed", 0.5,
          when=("no_container_running",)),
    Stage("pod-evicted", "pod", ("SandboxReady",), "Evicted", on="evict",
          events=(Event("Warning", "Evicted", "{eviction_message}", container=False),)),
    Stage("node-lost", "pod", ("Accepted", "MountWaiting", "SandboxReady"), "Lost", on="lose",
          events=(Event("Warning", "NodeNotReady", "Node is not ready", container=False,
                        component="node-controller"),)),

    # container: image, then the container's configuration (env from secrets/configmaps)
    Stage("pull-image", "container", BEFORE_START, "Pulling", 0.3,
          when=("sandbox_ready", "must_pull"),
          events=(Event("Normal", "Pulling", 'Pulling image "{image}"'),)),
    Stage("image-present", "container", BEFORE_START, "Running", 0.3,
          when=("sandbox_ready", "!must_pull", "config_ready"),
          events=(PULLED_PRESENT,) + CREATED_STARTED),
    Stage("image-present-config-error", "container", BEFORE_START, "ConfigError", 0.3,
          when=("sandbox_ready", "!must_pull", "!config_ready"),
          events=(PULLED_PRESENT, CONFIG_FAILED)),
    Stage("image-pulled", "container", ("Pulling",), "Running", "pull_seconds",
          when=("sandbox_ready", "!image_pull_fails", "config_ready"),
          events=(PULLED_FRESH,) + CREATED_STARTED),
    Stage("image-pulled-config-error", "container", ("Pulling",), "ConfigError",
          "pull_seconds", when=("sandbox_ready", "!image_pull_fails", "!config_ready"),
          events=(PULLED_FRESH, CONFIG_FAILED)),
    Stage("config-retry", "container", ("ConfigError",), "Waiting", CONFIG_RETRY_SECONDS,
          when=("sandbox_ready",)),
    Stage("image-pull-failed", "container", ("Pulling",), "ErrImagePull", "pull_fail_seconds",
          when=("sandbox_ready", "image_pull_fails"),
          events=(Event("Warning", "Failed", 'Failed to pull image "{image}": {pull_error}'),
                  Event("Warning", "Failed", "Error: ErrImagePull"))),
    Stage("image-pull-back-off", "container", ("ErrImagePull",), "ImagePullBackOff", 1.0,
          when=("sandbox_ready",),
          events=(Event("Normal", "BackOff", 'Back-off pulling image "{image}"'),
                  Event("Warning", "Failed", "Error: ImagePullBackOff"))),
    Stage("image-pull-retry", "container", ("ImagePullBackOff",), "Pulling",
          "image_pull_back_off", when=("sandbox_ready",),
          events=(Event("Normal", "Pulling", 'Pulling image "{image}"'),)),

    # container: the program ends, and maybe starts again
    Stage("exited", "container", ("Running", "Stopping"), "Terminated", on="exit"),
    Stage("restart", "container", ("Terminated",), "Restarting", 1.0,
          when=("restarts", "!crash_looping")),
    Stage("crash-loop-back-off", "container", ("Terminated",), "CrashLoopBackOff", 1.0,
          when=("restarts", "crash_looping"),
          events=(Event("Warning", "BackOff", "Back-off restarting failed container "
                        "{container} in pod {pod}_{namespace}({uid})"),)),
    Stage("restart-after-back-off", "container", ("CrashLoopBackOff",), "Restarting",
          "crash_loop_back_off", when=("sandbox_ready",)),

    # container: stopped by the kubelet (deletion, eviction)
    Stage("stop", "container", ("Running",), "Stopping", on="stop",
          events=(Event("Normal", "Killing", "Stopping container {container}"),)),
    Stage("stopped", "container", ("Stopping",), "Terminated", "stop_seconds"),
    Stage("killed", "container", ("Running", "Stopping"), "Terminated", on="kill",
          events=(Event("Normal", "Killing", "Stopping container {container}"),)),
)


# -- named conditions ---------------------------------------------------------------------------
def _restarts(c: StageContext) -> bool:
    if c.pod.state != "SandboxReady" or c.container is None:
        return False
    policy = c.pod.restart_policy
    last = c.container.terminated or {}
    return policy == "Always" or (policy == "OnFailure" and last.get("exitCode", 0) != 0)


PREDICATES: dict[str, Callable[[StageContext], bool]] = {
    "node_exists": lambda c: c.kubelet.node(c.pod.node) is not None,
    "sandbox_ready": lambda c: c.pod.state == "SandboxReady",
    "pod_terminal": lambda c: c.kubelet.phase_of(c.pod) in ("Succeeded", "Failed"),
    "no_container_running": lambda c: all(
        x.state not in ("Running", "Stopping") for x in c.pod.containers),
    "must_pull": lambda c: c.kubelet.must_pull(c.pod, c.container),
    "image_pull_fails": lambda c: c.pod.behaviour.failure == "image-pull",
    "volumes_ready": lambda c: c.kubelet.volume_problem(c.pod) is None,
    "config_ready": lambda c: not c.kubelet.config_error(c.pod, c.container),
    "restarts": _restarts,
    "crash_looping": lambda c: c.container is not None and c.container.backoff_level > 0,
}


# -- named delays (nominal seconds) -------------------------------------------------------------
def _spread(c: StageContext, low: float, high: float) -> float:
    """A per-pod value in [low, high): the same pod always takes the same time."""
    h = hashlib.sha256(f"{c.pod.namespace}/{c.pod.name}".encode()).digest()[0] / 256
    return round(low + (high - low) * h, 3)


def back_off(level: int) -> float:
    """10s, 20s, 40s, ... capped at 5m: the kubelet's back-off for pulls and restarts."""
    return float(min(10 * 2 ** max(0, level - 1), 300))


def mount_back_off(level: int) -> float:
    """0.5s, 1s, 2s, ... capped at 2m2s: the volume manager's retry of a failed mount."""
    return float(min(0.5 * 2 ** max(0, level - 1), 122))


DELAYS: dict[str, Callable[[StageContext], float]] = {
    "sandbox_seconds": lambda c: _spread(c, 0.8, 2.5),
    "pull_seconds": lambda c: c.container.pull_seconds if c.container else 0.0,
    "pull_fail_seconds": lambda c: _spread(c, 1.0, 3.0),
    "image_pull_back_off": lambda c: back_off(c.container.pull_failures if c.container else 1),
    "crash_loop_back_off": lambda c: back_off(c.container.backoff_level if c.container else 1),
    "mount_back_off": lambda c: mount_back_off(c.pod.mount_failures),
    "stop_seconds": lambda c: c.kubelet.stop_seconds(c.pod, c.container),
}


def back_off_text(level: int) -> str:
    return go_duration(back_off(level))


def validate(stages: tuple[Stage, ...]) -> None:
    """Fail early on a stage naming a condition or delay that does not exist."""
    for s in stages:
        for w in s.when:
            if w.lstrip("!") not in PREDICATES:
                raise ValueError(f"stage {s.name}: unknown condition {w!r}")
        if isinstance(s.delay, str) and s.delay not in DELAYS:
            raise ValueError(f"stage {s.name}: unknown delay {s.delay!r}")
        if s.level not in ("pod", "container"):
            raise ValueError(f"stage {s.name}: level must be pod or container")
