"""Training programs: sshd in MPI workers, the mpirun launcher, PyTorch/TensorFlow trainers.

Output is deterministic per job (numbers seeded from namespace and job name): the same
job always writes the same lines. Launchers and masters carry out the job's failure
annotation (behaviour.py); what each one prints is the real tool's wording (OpenMPI 4 /
ORTE help texts, sshd, Python tracebacks).
"""

from __future__ import annotations

import heapq
import math
import os
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from simcluster.behaviour import MAX_REPLICAS
from simcluster.node import checkpoints
from simcluster.node.network import Network
from simcluster.node.workloads import JOB_NAME, REPLICA_INDEX, REPLICA_TYPE, Program, Run, seeded
from simcluster.placement import scheduling

Obj = dict[str, Any]

LAUNCHERS = frozenset({"mpirun", "mpiexec", "mpiexec.hydra", "orterun", "horovodrun"})
TRAINERS = frozenset({"python", "python3", "torchrun"})

WORKER_POLL_SECONDS = 2.0  # how often the launcher looks for its workers
SSH_REPORT_SECONDS = 10.0  # ssh gives up after ConnectionAttempts=10 (about 10 s)
WORKER_WAIT_SECONDS = 120.0  # then mpirun gives up
RENDEZVOUS_LOG_SECONDS = 10.0
SSH_TIMEOUT_SECONDS = 10.0  # a connection whose packets are dropped gives up after this
# failures that end the run at failure time (the others: before training, or never)
FATAL = ("oom", "evict", "exit-code", "cuda-oom", "segfault", "node-lost")
ISTIO_INJECT = "sidecar.istio.io/inject"
DEFAULT_GPU_MEMORY_MIB = 81920
TORCH_SITE = "/usr/local/lib/python3.11/site-packages/torch"
RANK_LINES = 32  # "Horovod rank ... started" lines before one line sums up the rest
MAX_NP = 2**31 - 1

RULE = "-" * 74
ORTE_DAEMON_LAUNCH = [
    RULE,
    "ORTE was unable to reliably start one or more daemons.",
    "This usually is caused by:",
    "",
    "* not finding the required libraries and/or binaries on",
    "  one or more nodes. Please check your PATH and LD_LIBRARY_PATH",
    "  settings, or configure OMPI with --enable-orterun-prefix-by-default",
    "",
    "* lack of authority to execute on one or more specified nodes.",
    "  Please verify your allocation and authorities.",
    "",
    "* the inability to write startup files into /tmp (--tmpdir/orte_tmpdir_base).",
    "  Please check with your sys admin to determine the correct location to use.",
    "",
    "*  compilation of the orted with dynamic libraries when static are required",
    "  (e.g., on Cray). Please check your configure cmd line and consider using",
    "  one of the contrib/platform definitions for your system type.",
    "",
    "* an inability to create a connection back to mpirun due to a",
    "  lack of common network interfaces and/or no route found between",
    "  them. Please check network connectivity (including firewalls",
    "  and network routing requirements).",
    RULE,
]


def orte_node_died(host: str) -> list[str]:
    return [RULE, "ORTE has lost communication with its daemon located on node:", "",
            f"  hostname:  {host}", "",
            "This is usually due to either a failure of the TCP network",
            "connection to the node, or possibly an internal failure of",
            "the daemon itself. We cannot recover from this failure, and",
            "therefore will terminate the job.", RULE]


Moment = tuple[float, Callable[[], None]]  # (nominal seconds after the start, what happens)


class Timeline:
    """Moments of a run, in order, with one timer pending at a time.

    `moments` are (offset, fn) sorted by offset; they may be a lazy generator, so a run of
    a thousand epochs never has thousands of timers queued. Every moment is due when it
    would have been had all been scheduled at the start (at the speed of that moment: a
    run begun during the scenario's time warp keeps its pace), and timers end with the run.
    """

    def __init__(self, run: Run, *moments: Iterable[Moment]) -> None:
        self.run = run
        self.clock = run.cluster.clock
        self.start = self.clock.now()
        self.speed = self.clock.speed
        self._moments: Iterator[Moment] = heapq.merge(*moments, key=lambda m: m[0])
        self._next()

    def _next(self) -> None:
        moment = next(self._moments, None)
        if moment is None:
            return
        offset, fn = moment
        due = self.start + max(0.0, offset) / self.speed
        self.run.after((due - self.clock.now()) * self.clock.speed, lambda: self._fire(fn))

    def _fire(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        finally:
            self._next()


def _pod(run: Run, name: str) -> Obj | None:
    return run.cluster.store.get_raw(run.cluster.rt("pods"), run.namespace, name)


def _phase(run: Run, name: str) -> str:
    pod = _pod(run, name)
    return ((pod or {}).get("status") or {}).get("phase", "") if pod else ""


def _owner(run: Run, kind: str) -> Obj | None:
    """The training job that owns this pod (directly or through the launcher Job)."""
    from simcluster.behaviour import owner_chain

    for obj in owner_chain(run.cluster, run.pod()):
        if obj.get("kind") == kind:
            return obj
    return None


def _uses_gpu(pod: Obj) -> bool:
    return scheduling.pod_requests(pod).get(scheduling.GPU, 0) > 0


def _curve(rng_seed: float, k: int, epochs: int, start: float, end: float) -> float:
    """A falling training curve with a little deterministic noise."""
    x = k / max(1, epochs)
    noise = math.sin(rng_seed * 1000 + k * 1.7) * 0.015 * start
    return end + (start - end) * math.exp(-3.2 * x) + noise * (1 - x)


def learning_rate(base: float, x: float) -> float:
    """A cosine-decayed learning rate at `x` (0 to 1) of the run, from `base`."""
    return base * 0.5 * (1 + math.cos(math.pi * min(1.0, max(0.0, x))))


def script_name(argv: list[str]) -> str:
    for a in argv:
        if a.endswith(".py"):
            return a
    return "/workspace/train.py"


def _traceback(script: str, error: str) -> list[str]:
    return ["Traceback (most recent call last):",
            f'  File "{script}", line 187, in <module>', "    main()",
            f'  File "{script}", line 171, in main', "    train(args, model, train_loader, "
            "optimizer, epoch)",
            f'  File "{script}", line 96, in train', "    loss.backward()", error]


def oom_traceback(script: str, error: str) -> list[str]:
    """A CUDA out-of-memory error raised in a model's forward pass."""
    module = f"{TORCH_SITE}/nn/modules/module.py"
    return ["Traceback (most recent call last):",
            f'  File "{script}", line 187, in <module>', "    main()",
            f'  File "{script}", line 171, in main', "    train(args, model, train_loader, "
            "optimizer, epoch)",
            f'  File "{script}", line 92, in train', "    output = model(data)",
            "             ^^^^^^^^^^^",
            f'  File "{module}", line 1736, in _wrapped_call_impl',
            "    return self._call_impl(*args, **kwargs)",
            f'  File "{module}", line 1747, in _call_impl',
            "    return forward_call(*args, **kwargs)",
            f'  File "{TORCH_SITE}/nn/modules/linear.py", line 125, in forward',
            "    return F.linear(input, self.weight, self.bias)", error]


def gpu_memory_mib(run: Run, pod_name: str) -> float:
    """The GPU memory of the node `pod_name` runs on (label nvidia.com/gpu.memory)."""
    pod = _pod(run, pod_name) or {}
    node = run.kubelet.node((pod.get("spec") or {}).get("nodeName") or "") or {}
    try:
        return float((node.get("metadata", {}).get("labels") or {}).get(
            "nvidia.com/gpu.memory", DEFAULT_GPU_MEMORY_MIB))
    except ValueError:
        return float(DEFAULT_GPU_MEMORY_MIB)


def cuda_oom_error(memory_mib: float, rng: random.Random) -> str:
    """PyTorch's `torch.OutOfMemoryError` for a GPU of `memory_mib` (numbers from `rng`):
    the capacity is what CUDA reports of the card (79.15 GiB of an 80 GB A100), and what
    the process holds adds up to it."""
    def gib(x: float) -> str:
        return f"{x:.2f} GiB"
    total = memory_mib * 0.98937 / 1024
    free = total * rng.uniform(0.006, 0.045)
    in_use = total - free - 0.01
    outside = total * rng.uniform(0.008, 0.033)  # CUDA context, NCCL buffers
    unallocated = total * rng.uniform(0.004, 0.03)
    allocated = max(0.0, in_use - outside - unallocated)
    sizes = [x for x in (2.0, 4.0, 6.0, 8.0, 12.0, 16.0, 20.0) if x > free] or [free * 2]
    tried = rng.choice(sizes[:4])
    return (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {gib(tried)}. "
            f"GPU 0 has a total capacity of {gib(total)} of which {gib(free)} is free. "
            f"Including non-PyTorch memory, this process has {gib(in_use)} memory in use. "
            f"Of the allocated memory {gib(allocated)} is allocated by PyTorch, and "
            f"{gib(unallocated)} is reserved by PyTorch but unallocated. If reserved but "
            "unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
            "documentation for Memory Management  "
            "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")


def nccl_aborted(rank: int) -> str:
    """What a rank's NCCL communicator raises when a transient fault aborts it."""
    return (f"RuntimeError: NCCL communicator was aborted on rank {rank}. Original reason "
            "for failure was: NCCL error: unhandled system error, NCCL version 2.18.1")


def segfault_report(host: str, pid: int, rng: random.Random) -> list[str]:
    """OpenMPI's signal handler report of a rank that crashed with SIGSEGV."""
    prefix = f"[{host.split('.')[0]}:{pid:05d}] "
    libc = 0x7F0000000000 + rng.randrange(0x1000000, 0xFFFFFFF) * 0x1000
    ext = libc - 0x1000000 * rng.randint(2, 40)
    py = 0x550000000000 + rng.randrange(0x1000000, 0xFFFFFFF) * 0x1000
    return [prefix + line for line in (
        "*** Process received signal ***",
        "Signal: Segmentation fault (11)",
        "Signal code: Address not mapped (1)",
        "Failing at address: 0x10",
        f"[ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x{libc + 0x42520:x}]",
        f"[ 1] /workspace/build/custom_ops.so(_Z12fused_gatherPKfPfl+0x3c)"
        f"[0x{ext + 0x1a3c:x}]",
        f"[ 2] python(_PyObject_MakeTpCall+0x26b)[0x{py + 0x14b2b:x}]",
        "*** End of error message ***")]


# -- sshd ---------------------------------------------------------------------------------------
class Sshd(Program):
    """`/usr/sbin/sshd -De`: the MPI worker's only process; mpirun reaches ranks through it."""

    def start(self, run: Run) -> None:
        run.write("Server listening on 0.0.0.0 port 22.")
        run.write("Server listening on :: port 22.")

    def on_sigterm(self, run: Run) -> int:
        run.write("Received signal 15; terminating.")
        return 255


# -- the MPI launcher ---------------------------------------------------------------------------
@dataclass
class MpiWorld:
    job: str
    namespace: str
    workers: list[tuple[str, str]] = field(default_factory=list)  # (pod name, ssh host)
    slots: int = 1
    user: str = "root"

    @property
    def hosts(self) -> list[str]:
        return [h for _, h in self.workers]


def _mpi_world(run: Run) -> MpiWorld:
    pod = run.pod()
    job = (pod["metadata"].get("labels") or {}).get(JOB_NAME, "")
    world = MpiWorld(job, run.namespace)
    mpijob = _owner(run, "MPIJob") if job else None
    if mpijob is None:
        return world
    spec = mpijob.get("spec") or {}
    world.slots = max(1, int(spec.get("slotsPerWorker") or 1))
    worker = (spec.get("mpiReplicaSpecs") or {}).get("Worker") or {}
    replicas = min(int(worker.get("replicas") or 0), MAX_REPLICAS)  # what the operator made
    world.workers = [(f"{job}-worker-{i}", f"{job}-worker-{i}.{job}.{run.namespace}.svc")
                     for i in range(replicas)]
    mount = str(spec.get("sshAuthMountPath") or "/root/.ssh").rstrip("/")
    parts = mount.split("/")
    if len(parts) >= 4 and parts[1] == "home" and parts[-1] == ".ssh":
        world.user = parts[2]
    return world


def _np(argv: list[str], default: int) -> int:
    for flag in ("-np", "-n", "--np", "-c"):
        if flag in argv:
            i = argv.index(flag)
            value = argv[i + 1] if i + 1 < len(argv) else ""
            if value.isascii() and value.isdigit():
                digits = value.lstrip("0") or "0"
                return MAX_NP if len(digits) > 10 else max(1, min(MAX_NP, int(digits)))
    return default


class MpiLauncher(Program):
    """mpirun: reach every worker over ssh, run the ranks, report like Horovod."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.tag = os.path.basename(argv[0]) == "horovodrun" or any(
            a in ("--tag-output", "-tag-output") for a in argv)
        self.waited = 0.0
        self.since_report = 0.0
        self.failed = False

    def out(self, rank: int, text: str, stream: str = "stdout") -> str:
        return f"[1,{rank}]<{stream}>:{text}" if self.tag else text

    def start(self, run: Run) -> None:
        self.run = run
        self.world = _mpi_world(run)
        self.rng = seeded(run.namespace, self.world.job or run.pod_name)
        self.np = _np(self.argv, max(1, len(self.world.workers) * self.world.slots))
        if self.world.workers and run.behaviour.failure == "mpi-connection-refused":
            run.after(1.5, self._refused)
            return
        self._poll()

    def _fail(self, lines: list[str], code: int = 1) -> None:
        for line in lines:
            self.run.write(line)
        self.run.after(0.3, lambda: self.run.exit(code))

    def _refused(self) -> None:
        host = self.world.hosts[0]
        self._fail([f"ssh: connect to host {host} port 22: Connection refused"]
                   + ORTE_DAEMON_LAUNCH)

    def _poll(self) -> None:
        run = self.run
        phases = {name: _phase(run, name) for name, _ in self.world.workers}
        for name, host in self.world.workers:
            if phases[name] in ("Failed", "Succeeded"):
                self._fail([f"ssh: connect to host {host} port 22: Connection refused"]
                           + ORTE_DAEMON_LAUNCH)
                return
        missing = [host for name, host in self.world.workers if phases[name] != "Running"]
        if not missing:
            self._connect()
            return
        if self.waited >= WORKER_WAIT_SECONDS:
            self._fail([f"ssh: Could not resolve hostname {h}: Name or service not known"
                        for h in missing] + ORTE_DAEMON_LAUNCH)
            return
        self.since_report += WORKER_POLL_SECONDS
        if self.since_report >= SSH_REPORT_SECONDS:
            self.since_report = 0.0
            for h in missing:
                run.write(f"ssh: Could not resolve hostname {h}: Name or service not known")
        self.waited += WORKER_POLL_SECONDS
        run.after(WORKER_POLL_SECONDS, self._poll)

    def _connect(self) -> None:
        """ssh to every worker; traffic a NetworkPolicy drops times out, and a worker with an
        Istio sidecar has its proxy reset the connection. Either way the daemons never
        start."""
        run, world = self.run, self.world
        me = run.pod()
        network = Network(run.cluster)
        pods = {name: _pod(run, name) or {} for name, _ in world.workers}
        dropped = [host for name, host in world.workers
                   if not network.allows(me, pods[name], 22)]
        if dropped:
            for k, host in enumerate(dropped, 1):
                run.after(SSH_TIMEOUT_SECONDS * k, lambda host=host: run.write(
                    f"ssh: connect to host {host} port 22: Connection timed out"))
            run.after(SSH_TIMEOUT_SECONDS * len(dropped) + 0.1,
                      lambda: self._fail(ORTE_DAEMON_LAUNCH))
            return
        meshed = [name for name, _ in world.workers
                  if str(((pods[name].get("metadata") or {}).get("annotations") or {}).get(
                      ISTIO_INJECT, "")).lower() == "true"]
        if meshed:
            lines: list[str] = []
            for name in meshed:
                lines += ["kex_exchange_identification: read: Connection reset by peer",
                          f"Connection reset by {run.kubelet.pod_ip(run.namespace, name)} "
                          "port 22"]
            run.after(0.5, lambda: self._fail(lines + ORTE_DAEMON_LAUNCH))
            return
        self._begin()

    def _begin(self) -> None:
        run, world, rng = self.run, self.world, self.rng
        kubelet = run.kubelet
        if world.job:
            kubelet.training_started[(run.namespace, world.job)] = run.cluster.clock.now()
        my_ip = kubelet.pod_ip(run.namespace, run.pod_name)
        fingerprint = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789+/") for _ in range(43))
        self.ports = {}
        ports = seeded(run.namespace, run.pod_name, str(run.restart_count))
        for name, host in world.workers:
            ip = kubelet.pod_ip(run.namespace, name)
            run.write(f"Warning: Permanently added '{host},{ip}' (ECDSA) to the list of known "
                      "hosts.")
            port = ports.randint(32768, 60999)
            self.ports[name] = port
            kubelet.write_log(run.namespace, name, f"Accepted publickey for {world.user} from "
                              f"{my_ip} port {port} ssh2: ECDSA SHA256:{fingerprint}")
        hosts = world.hosts or [run.pod_name]
        per_host = world.slots if world.workers else self.np
        for rank in range(min(self.np, RANK_LINES)):
            host = hosts[min(rank // per_host, len(hosts) - 1)]
            run.write(self.out(rank, f"Horovod rank {rank}/{self.np} (local rank "
                                     f"{rank % per_host}) started on {host}"))
        if self.np > RANK_LINES:  # not Horovod's: simcluster does not log every rank
            run.write(self.out(0, f"Horovod ranks {RANK_LINES}..{self.np - 1} started "
                                  f"({self.np - RANK_LINES} more ranks on {len(hosts)} "
                                  f"host(s); simcluster logs the first {RANK_LINES})"))
        first = _pod(run, world.workers[0][0]) if world.workers else None
        gpu = _uses_gpu(first or {}) or _uses_gpu(run.pod())
        self.model = rng.choice(["ResNet-50", "ResNet-101", "BERT-base", "VGG-16"])
        self.batch = rng.choice([32, 64, 128])
        self.per_rank = rng.uniform(240, 420) if gpu else rng.uniform(18, 45)
        self.loss0, self.loss_end = rng.uniform(2.2, 2.5), rng.uniform(0.18, 0.42)
        self.seed = rng.random()
        b = run.behaviour
        run.write(self.out(0, f"Model: {self.model}, batch size {self.batch} per rank, "
                              f"{self.np} ranks, {b.epochs} epochs"))
        if b.failure == "hang" and world.job:
            return  # start-up printed; the collective never completes
        self.steps = rng.choice([200, 390, 500])
        self.writer = checkpoints.writer_for(run, self.argv, first)
        epoch = b.run_seconds / b.epochs

        def epochs() -> Iterator[Moment]:
            for k in range(1, b.epochs + 1):
                yield (k - 0.5) * epoch, lambda k=k: self._step(k)
                yield k * epoch, lambda k=k: self._epoch(k)
        ends: list[Moment] = [(b.run_seconds + 0.5, self._finish)]
        if world.job and b.failure in FATAL + ("restart-once",):
            ends.insert(0, (min(b.failure_at, b.run_seconds), self._failure))
        self.timeline = Timeline(run, epochs(), sorted(ends, key=lambda m: m[0]))

    def _throughput(self, k: int) -> float:
        return self.per_rank * self.np * (1 + 0.02 * math.sin(self.seed * 77 + k))

    def _step(self, k: int) -> None:
        if self.failed:
            return
        epochs = self.run.behaviour.epochs
        loss = _curve(self.seed, k - 0.5, epochs, self.loss0, self.loss_end)
        # the linear scaling rule (0.1 for a batch of 256), decayed over the run
        lr = learning_rate(0.1 * self.batch * min(self.np, 64) / 256, (k - 0.5) / epochs)
        self.run.write(self.out(0, f"Epoch {k}/{epochs} step "
                                   f"{self.steps // 2}/{self.steps}: loss {loss:.4f}, "
                                   f"lr {lr:.6f}, {self._throughput(k):.1f} img/sec"))

    def _epoch(self, k: int) -> None:
        if self.failed:
            return
        epochs = self.run.behaviour.epochs
        loss = _curve(self.seed, k, epochs, self.loss0, self.loss_end)
        acc = min(0.995, 0.1 + 0.88 * (1 - math.exp(-3.0 * k / epochs)))
        total = self._throughput(k)
        self.run.write(self.out(0, f"Epoch {k}/{epochs}: loss {loss:.4f}, accuracy {acc:.4f}, "
                                   f"{total:.1f} img/sec ({total / self.np:.1f} img/sec per "
                                   f"rank)"))
        if self.writer is not None:
            lr = learning_rate(0.1 * self.batch * min(self.np, 64) / 256, k / epochs)
            self.writer.epoch(k, epochs, self.steps, loss,
                              {"accuracy": acc, "learning_rate": lr})

    def _finish(self) -> None:
        if self.failed:
            return
        run, b = self.run, self.run.behaviour
        loss = _curve(self.seed, b.epochs, b.epochs, self.loss0, self.loss_end)
        mean = sum(self._throughput(k) for k in range(1, b.epochs + 1)) / b.epochs
        run.write(self.out(0, f"Training complete: {b.epochs} epochs in {b.run_seconds:.1f}s, "
                              f"final loss {loss:.4f}"))
        if self.writer is not None:
            self.writer.finish(b.epochs, self.steps, loss, b.run_seconds)
        run.write(self.out(0, f"Img/sec per rank: {mean / self.np:.1f} +-"
                              f"{mean / self.np * 0.012:.1f}"))
        run.write(self.out(0, f"Total img/sec on {self.np} rank(s): {mean:.1f} +-"
                              f"{mean * 0.012:.1f}"))
        for name, _ in self.world.workers:
            port = self.ports.get(name, 0)
            ip = run.kubelet.pod_ip(run.namespace, run.pod_name)
            run.kubelet.write_log(run.namespace, name, f"Received disconnect from {ip} port "
                                  f"{port}:11: disconnected by user")
            run.kubelet.write_log(run.namespace, name, f"Disconnected from user "
                                  f"{self.world.user} {ip} port {port}")
        run.exit(0)

    def _failure(self) -> None:
        run, b, world = self.run, self.run.behaviour, self.world
        index = min(b.failure_worker, len(world.workers) - 1)
        name, host = world.workers[index] if world.workers else (run.pod_name, run.pod_name)
        rank = index * world.slots if world.workers else 0
        if b.failure == "restart-once":  # a transient fault; Horovod elastic carries on
            run.kubelet.crash_once(run.namespace, name, nccl_aborted(rank))
            return
        self.failed = True
        if not world.workers and b.failure in ("oom", "evict", "node-lost"):
            # the launcher is the only pod
            if b.failure == "oom":
                run.exit(137, "OOMKilled")
            elif b.failure == "evict":
                run.kubelet.evict(run.namespace, run.pod_name)
            else:
                run.kubelet.node_lost(run.namespace, run.pod_name)
            return
        pid = self.rng.randint(40, 400)
        if b.failure == "oom":
            run.kubelet.kill(run.namespace, name, 137, "OOMKilled")
            run.after(0.5, lambda: self._fail([
                RULE, f"mpirun noticed that process rank {rank} with PID {pid} on node {host} "
                "exited on signal 9 (Killed).", RULE]))
        elif b.failure == "evict":
            run.kubelet.evict(run.namespace, name)
            run.after(0.5, lambda: self._fail(orte_node_died(host)))
        elif b.failure == "node-lost":
            run.kubelet.node_lost(run.namespace, name)
            run.after(0.5, lambda: self._fail(orte_node_died(host)))
        elif b.failure == "segfault":
            report = [self.out(rank, line, "stderr")
                      for line in segfault_report(host, pid, self.rng)]
            self._fail(report + [
                RULE, f"mpirun noticed that process rank {rank} with PID {pid} on node {host} "
                "exited on signal 11 (Segmentation fault).", RULE], 139)
        else:
            script = script_name(self.argv)
            if b.failure == "cuda-oom":
                error = cuda_oom_error(gpu_memory_mib(run, name), self.rng)
                lines = [self.out(rank, line, "stderr")
                         for line in oom_traceback(script, error)]
                code = 1
            else:
                error = "RuntimeError: CUDA error: an illegal memory access was encountered"
                lines = [self.out(0, line, "stderr") for line in _traceback(script, error)]
                rank, code = 0, b.exit_code
            jobid = self.rng.randint(10000, 65000)
            self._fail(lines + [
                RULE, "Primary job  terminated normally, but 1 process returned",
                "a non-zero exit code. Per user-direction, the job has been aborted.", RULE,
                RULE, "mpirun detected that one or more processes exited with non-zero "
                "status, thus causing", "the job to be terminated. The first process to do "
                "so was:", "", f"  Process name: [[{jobid},1],{rank}]",
                f"  Exit code:    {code}", RULE], code)


# -- what mpirun starts -------------------------------------------------------------------------
# options of mpirun (OpenMPI 4) and horovodrun that take values, and how many
_LAUNCHER_VALUES = {
    **dict.fromkeys(("-np", "-n", "-c", "--np", "-N", "-npernode", "--npernode",
                     "-npersocket", "--npersocket", "-H", "-host", "--host", "-hosts",
                     "--hosts", "-hostfile", "--hostfile", "-machinefile", "--machinefile",
                     "-default-hostfile", "--default-hostfile", "-x", "-map-by", "--map-by",
                     "-bind-to", "--bind-to", "-rank-by", "--rank-by", "-wdir", "--wdir",
                     "-wd", "--wd", "-prefix", "--prefix", "-output-filename",
                     "--output-filename", "-p", "--ssh-port", "-i", "--ssh-identity-file",
                     "--network-interface", "--start-timeout", "--mpi-args", "--min-np",
                     "--max-np", "--slots-per-host", "--host-discovery-script",
                     "--gloo-timeout-seconds", "--log-level", "--config-file",
                     "--fusion-threshold-mb", "--cycle-time-ms", "--cache-capacity",
                     "--timeline-filename", "--autotune-log-file", "-timeout", "--timeout"),
                    1),
    **dict.fromkeys(("-mca", "--mca", "-gmca", "--gmca", "--blacklist-cooldown-range"), 2),
}


def launched_program(argv: list[str]) -> str:
    """The program mpirun / horovodrun starts: the first word after its own options (the
    launcher itself when there is none)."""
    i = 1
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-") or arg == "-":
            return arg
        i += 1 if "=" in arg else 1 + _LAUNCHER_VALUES.get(arg, 0)
    return argv[0] if argv else "mpirun"


# -- PyTorchJob / TFJob replicas ----------------------------------------------------------------
SPEC_KEYS = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs"}


class Trainer(Program):
    """`python train.py` / `torchrun`: a replica of a PyTorchJob or TFJob, or a lone script."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.failed = False
        self.waited = 0.0

    def start(self, run: Run) -> None:
        self.run = run
        labels = run.pod()["metadata"].get("labels") or {}
        self.job = labels.get(JOB_NAME, "")
        self.rtype = labels.get(REPLICA_TYPE, "").lower()
        self.index = int(labels.get(REPLICA_INDEX, "0") or 0)
        self.owner = None
        for kind in SPEC_KEYS:
            self.owner = self.owner or (_owner(run, kind) if self.job else None)
        self.kind = (self.owner or {}).get("kind", "PyTorchJob")
        specs = ((self.owner or {}).get("spec") or {}).get(SPEC_KEYS.get(self.kind, ""), {}) \
            or {}
        self.members = [f"{self.job}-{rtype.lower()}-{i}" for rtype, rs in sorted(specs.items())
                        if rtype.lower() != "evaluator"
                        for i in range(min(int((rs or {}).get("replicas") or 1),
                                           MAX_REPLICAS))]
        types = {t.lower() for t in specs}
        self.coordinator = not self.job or self.rtype in ("master", "chief") or (
            self.rtype == "worker" and self.index == 0 and not types & {"master", "chief"})
        self.rng = seeded(run.namespace, self.job or run.pod_name)
        if self.rtype == "ps":
            run.write("Started server with target: grpc://localhost:2222")
            return
        if self.kind == "PyTorchJob":
            backend = "nccl" if _uses_gpu(run.pod()) else "gloo"
            run.write(f"Using distributed PyTorch with {backend} backend")
        self._rendezvous()

    @property
    def rank(self) -> int:
        name = self.run.pod_name
        return self.members.index(name) if name in self.members else 0

    def _rendezvous(self) -> None:
        run = self.run
        waiting = [m for m in self.members if _phase(run, m) != "Running"]
        if not waiting:
            self._begin()
            return
        if self.waited % RENDEZVOUS_LOG_SECONDS == 0 and self.kind == "PyTorchJob":
            run.write(f"INFO:torch.distributed.distributed_c10d:Waiting in store based barrier "
                      f"to initialize process group for rank: {self.rank}, key: "
                      f"store_based_barrier_key:1 (world_size={len(self.members)}, "
                      f"worker_count={len(self.members) - len(waiting)}, timeout=0:30:00)")
        self.waited += WORKER_POLL_SECONDS
        run.after(WORKER_POLL_SECONDS, self._rendezvous)

    def _begin(self) -> None:
        run, b, rng = self.run, self.run.behaviour, self.rng
        world = max(1, len(self.members))
        if self.job and self.coordinator:
            run.kubelet.training_started[(run.namespace, self.job)] = run.cluster.clock.now()
        self.loss0, self.loss_end = rng.uniform(2.2, 2.4), rng.uniform(0.05, 0.3)
        self.seed = rng.random()
        self.rate = rng.uniform(900, 2400) if _uses_gpu(run.pod()) else rng.uniform(80, 300)
        if self.kind == "PyTorchJob":
            run.write(f"INFO:torch.distributed.distributed_c10d:Rank {self.rank}: Completed "
                      f"store-based barrier for key:store_based_barrier_key:1 with {world} "
                      "nodes.")
        else:
            run.write(f"INFO:tensorflow:Using MirroredStrategy with {world} replica(s)")
        failure = b.failure if self.job else ""
        if failure == "hang" or not self.coordinator:
            if failure == "hang":
                return
            if failure in FATAL:
                run.after(min(b.failure_at, b.run_seconds) + 3, self._peer_lost)
            else:
                run.after(b.run_seconds + 1, lambda: run.exit(0))
            return
        self.writer = checkpoints.writer_for(run, self.argv)
        epoch = b.run_seconds / b.epochs
        lead = min(0.1, epoch / 4)  # the epoch's first line, before its middle

        def epochs() -> Iterator[Moment]:
            for k in range(1, b.epochs + 1):
                yield (k - 1) * epoch + lead, lambda k=k: self._epoch_start(k)
                if self.kind == "PyTorchJob":
                    yield (k - 0.5) * epoch, lambda k=k: self._epoch_middle(k)
                yield k * epoch, lambda k=k: self._epoch_end(k, epoch)
        ends: list[Moment] = [(b.run_seconds + 0.5, self._finish)]
        if failure in FATAL + ("restart-once",):
            ends.insert(0, (min(b.failure_at, b.run_seconds), self._failure))
        self.timeline = Timeline(run, epochs(), sorted(ends, key=lambda m: m[0]))

    def _epoch_start(self, k: int) -> None:
        if self.failed:
            return
        if self.kind == "TFJob":
            self.run.write(f"Epoch {k}/{self.run.behaviour.epochs}")
            return
        loss = _curve(self.seed, k - 1, self.run.behaviour.epochs, self.loss0, self.loss_end)
        self.run.write(f"Train Epoch: {k} [0/60000 (0%)]\tloss={loss:.4f}")

    def _epoch_middle(self, k: int) -> None:
        if not self.failed:
            loss = _curve(self.seed, k - 0.5, self.run.behaviour.epochs, self.loss0,
                          self.loss_end)
            self.run.write(f"Train Epoch: {k} [30080/60000 (50%)]\tloss={loss:.4f}")

    def _epoch_end(self, k: int, seconds: float) -> None:
        if self.failed:
            return
        epochs = self.run.behaviour.epochs
        loss = _curve(self.seed, k, epochs, self.loss0, self.loss_end)
        acc = min(0.995, 0.3 + 0.68 * (1 - math.exp(-3.0 * k / epochs)))
        rate = self.rate * (1 + 0.02 * math.sin(self.seed * 31 + k))
        lr = learning_rate(0.001 * max(1, len(self.members)), k / epochs)
        if self.writer is not None:
            self.writer.epoch(k, epochs, 469, loss, {"accuracy": acc} if self.kind == "TFJob"
                              else {"accuracy": acc, "learning_rate": lr})
        if self.kind == "TFJob":
            per_step = seconds / 469 * 1000
            self.run.write(f"469/469 [==============================] - {seconds:.0f}s "
                           f"{per_step:.0f}ms/step - loss: {loss:.4f} - accuracy: {acc:.4f}")
            return
        self.run.write(f"Epoch {k}/{epochs}: loss={loss:.4f}, accuracy={acc:.4f}, "
                       f"lr={lr:.6f}, {rate:.1f} samples/sec")

    def _finish(self) -> None:
        if self.failed:
            return
        b = self.run.behaviour
        loss = _curve(self.seed, b.epochs, b.epochs, self.loss0, self.loss_end)
        self.run.write(f"Training complete: {b.epochs} epochs in {b.run_seconds:.1f}s, "
                       f"final loss={loss:.4f}")
        if self.writer is not None:
            self.writer.finish(b.epochs, 469, loss, b.run_seconds)
        self.run.exit(0)

    def _peer_lost(self) -> None:
        master = self.members[0] if self.members else "master"
        self.run.write(f"RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] "
                       f"Connection closed by peer [{master}]:23456")
        self.run.exit(1)

    def _failure(self) -> None:
        run, b = self.run, self.run.behaviour
        workers = [m for m in self.members if f"{self.job}-worker-" in m]
        target = workers[min(b.failure_worker, len(workers) - 1)] if workers else ""
        script = script_name(self.argv)
        if b.failure == "restart-once":  # the target's container crashes once, then goes on
            who = target or run.pod_name
            rank = self.members.index(who) if who in self.members else 0
            run.kubelet.crash_once(run.namespace, who, nccl_aborted(rank))
            return
        self.failed = True
        if b.failure in ("oom", "evict", "node-lost") and not target:
            # no workers: this replica fails
            if b.failure == "oom":
                run.exit(137, "OOMKilled")
            elif b.failure == "evict":
                run.kubelet.evict(run.namespace, run.pod_name)
            else:
                run.kubelet.node_lost(run.namespace, run.pod_name)
            return
        if b.failure in ("oom", "evict", "node-lost"):
            if b.failure == "oom":
                run.kubelet.kill(run.namespace, target, 137, "OOMKilled")
            elif b.failure == "evict":
                run.kubelet.evict(run.namespace, target)
            else:
                run.kubelet.node_lost(run.namespace, target)
            error = (f"RuntimeError: NCCL communicator was aborted on rank {self.rank}. "
                     "Original reason for failure was: NCCL error: remote process exited or "
                     "there was a network error")
            lines, code = _traceback(script, error), 1
        elif b.failure == "cuda-oom":
            error = cuda_oom_error(gpu_memory_mib(run, run.pod_name), self.rng)
            lines, code = oom_traceback(script, error), 1
        elif b.failure == "segfault":
            lines = ["Fatal Python error: Segmentation fault", "",
                     "Current thread 0x00007f3c1a9f4740 (most recent call first):",
                     f'  File "{script}", line 96 in train',
                     f'  File "{script}", line 171 in main',
                     f'  File "{script}", line 187 in <module>']
            code = 139
        else:
            error = "RuntimeError: CUDA error: an illegal memory access was encountered"
            lines, code = _traceback(script, error), b.exit_code
        for line in lines:
            run.write(line)
        run.after(0.3, lambda: run.exit(code))
