"""What the simulated training programs share (training.py): their timelines, the pods and
owners they read, the shape of a loss curve, and the real tools' words for their failures
(ORTE's help texts, Python tracebacks, CUDA and NCCL errors, a segfault's report)."""


from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from simcluster.node.workloads import Run
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


def pod_of(run: Run, name: str) -> Obj | None:
    return run.cluster.store.get_raw(run.cluster.rt("pods"), run.namespace, name)


def phase_of(run: Run, name: str) -> str:
    pod = pod_of(run, name)
    return ((pod or {}).get("status") or {}).get("phase", "") if pod else ""


def owner_of(run: Run, kind: str) -> Obj | None:
    """The training job that owns this pod (directly or through the launcher Job)."""
    from simcluster.behaviour import owner_chain

    for obj in owner_chain(run.cluster, run.pod()):
        if obj.get("kind") == kind:
            return obj
    return None


def uses_gpu(pod: Obj) -> bool:
    return scheduling.pod_requests(pod).get(scheduling.GPU, 0) > 0


def loss_curve(rng_seed: float, k: int, epochs: int, start: float, end: float) -> float:
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


def traceback_lines(script: str, error: str) -> list[str]:
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
    pod = pod_of(run, pod_name) or {}
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


