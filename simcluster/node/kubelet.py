"""The kubelet of every node: runs bound pods through the stage table (stages.py).

It keeps, per pod, the runtime state the table talks about (pod and container states,
restart counts, back-off levels, the program each container runs), writes the pod status
(podstatus.py) after every transition, records kubelet events, and keeps container logs
in the cluster's LogBook so `kubectl logs` (with -f and --previous) works. Every delay goes
through the cluster clock.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from simcluster.apiserver.store import Change
from simcluster.behaviour import Behaviour, behaviour_for
from simcluster.controllers.base import Controller, Key
from simcluster.node import images, podstatus, workloads
from simcluster.node.stages import DELAYS, PREDICATES, STAGES, Stage, back_off_text, validate

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

log = logging.getLogger("simcluster.node.kubelet")

Obj = dict[str, Any]
COMPONENT = "kubelet"
LONG_RUN_SECONDS = 600.0  # a run this long resets the crash-loop back-off


@dataclass
class ContainerRuntime:
    name: str
    spec: Obj
    state: str = "Waiting"
    epoch: int = 0
    pending: str = ""
    runs: int = 0
    restart_count: int = 0
    container_id: str = ""
    started_at: float = 0.0
    started_at_text: str = ""
    terminated: Obj | None = None  # the last finished run, as containerStatuses shows it
    earlier: Obj | None = None  # the run before that
    backoff_level: int = 0
    pull_failures: int = 0
    pull_seconds: float = 0.0
    crash_message: str = ""
    config_error: str = ""  # why the container's configuration cannot be made (env refs)
    stop_payload: tuple[int, str] = (143, "Error")
    program: workloads.Program | None = None
    process: Process | None = None


@dataclass
class PodRuntime:
    uid: str
    namespace: str
    name: str
    node: str
    restart_policy: str
    behaviour: Behaviour
    containers: list[ContainerRuntime]
    init_names: list[str] = field(default_factory=list)
    state: str = "Bound"
    epoch: int = 0
    pending: str = ""
    host_ip: str = ""
    pod_ip: str = ""
    start_time: str = ""
    eviction_message: str = ""
    lost_message: str = ""  # set when the node controller gave the pod up (node-lost)
    mount_failures: int = 0
    init_statuses: list[Obj] = field(default_factory=list)

    @property
    def key(self) -> Key:
        return (self.namespace, self.name)


Machine = PodRuntime | ContainerRuntime


@dataclass
class StageContext:
    """What a stage's conditions, delays and message templates see."""

    kubelet: Kubelet
    pod: PodRuntime
    container: ContainerRuntime | None = None

    def fields(self) -> dict[str, Any]:
        image = str((self.container.spec if self.container else {}).get("image") or "")
        volume, volume_error = self.kubelet.volume_problem(self.pod) or ("", "")
        return {
            "pod": self.pod.name, "namespace": self.pod.namespace, "uid": self.pod.uid,
            "node": self.pod.node,
            "container": self.container.name if self.container else "",
            "image": image,
            "pull_duration": images.go_duration(self.container.pull_seconds
                                                if self.container else 0.0),
            "image_size": images.size_bytes(image),
            "pull_error": images.pull_error(image, self.pod.behaviour.pull_error),
            "eviction_message": self.pod.eviction_message,
            "volume": volume, "volume_error": volume_error,
            "config_error": self.kubelet.config_error(self.pod, self.container),
        }


class Process:
    """One run of a container as its program sees it (workloads.Run)."""

    def __init__(self, kubelet: Kubelet, pod: PodRuntime, c: ContainerRuntime) -> None:
        self.kubelet = kubelet
        self.cluster: Cluster = kubelet.cluster
        self._pod = pod
        self._c = c
        self._run = c.runs
        self._frozen = False
        self.namespace = pod.namespace
        self.pod_name = pod.name
        self.container = c.name
        self.restart_count = c.restart_count
        self.started_at = c.started_at
        self.behaviour = pod.behaviour

    @property
    def current(self) -> bool:
        return self.kubelet.pods.get(self._pod.uid) is self._pod and self._c.runs == self._run \
            and self._c.state in ("Running", "Stopping")

    @property
    def alive(self) -> bool:
        return self.current and not self._frozen

    def pod(self) -> Obj:
        return self.cluster.store.get_raw(self.cluster.rt("pods"), self.namespace,
                                          self.pod_name) or {"metadata": {}}

    def write(self, line: str) -> None:
        if self.alive:
            self.kubelet.book.write((self.namespace, self.pod_name, self.container),
                                    self.kubelet.clock.now(), line)

    def after(self, seconds: float, fn: Callable[[], None]) -> None:
        self.kubelet.clock.call_later(seconds, lambda: fn() if self.alive else None)

    def exit(self, code: int, reason: str = "") -> None:
        if self.alive:
            self.kubelet.later(lambda: self.kubelet.container_exited(
                self._pod, self._c, self._run, code, reason))

    def freeze(self) -> None:
        self._frozen = True


class Kubelet(Controller):
    name = "kubelet"

    def __init__(self, cluster: Cluster, stages: Iterable[Stage] = STAGES) -> None:
        super().__init__(cluster)
        self.stages: tuple[Stage, ...] = tuple(stages)
        validate(self.stages)
        self.book = cluster.kubelet_logs.book
        self.pods: dict[str, PodRuntime] = {}  # by uid
        self._by_key: dict[Key, str] = {}
        self._node_images: dict[str, set[str]] = {}
        self._subnets: dict[str, int] = {}
        self._next_ip: dict[str, int] = {}
        # (namespace, job) -> clock time training began (see workloads.training_started_at)
        self.training_started: dict[tuple[str, str], float] = {}
        self._crashed_once: set[str] = set()  # pod uids that had their restart-once crash

    @classmethod
    def of(cls, cluster: Cluster) -> Kubelet | None:
        for c in cluster.manager.controllers:
            if isinstance(c, cls):
                return c
        return None

    def later(self, fn: Callable[[], None]) -> None:
        self.clock.call_later(0, fn)

    # -- watching pods ---------------------------------------------------------------------
    def watches(self) -> Iterable[tuple[str, Any]]:
        yield "/pods", self._on_pod

    @staticmethod
    def _on_pod(change: Change) -> Iterable[Key]:
        if change.type == "DELETED" or (change.obj.get("spec") or {}).get("nodeName"):
            m = change.obj["metadata"]
            yield (m.get("namespace", ""), m["name"])

    def reconcile(self, key: Key) -> float | None:
        pod = self.store.get_raw(self.rt("pods"), *key)
        uid = self._by_key.get(key)
        if uid is not None and (pod is None or pod["metadata"]["uid"] != uid):
            self._forget(self.pods[uid])
        if pod is None or not (pod.get("spec") or {}).get("nodeName"):
            return None
        rt = self.pods.get(pod["metadata"]["uid"])
        if rt is None:
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                return None
            rt = self._admit(pod)
        if pod["metadata"].get("deletionTimestamp") and rt.state not in (
                "Terminating", "Removed"):
            self.trigger(rt, rt, "delete")
        return None

    def _admit(self, pod: Obj) -> PodRuntime:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        rt = PodRuntime(
            uid=meta["uid"], namespace=meta.get("namespace", ""), name=meta["name"],
            node=spec["nodeName"], restart_policy=spec.get("restartPolicy") or "Always",
            behaviour=behaviour_for(self.cluster, pod),
            containers=[ContainerRuntime(c.get("name", f"c{i}"), c)
                        for i, c in enumerate(spec.get("containers") or [])],
            init_names=[c.get("name", "") for c in spec.get("initContainers") or []])
        self.pods[rt.uid] = rt
        self._by_key[rt.key] = rt.uid
        self._settle(rt)
        return rt

    def _forget(self, rt: PodRuntime) -> None:
        for m in [rt, *rt.containers]:
            m.epoch += 1
        self.pods.pop(rt.uid, None)
        if self._by_key.get(rt.key) == rt.uid:
            del self._by_key[rt.key]
        self.book.forget_pod(rt.namespace, rt.name)

    # -- the stage engine ------------------------------------------------------------------
    def _holds(self, stage: Stage, ctx: StageContext) -> bool:
        for w in stage.when:
            want = not w.startswith("!")
            if bool(PREDICATES[w.lstrip("!")](ctx)) != want:
                return False
        return True

    def _schedule(self, rt: PodRuntime, m: Machine) -> None:
        if m.pending:
            return
        container = m if isinstance(m, ContainerRuntime) else None
        level = "container" if container else "pod"
        ctx = StageContext(self, rt, container)
        for stage in self.stages:
            if stage.level != level or stage.on or m.state not in stage.sources or \
                    not self._holds(stage, ctx):
                continue
            delay = stage.delay if not isinstance(stage.delay, str) else \
                DELAYS[stage.delay](ctx)
            m.pending = stage.name
            self.clock.call_later(delay, lambda m=m, epoch=m.epoch, stage=stage:
                                  self._fire(rt, m, epoch, stage))
            return

    def _fire(self, rt: PodRuntime, m: Machine, epoch: int, stage: Stage) -> None:
        if self.pods.get(rt.uid) is not rt or m.epoch != epoch:
            return
        m.pending = ""
        container = m if isinstance(m, ContainerRuntime) else None
        if self._holds(stage, StageContext(self, rt, container)):
            self._apply(rt, m, stage)
        else:
            self._settle(rt)

    def trigger(self, rt: PodRuntime, m: Machine, on: str,
                payload: tuple[int, str] | None = None) -> bool:
        """Fire the first `on` stage that applies to `m` now; False if none does."""
        container = m if isinstance(m, ContainerRuntime) else None
        level = "container" if container else "pod"
        ctx = StageContext(self, rt, container)
        for stage in self.stages:
            if stage.level == level and stage.on == on and m.state in stage.sources and \
                    self._holds(stage, ctx):
                self._apply(rt, m, stage, payload)
                return True
        return False

    def _apply(self, rt: PodRuntime, m: Machine, stage: Stage,
               payload: tuple[int, str] | None = None) -> None:
        source = m.state
        m.state = stage.target
        m.epoch += 1
        m.pending = ""
        container = m if isinstance(m, ContainerRuntime) else None
        self._emit(rt, container, stage)
        if container is None:
            self._enter_pod(rt, source)
        else:
            self._enter_container(rt, container, source, payload)
        if self.pods.get(rt.uid) is rt:  # else it was just removed
            self._settle(rt)

    def _emit(self, rt: PodRuntime, container: ContainerRuntime | None, stage: Stage) -> None:
        if not stage.events:
            return
        pod = self.store.get_raw(self.rt("pods"), rt.namespace, rt.name)
        if pod is None or pod["metadata"]["uid"] != rt.uid:
            return
        fields = StageContext(self, rt, container).fields()
        for ev in stage.events:
            path = f"spec.containers{{{container.name}}}" if container and ev.container else ""
            self.events.record(pod, ev.type, ev.reason, ev.message.format(**fields),
                               ev.component or COMPONENT, field_path=path,
                               host="" if ev.component else rt.node)

    def _settle(self, rt: PodRuntime) -> None:
        """Write the status, then arm the next timed stage of the pod and its containers."""
        if rt.state != "Bound":
            self._write_status(rt)
        self._schedule(rt, rt)
        for c in rt.containers:
            self._schedule(rt, c)

    def _write_status(self, rt: PodRuntime) -> None:
        now = self.clock.timestamp()
        stored = self.store.get_raw(self.rt("pods"), rt.namespace, rt.name)
        if stored is None or stored["metadata"]["uid"] != rt.uid:
            return
        if podstatus.render(rt, stored.get("status") or {}, now) == stored.get("status"):
            return  # e.g. Waiting -> Pulling: nothing a client could see changed

        def write(pod: Obj) -> bool:
            if pod["metadata"]["uid"] != rt.uid:
                return False
            pod["status"] = podstatus.render(rt, pod.get("status") or {}, now)
            return True

        self.store.mutate(self.rt("pods"), rt.namespace, rt.name, write)

    # -- what entering a state does -----------------------------------------------------------
    def _enter_pod(self, rt: PodRuntime, source: str) -> None:
        state = rt.state
        if state == "Accepted":
            if not rt.start_time:  # not again after a failed volume mount
                rt.host_ip = self._host_ip(rt.node)
                rt.start_time = self.clock.timestamp()
        elif state == "MountWaiting":
            rt.mount_failures += 1
        elif state == "SandboxReady":
            rt.pod_ip = self._allocate_ip(rt.node)
            now = self.clock.timestamp()
            rt.init_statuses = [self._init_status(rt, name, now) for name in rt.init_names]
        elif state == "Terminating":
            for c in rt.containers:
                self.trigger(rt, c, "stop")
        elif state == "Evicted":
            for c in rt.containers:
                self.trigger(rt, c, "kill", (137, "Error"))
        elif state == "Lost":  # nothing on the node answers any more: programs go silent
            for c in rt.containers:
                if c.process is not None:
                    c.process.freeze()
        elif state == "Removed":
            self._forget(rt)
            pods = self.rt("pods")
            current = self.store.get_raw(pods, rt.namespace, rt.name)
            if current is not None and current["metadata"]["uid"] == rt.uid:
                self.store.delete(pods, rt.namespace, rt.name)

    def _enter_container(self, rt: PodRuntime, c: ContainerRuntime, source: str,
                         payload: tuple[int, str] | None) -> None:
        state = c.state
        image = str(c.spec.get("image") or "")
        if state == "Pulling":
            c.pull_seconds = images.pull_seconds(image, images.normalize(image) in
                                                 self._node_images.get(rt.node, set()))
        elif state == "ConfigError":
            if source == "Pulling":
                self._node_images.setdefault(rt.node, set()).add(images.normalize(image))
            c.config_error = self.config_error(rt, c)
        elif state == "ErrImagePull":
            c.pull_failures += 1
        elif state == "Restarting":
            c.backoff_level = 1 if source == "Terminated" else c.backoff_level + 1
        elif state == "CrashLoopBackOff":
            c.crash_message = (f"back-off {back_off_text(c.backoff_level)} restarting failed "
                               f"container={c.name} pod={rt.name}_{rt.namespace}({rt.uid})")
        elif state == "Running":
            self._start(rt, c, pulled=source == "Pulling")
        elif state == "Stopping":
            program, process = c.program, c.process
            code = program.on_sigterm(process) if program and process else 143
            c.stop_payload = (code, "")
            if process:
                process.freeze()
        elif state == "Terminated":
            code, reason = payload or c.stop_payload
            self._finish(rt, c, code, reason)

    def _start(self, rt: PodRuntime, c: ContainerRuntime, pulled: bool) -> None:
        image = images.normalize(str(c.spec.get("image") or ""))
        if pulled:
            self._node_images.setdefault(rt.node, set()).add(image)
        c.runs += 1
        if c.runs > 1:
            c.restart_count += 1
        c.crash_message = ""
        c.config_error = ""
        c.pull_failures = 0
        c.container_id = "cri-o://" + hashlib.sha256(
            f"{rt.uid}/{c.name}/{c.runs}".encode()).hexdigest()
        c.started_at = self.clock.now()
        c.started_at_text = self.clock.timestamp()
        self.book.start_run((rt.namespace, rt.name, c.name))
        c.process = Process(self, rt, c)
        pod = self.store.get_raw(self.rt("pods"), rt.namespace, rt.name) or {}
        try:
            c.program = workloads.start_program(c.process, pod, c.spec)
        except Exception:  # a program bug must not stop the kubelet: it just runs silently
            log.exception("starting the program of %s/%s/%s failed", rt.namespace, rt.name,
                          c.name)
            c.program = workloads.Forever()

    def _finish(self, rt: PodRuntime, c: ContainerRuntime, code: int, reason: str) -> None:
        if c.process is not None:
            c.process.freeze()
        nominal_run = (self.clock.now() - c.started_at) * self.clock.speed
        if nominal_run >= LONG_RUN_SECONDS:
            c.backoff_level = 0
        c.earlier = c.terminated
        c.terminated = {
            "containerID": c.container_id,
            "exitCode": code,
            "finishedAt": self.clock.timestamp(),
            "reason": reason or ("Completed" if code == 0 else "Error"),
            "startedAt": c.started_at_text,
        }
        self.book.finish((rt.namespace, rt.name, c.name))

    @staticmethod
    def _init_status(rt: PodRuntime, name: str, now: str) -> Obj:
        cid = hashlib.sha256(f"{rt.uid}/init/{name}".encode()).hexdigest()
        return {"containerID": f"cri-o://{cid}", "image": "", "imageID": "", "lastState": {},
                "name": name, "ready": True, "restartCount": 0, "started": False,
                "state": {"terminated": {"containerID": f"cri-o://{cid}", "exitCode": 0,
                                         "finishedAt": now, "reason": "Completed",
                                         "startedAt": now}}}

    # -- services for stages and programs -----------------------------------------------------
    def node(self, name: str) -> Obj | None:
        return self.store.get_raw(self.rt("nodes"), "", name)

    def phase_of(self, rt: PodRuntime) -> str:
        return podstatus.phase(rt)

    def must_pull(self, rt: PodRuntime, c: ContainerRuntime | None) -> bool:
        if c is None:
            return False
        image = str(c.spec.get("image") or "")
        policy = c.spec.get("imagePullPolicy") or (
            "Always" if images.tag(image) == "latest" else "IfNotPresent")
        if policy == "Always":
            return True
        if policy == "Never":
            return False
        return images.normalize(image) not in self._node_images.get(rt.node, set())

    def stop_seconds(self, rt: PodRuntime, c: ContainerRuntime | None) -> float:
        pod = self.store.get_raw(self.rt("pods"), rt.namespace, rt.name) or {}
        grace = pod.get("metadata", {}).get("deletionGracePeriodSeconds")
        if grace is None:
            grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        wanted = c.program.stop_seconds if c and c.program else 1.0
        return max(0.0, min(float(grace), wanted))

    def container_exited(self, rt: PodRuntime, c: ContainerRuntime, run: int, code: int,
                         reason: str) -> None:
        if self.pods.get(rt.uid) is rt and c.runs == run:
            self.trigger(rt, c, "exit", (code, reason))

    def _runtime(self, namespace: str, name: str) -> PodRuntime | None:
        uid = self._by_key.get((namespace, name))
        return self.pods.get(uid) if uid else None

    def kill(self, namespace: str, pod: str, code: int = 137, reason: str = "OOMKilled") -> None:
        """End the pod's first running container as the kernel would (e.g. OOM killer)."""
        def do() -> None:
            rt = self._runtime(namespace, pod)
            if rt is None:
                return
            for c in rt.containers:
                if c.state in ("Running", "Stopping"):
                    self.trigger(rt, c, "exit", (code, reason))
                    return
        self.later(do)

    def evict(self, namespace: str, pod: str) -> None:
        """Evict the pod as node-pressure eviction does (memory)."""
        def do() -> None:
            rt = self._runtime(namespace, pod)
            if rt is None or rt.state != "SandboxReady":
                return
            rt.eviction_message = self._eviction_message(rt)
            self.trigger(rt, rt, "evict")
        self.later(do)

    @staticmethod
    def _eviction_message(rt: PodRuntime) -> str:
        from simcluster import quantity

        c = rt.containers[0] if rt.containers else None
        name = c.name if c else "main"
        resources = (c.spec.get("resources") or {}) if c else {}
        request = (resources.get("requests") or {}).get("memory") or \
            (resources.get("limits") or {}).get("memory")
        h = int.from_bytes(hashlib.sha256(rt.uid.encode()).digest()[:4], "big")
        try:
            used_ki = int(quantity.parse(request) * 13 / 10 / 1024) if request else 0
        except quantity.QuantityError:
            used_ki = 0
        used_ki = used_ki or 2_097_152 + h % 1_048_576
        available = 30_000 + h % 70_000
        return (f"The node was low on resource: memory. Threshold quantity: 100Mi, available: "
                f"{available}Ki. Container {name} was using {used_ki}Ki, request is "
                f"{request or 0}, has larger consumption of memory. ")

    def node_lost(self, namespace: str, pod: str) -> None:
        """The pod's node stops answering: the node controller gives the pod up, as it does
        for a node that is unreachable (phase Failed, reason NodeLost, Ready False, a
        NodeNotReady event); its containers go silent. The node itself stays Ready, so other
        pods on it are not touched."""
        def do() -> None:
            rt = self._runtime(namespace, pod)
            if rt is None or rt.state not in ("Accepted", "MountWaiting", "SandboxReady"):
                return
            rt.lost_message = (f"Node {rt.node} which was running pod {rt.name} is "
                               "unresponsive")
            self.trigger(rt, rt, "lose")
        self.later(do)

    def crash_once(self, namespace: str, pod: str, line: str, code: int = 1) -> None:
        """The pod's running container writes `line` and exits `code`, once in the pod's
        life (a second call for the same pod does nothing); the restart policy decides
        what follows."""
        def do() -> None:
            rt = self._runtime(namespace, pod)
            if rt is None or rt.uid in self._crashed_once:
                return
            for c in rt.containers:
                if c.state == "Running" and c.process is not None and c.process.alive:
                    self._crashed_once.add(rt.uid)
                    c.process.write(line)
                    c.process.exit(code)
                    return
        self.later(do)

    # -- objects a pod needs before it can start ------------------------------------------
    def _object(self, plural: str, namespace: str, name: str) -> Obj | None:
        return self.store.get_raw(self.rt(plural), namespace, name) if name else None

    def volume_problem(self, rt: PodRuntime) -> tuple[str, str] | None:
        """(volume, error) for the first secret or configMap volume that cannot be set up
        (its object, or a key its items name, is missing and it is not optional)."""
        pod = self.store.get_raw(self.rt("pods"), rt.namespace, rt.name) or {}
        for v in (pod.get("spec") or {}).get("volumes") or []:
            for key_name, plural, word, name_key in (("secret", "secrets", "secret", "secretName"),
                                                  ("configMap", "configmaps", "configmap",
                                                   "name")):
                source = v.get(key_name)
                if not isinstance(source, dict) or source.get("optional"):
                    continue
                name = str(source.get(name_key) or "")
                obj = self._object(plural, rt.namespace, name)
                if obj is None:
                    return str(v.get("name", "")), f'{word} "{name}" not found'
                keys = set(obj.get("data") or {}) | set(obj.get("binaryData") or {})
                for item in source.get("items") or []:
                    if item.get("key") not in keys:
                        what = "secret references non-existent secret key" \
                            if key_name == "secret" else \
                            "configmap references non-existent config key"
                        return str(v.get("name", "")), f"{what}: {item.get('key')}"
        return None

    def config_error(self, rt: PodRuntime, c: ContainerRuntime | None) -> str:
        """Why the container's environment cannot be made, as the kubelet says it (a Secret or
        ConfigMap that `envFrom` or an env `valueFrom` names is missing, or lacks the key);
        "" when it can. References marked `optional: true` never stop a container."""
        if c is None:
            return ""
        ns = rt.namespace
        for source in c.spec.get("envFrom") or []:
            for key_name, plural, word in (("configMapRef", "configmaps", "configmap"),
                                        ("secretRef", "secrets", "secret")):
                ref = source.get(key_name)
                if isinstance(ref, dict) and not ref.get("optional"):
                    name = str(ref.get("name") or "")
                    if self._object(plural, ns, name) is None:
                        return f'{word} "{name}" not found'
        for env in c.spec.get("env") or []:
            value_from = env.get("valueFrom") or {}
            for key_name, plural, word, kind in (("configMapKeyRef", "configmaps", "configmap",
                                               "ConfigMap"),
                                              ("secretKeyRef", "secrets", "secret", "Secret")):
                ref = value_from.get(key_name)
                if not isinstance(ref, dict) or ref.get("optional"):
                    continue
                name, key = str(ref.get("name") or ""), str(ref.get("key") or "")
                obj = self._object(plural, ns, name)
                if obj is None:
                    return f'{word} "{name}" not found'
                if key not in (obj.get("data") or {}) and key not in (obj.get("binaryData")
                                                                       or {}):
                    return f"couldn't find key {key} in {kind} {ns}/{name}"
        return ""

    def write_log(self, namespace: str, pod: str, line: str, container: str = "") -> None:
        """Append a line to a running container's log (e.g. sshd noting a login)."""
        rt = self._runtime(namespace, pod)
        if rt is None:
            return
        for c in rt.containers:
            if (c.name == container or not container) and c.process is not None:
                c.process.write(line)
                return

    def pod_ip(self, namespace: str, pod: str) -> str:
        rt = self._runtime(namespace, pod)
        if rt is not None and rt.pod_ip:
            return rt.pod_ip
        obj = self.store.get_raw(self.rt("pods"), namespace, pod) or {}
        return (obj.get("status") or {}).get("podIP", "")

    def container_started_at(self, namespace: str, pod: str) -> float | None:
        rt = self._runtime(namespace, pod)
        if rt is None or not rt.containers or not rt.containers[0].runs:
            return None
        return rt.containers[0].started_at

    # -- addresses -------------------------------------------------------------------------
    def _subnet(self, node: str) -> int:
        if node not in self._subnets:
            self._subnets[node] = len(self._subnets)
        return self._subnets[node]

    def _host_ip(self, node: str) -> str:
        for a in ((self.node(node) or {}).get("status") or {}).get("addresses") or []:
            if a.get("type") == "InternalIP":
                return a["address"]
        return f"10.0.1.{10 + self._subnet(node) % 240}"

    def _allocate_ip(self, node: str) -> str:
        """OVN-Kubernetes style: each node a /23 of 10.128.0.0/14, pods from .3 up."""
        base = (10 << 24) | (128 << 16) | (self._subnet(node) * 512) % (1 << 18)
        offset = self._next_ip.get(node, 3)
        self._next_ip[node] = offset + 1 if offset < 509 else 3
        ip = base + offset
        return ".".join(str((ip >> s) & 255) for s in (24, 16, 8, 0))
