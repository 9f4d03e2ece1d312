"""A person's own reading of job logs, for the SDK and the CLI: which pod is the Launcher or
Worker N of a job (of any kind), a log followed as it is written that survives dropped
connections, and several Workers' logs interleaved in time order.

Read with the person's credentials (the dashboard's shared streams, `logstreams`, use its
service account instead). A followed log that the server or the network ends while the
pod still runs is opened again from some way back and the lines already given are dropped
(`Deduper`, by timestamp), so nothing is lost or repeated; it ends when the container has
finished or the pod is gone.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator

import urllib3

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.i18n import _
from odh.training.kinds import JobKind
from odh.training.logs.logsource import FINISHED, pod_log_state
from odh.training.logs.logtext import Deduper, Line, split_line
from odh.training.status.summarize import JobPod, job_pods, summarize

RECONNECT_TAIL = 1000
BACKOFF = (0.5, 5.0)


def pod_for(cluster: ClusterClient, kind: JobKind, namespace: str, name: str,
            worker: int | None) -> JobPod:
    """Worker `worker`'s pod, or with None the job's first: the Launcher of an MPIJob, the
    Master of a PyTorchJob or TFJob (Worker 0 when it has none)."""
    owner = {"metadata": {"name": name, "namespace": namespace}}  # what its pods carry
    pods = job_pods(kind, owner, cluster.list_job_pods(namespace, name, kind))
    if worker is None:
        lead = kind.lead_role
        found = next((p for p in pods if p.role == lead), None)
        if found is None and not kind.runs_mpirun:  # an MPIJob's Workers only run sshd
            found = next((p for p in pods if p.role == "Worker" and p.index == 0), None)
        who = _("Launcher") if lead == "Launcher" else lead
    else:
        found = next((p for p in pods if p.role == "Worker" and p.index == worker), None)
        who = _("Worker %(index)d") % {"index": worker}
    if found is None:
        raise errors.NotFound(_("%(who)s of job %(namespace)s/%(name)s has no pod (yet): "
                                "check the job's status.") % {
            "who": who, "namespace": namespace, "name": name}, status=404, namespace=namespace)
    return found


def not_started(error: errors.ClusterError) -> bool:
    """The kubelet's 400 for a container that has not started yet ("container "x" in pod
    "y" is waiting to start: ContainerCreating"): its log is empty, not an error."""
    return error.status == 400 and "waiting to start" in error.message


def no_previous_run(error: errors.ClusterError) -> bool:
    """The 400 for a previous run that does not exist (the container never restarted)."""
    return error.status == 400 and "previous terminated container" in error.message


def read_text(cluster: ClusterClient, namespace: str, pod: JobPod, tail: int | None,
              previous: bool = False) -> str | None:
    """The pod's log, its crashed run's with `previous` (the run before its container
    restarted); None while its container has not started. A previous run that does not
    exist is said in plain words (NotFound)."""
    try:
        return cluster.read_log(namespace, pod.name, container=pod.container or None,
                                tail_lines=tail, previous=previous)
    except errors.ClusterError as e:
        if not_started(e) and not previous:
            return None
        if previous and (no_previous_run(e) or not_started(e)):
            raise errors.NotFound(
                _("%(pod)s has no crashed run to show: its container has not restarted.")
                % {"pod": pod_label(pod)}, status=404, namespace=namespace) from None
        raise


def pod_label(pod: JobPod) -> str:
    """"Launcher", "Worker 2": how the product names a pod."""
    if pod.label:
        return pod.label
    if pod.index is None:
        return _("Launcher") if pod.role == "Launcher" else (pod.role or pod.name)
    return _("%(role)s %(index)d") % {"role": pod.role, "index": pod.index}


def pod_expected(cluster: ClusterClient, kind: JobKind, namespace: str, name: str,
                 worker: int | None) -> bool:
    """Whether the job (NotFound: there is none) will have that pod: it has not finished
    and its spec has that Worker. A pod it never will have is an error, one it has not made
    yet is not."""
    job = cluster.get_job(kind, namespace, name)
    job.setdefault("apiVersion", kind.api_version)
    job.setdefault("kind", kind.kind)
    if summarize(job, [], None).is_finished:
        return False
    if worker is None:
        return True
    return any(role == "Worker" and worker < count
               for role, count, _gpus in kind.expected_replicas(job))


def wait_for_pod(cluster: ClusterClient, kind: JobKind, namespace: str, name: str,
                 worker: int | None, *, sleep: Callable[[float], None] = time.sleep) -> JobPod:
    """`pod_for`, waiting while the job exists but the operator has not made the pod yet
    (a job just created); NotFound once the job itself is gone."""
    delay = BACKOFF[0]
    while True:
        try:
            return pod_for(cluster, kind, namespace, name, worker)
        except errors.NotFound:
            if not pod_expected(cluster, kind, namespace, name, worker):
                raise
        sleep(delay)
        delay = min(delay * 2, BACKOFF[1])


def worker_pods(cluster: ClusterClient, kind: JobKind, namespace: str, name: str
                ) -> list[JobPod]:
    owner = {"metadata": {"name": name, "namespace": namespace}}
    return [p for p in job_pods(kind, owner, cluster.list_job_pods(namespace, name, kind))
            if p.role == "Worker"]


def _finished(cluster: ClusterClient, namespace: str, pod: str, container: str) -> bool:
    try:
        return pod_log_state(cluster.get_pod(namespace, pod), container) == FINISHED
    except errors.NotFound:
        return True


def follow_pod_lines(cluster: ClusterClient, namespace: str, pod: str, container: str = "",
                     tail: int | None = None, *,
                     sleep: Callable[[float], None] = time.sleep) -> Iterator[Line]:
    """(timestamp, text) of each line of the container's log as it is written, from the
    last `tail` lines (None: the whole log), until the container has finished."""
    seen = Deduper()
    opened = False
    delay = BACKOFF[0]
    while True:
        try:
            follow = cluster.follow_log(namespace, pod, container or None,
                                        tail_lines=RECONNECT_TAIL if opened else tail)
        except errors.NotFound:
            return
        except errors.ClusterError as e:
            # 400: the container has not started yet; 5xx or no answer: try again
            if not isinstance(e, errors.ClusterUnavailable) and e.status != 400:
                raise
            if _finished(cluster, namespace, pod, container):
                return
            sleep(delay)
            delay = min(delay * 2, BACKOFF[1])
            continue
        if opened:
            seen.rewind()
        opened = True
        try:
            for raw in follow.lines():
                stamp, text = split_line(raw)
                if seen.accept(stamp, text):
                    delay = BACKOFF[0]
                    yield stamp, text
        except (urllib3.exceptions.HTTPError, OSError, ValueError):
            pass  # the connection dropped: open it again below
        finally:
            follow.close()
        if _finished(cluster, namespace, pod, container):
            # it may have ended after the connection dropped: what it wrote meanwhile is
            # read once more (the lines already given are left out)
            rest = _read_rest(cluster, namespace, pod, container, sleep)
            seen.rewind()
            for stamp, text in rest:
                if seen.accept(stamp, text):
                    yield stamp, text
            return
        sleep(delay)
        delay = min(delay * 2, BACKOFF[1])


def _read_rest(cluster: ClusterClient, namespace: str, pod: str, container: str,
               sleep: Callable[[float], None]) -> list[Line]:
    """The log's last lines once its container has finished (a few tries: the connection
    that dropped may drop again); none when it cannot be read."""
    for attempt in range(3):
        try:
            return read_pod_lines(cluster, namespace, pod, container, RECONNECT_TAIL)
        except errors.NotFound:
            return []
        except errors.ClusterError:
            sleep(BACKOFF[0] * (attempt + 1))
    return []


def read_pod_lines(cluster: ClusterClient, namespace: str, pod: str, container: str = "",
                   tail: int | None = None) -> list[Line]:
    """(timestamp, text) of the log's last `tail` lines (None: all of it, up to the
    client's byte limit)."""
    text = cluster.read_log(namespace, pod, container=container or None, tail_lines=tail,
                            timestamps=True)
    return [split_line(raw) for raw in text.splitlines()]


def interleaved(cluster: ClusterClient, namespace: str, pods: list[JobPod], *,
                follow: bool, tail: int | None = None,
                not_yet: list[JobPod] | None = None) -> Iterator[tuple[JobPod, str]]:
    """Lines of several pods' logs with the pod each came from, in time order: without
    `follow`, all of them sorted by timestamp (a pod whose container has not started has
    none: it goes in `not_yet`); with it, as they arrive (one reader thread per pod, each
    waiting for its container), until every pod has finished."""
    if not follow:
        merged = []
        for i, p in enumerate(pods):
            try:
                lines = read_pod_lines(cluster, namespace, p.name, p.container, tail)
            except errors.ClusterError as e:
                if not not_started(e):
                    raise
                if not_yet is not None:
                    not_yet.append(p)
                continue
            merged += [(stamp, i, text) for stamp, text in lines]
        for _stamp, i, text in sorted(merged, key=lambda m: (m[0], m[1])):
            yield pods[i], text
        return
    arrived: queue.Queue = queue.Queue(maxsize=10_000)
    done = object()

    def read(pod: JobPod) -> None:
        try:
            for _stamp, text in follow_pod_lines(cluster, namespace, pod.name, pod.container,
                                                 tail):
                arrived.put((pod, text))
        except errors.ClusterError as e:
            arrived.put((pod, e))
        finally:
            arrived.put((pod, done))

    for pod in pods:
        threading.Thread(target=read, args=(pod,), daemon=True,
                         name=f"logs-{pod.name}").start()
    running = len(pods)
    while running:
        pod, item = arrived.get()
        if item is done:
            running -= 1
        elif isinstance(item, errors.ClusterError):
            raise item
        else:
            yield pod, item
