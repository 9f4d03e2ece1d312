"""Container logs as the kubelet keeps them, and the `pods/log` endpoint that serves them.

The kubelet (see kubelet.py) appends lines as its simulated programs write them; each
container run is kept separately so `previous=true` returns the run before a restart.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import web

from simcluster import errors

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

Obj = dict[str, Any]
LogKey = tuple[str, str, str]  # namespace, pod, container


@dataclass
class ContainerLog:
    lines: list[tuple[float, str]] = field(default_factory=list)
    finished: bool = False
    followers: set[asyncio.Queue] = field(default_factory=set)


class LogBook:
    def __init__(self) -> None:
        # every run of a container, oldest first; the last is the current one
        self._runs: dict[LogKey, list[ContainerLog]] = {}

    def start_run(self, key: LogKey) -> None:
        runs = self._runs.setdefault(key, [])
        if runs:
            self.finish(key)
        runs.append(ContainerLog())
        if len(runs) > 2:
            del runs[0]

    def write(self, key: LogKey, at: float, line: str) -> None:
        runs = self._runs.get(key)
        if not runs:
            self.start_run(key)
            runs = self._runs[key]
        log = runs[-1]
        log.lines.append((at, line))
        for q in list(log.followers):
            q.put_nowait((at, line))

    def finish(self, key: LogKey) -> None:
        runs = self._runs.get(key)
        if not runs or runs[-1].finished:
            return
        runs[-1].finished = True
        for q in list(runs[-1].followers):
            q.put_nowait(None)

    def forget_pod(self, namespace: str, pod: str) -> None:
        for key in [k for k in self._runs if k[0] == namespace and k[1] == pod]:
            self.finish(key)
            del self._runs[key]

    def current(self, key: LogKey) -> ContainerLog | None:
        runs = self._runs.get(key)
        return runs[-1] if runs else None

    def previous(self, key: LogKey) -> ContainerLog | None:
        runs = self._runs.get(key)
        return runs[-2] if runs and len(runs) > 1 else None


def _format(at: float, line: str, timestamps: bool) -> str:
    if not timestamps:
        return line + "\n"
    ts = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z"
    return f"{ts} {line}\n"


def _int_param(request: web.Request, name: str) -> int | None:
    value = request.query.get(name)
    if value is None or value == "":
        return None
    try:
        n = int(value)
    except ValueError:
        raise errors.bad_request(f'{name}: Invalid value: "{value}": must be an integer') \
            from None
    if n < 0 or (n == 0 and name != "tailLines"):
        raise errors.ApiError(422, "Invalid", f'PodLogOptions "" is invalid: {name}: Invalid '
                              f'value: {n}: must be greater than 0')
    return n


class LogServer:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.book = LogBook()

    def _container(self, pod: Obj, requested: str | None) -> str:
        spec = pod.get("spec") or {}
        names = [c["name"] for c in spec.get("containers") or []]
        init = [c["name"] for c in spec.get("initContainers") or []]
        name = pod["metadata"]["name"]
        if requested:
            if requested not in names + init:
                raise errors.bad_request(
                    f"container {requested} is not valid for pod {name}")
            return requested
        if len(names) == 1:
            return names[0]
        default = (pod["metadata"].get("annotations") or {}).get(
            "kubectl.kubernetes.io/default-container")
        if default in names:
            return default
        raise errors.bad_request(
            f"a container name must be specified for pod {name}, choose one of: "
            f"[{' '.join(names)}]" + (f" or one of the init containers: [{' '.join(init)}]"
                                       if init else ""))

    async def serve(self, request: web.Request, namespace: str, name: str) -> web.StreamResponse:
        pods_rt = self.cluster.rt("pods")
        pod = self.cluster.store.get_raw(pods_rt, namespace, name)
        if pod is None:
            raise errors.not_found(pods_rt, name)
        q = request.query
        container = self._container(pod, q.get("container"))
        follow = q.get("follow", "").lower() in ("1", "true")
        previous = q.get("previous", "").lower() in ("1", "true")
        timestamps = q.get("timestamps", "").lower() in ("1", "true")
        tail = _int_param(request, "tailLines")
        since = _int_param(request, "sinceSeconds")
        limit_bytes = _int_param(request, "limitBytes")
        key = (namespace, name, container)
        if previous:
            log = self.book.previous(key)
            if log is None:
                raise errors.bad_request(
                    f'previous terminated container "{container}" in pod "{name}" not found')
            follow = False
        else:
            log = self.book.current(key)
            if log is None:
                waiting = self._waiting_reason(pod, container)
                raise errors.bad_request(
                    f'container "{container}" in pod "{name}" is waiting to start: {waiting}')
        lines = log.lines
        if since is not None:
            cutoff = self.cluster.clock.now() - since
            lines = [entry for entry in lines if entry[0] >= cutoff]
        if tail is not None:
            lines = lines[-tail:] if tail > 0 else []
        text = "".join(_format(at, line, timestamps) for at, line in lines)
        if limit_bytes is not None:
            text = text.encode()[:limit_bytes].decode(errors="ignore")
        if not follow or log.finished:
            return web.Response(text=text, content_type="text/plain")
        resp = web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
        resp.enable_chunked_encoding()
        queue: asyncio.Queue = asyncio.Queue()
        log.followers.add(queue)
        sent = len(text.encode())
        try:
            await resp.prepare(request)
            if text:
                await resp.write(text.encode())
            while True:
                item = await queue.get()
                if item is None:
                    break
                chunk = _format(item[0], item[1], timestamps).encode()
                if limit_bytes is not None:
                    chunk = chunk[:max(0, limit_bytes - sent)]
                if chunk:
                    await resp.write(chunk)
                    sent += len(chunk)
                if limit_bytes is not None and sent >= limit_bytes:
                    break
            await resp.write_eof()
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            log.followers.discard(queue)
        return resp

    @staticmethod
    def _waiting_reason(pod: Obj, container: str) -> str:
        for cs in (pod.get("status") or {}).get("containerStatuses") or []:
            if cs.get("name") == container:
                waiting = (cs.get("state") or {}).get("waiting")
                if waiting:
                    return waiting.get("reason", "ContainerCreating")
        return "ContainerCreating"
