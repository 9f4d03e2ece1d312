"""The programs containers "run": chosen from the container's command and args.

| command (first word of command+args) | program |
|---|---|
| `mpirun`, `mpiexec`, `horovodrun` | MPI launcher (training.MpiLauncher) |
| `/usr/sbin/sshd`, or nothing in an MPI worker | sshd (training.Sshd), until stopped |
| nothing in an MPI launcher | the image's entrypoint, taken as `mpirun python train.py` |
| `python*`, `torchrun` | trainer (training.Trainer), exits 0 after run-seconds |
| `sleep N` | exits 0 after N seconds (`infinity`: never) |
| `true` / `false` / `echo ...` | exit 0 / exit 1 / print and exit 0 |
| `find ...`, `base64 FILE` | read the claims the pod mounts (volumes.py) |
| `sh -c "<script>"` | its `echo`, `sleep`, `true`, `false`, `exit N` in order |
| anything else, or no command | runs until stopped, printing nothing |

Failures (behaviour.py annotations) are carried out by the program that would notice them:
in a training job (pods labelled `training.kubeflow.org/job-name`) the launcher or the
master/chief drives them (training.py); in any other pod `FailureTimer` below does, counting
`failure-after-seconds` from the container's start: `oom` -> the container is OOMKilled
(exit 137), `evict` -> the pod is evicted, `exit-code` -> the container exits with that code,
`cuda-oom` -> a PyTorch CUDA out-of-memory traceback and exit 1, `segfault` -> exit 139,
`node-lost` -> the node controller gives the pod up (Failed, NodeLost), `restart-once` -> an
NCCL error and exit 1 in the container's first run only, `hang` -> the program writes
nothing more and never exits. `command-not-found` / `not-executable` replace the program:
half a second after the start the shell says `/bin/sh: 1: <program>: not found` (exit 127)
or `Permission denied` (exit 126). `image-pull` is the kubelet's.

Every delay goes through `Run.after` (the cluster clock): nothing here sleeps.
"""

from __future__ import annotations

import hashlib
import os
import random
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from simcluster.behaviour import Behaviour

if TYPE_CHECKING:
    from simcluster.cluster import Cluster
    from simcluster.node.kubelet import Kubelet

Obj = dict[str, Any]

JOB_NAME = "training.kubeflow.org/job-name"
JOB_ROLE = "training.kubeflow.org/job-role"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
OPERATOR_NAME = "training.kubeflow.org/operator-name"

SIGTERM_EXIT = 143
SHELL_FAILURES = ("command-not-found", "not-executable")
SHELL_FAILURE_SECONDS = 0.5


class Run(Protocol):
    """One run of one container, as a program sees it (implemented by the kubelet)."""

    cluster: Cluster
    kubelet: Kubelet
    namespace: str
    pod_name: str
    container: str
    restart_count: int
    started_at: float
    behaviour: Behaviour

    @property
    def alive(self) -> bool: ...

    def pod(self) -> Obj: ...

    def write(self, line: str) -> None: ...

    def after(self, seconds: float, fn: Callable[[], None]) -> None: ...

    def exit(self, code: int, reason: str = "") -> None: ...

    def freeze(self) -> None: ...


class Program:
    """A simulated process. `start` schedules its output and exit through `run`."""

    stop_seconds = 1.0  # nominal time it takes to exit after SIGTERM

    def start(self, run: Run) -> None:
        return None

    def on_sigterm(self, run: Run) -> int:
        """Called when the kubelet stops the container; returns the exit code."""
        return SIGTERM_EXIT


class Forever(Program):
    """Runs until stopped and prints nothing (a server, or a program we know nothing of)."""


class Sleep(Program):
    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds

    def start(self, run: Run) -> None:
        if self.seconds is not None:
            run.after(self.seconds, lambda: run.exit(0))


class Script(Program):
    """A tiny shell: echo, sleep, true, false, exit N (other commands are skipped)."""

    def __init__(self, steps: list[list[str]]) -> None:
        self.steps = steps

    def start(self, run: Run) -> None:
        self._step(run, 0)

    def _step(self, run: Run, i: int) -> None:
        while i < len(self.steps):
            words = self.steps[i]
            i += 1
            cmd = os.path.basename(words[0]) if words else ""
            if cmd == "echo":
                run.write(" ".join(w for w in words[1:] if w != "-n"))
            elif cmd == "sleep":
                seconds = parse_seconds(words[1:])
                if seconds is None:
                    return  # sleep infinity
                run.after(seconds, lambda i=i: self._step(run, i))
                return
            elif cmd == "false":
                run.exit(1)
                return
            elif cmd == "exit":
                run.exit(_int(words[1] if len(words) > 1 else "0", 0) % 256)
                return
        run.exit(0)


def _int(text: str, default: int) -> int:
    try:
        return int(text)
    except ValueError:
        return default


def parse_seconds(args: list[str]) -> float | None:
    """`sleep` arguments: `30`, `1.5`, `2m`, `1h`; several add up; `infinity` -> None."""
    total = 0.0
    for a in args:
        if a in ("inf", "infinity"):
            return None
        unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}.get(a[-1:], 0)
        try:
            total += float(a[:-1]) * unit if unit else float(a)
        except ValueError:
            continue
    return total


def _script_steps(script: str) -> list[list[str]]:
    steps: list[list[str]] = []
    try:
        words = shlex.split(script.replace(";", " ; ").replace("&&", " ; "))
    except ValueError:
        return steps
    current: list[str] = []
    for w in words + [";"]:
        if w == ";":
            if current:
                steps.append(current)
            current = []
        else:
            current.append(w)
    return steps


def argv_of(container: Obj) -> list[str]:
    return [str(x) for x in (container.get("command") or [])] + \
        [str(x) for x in (container.get("args") or [])]


def labels_of(pod: Obj) -> dict[str, str]:
    return pod.get("metadata", {}).get("labels") or {}


def in_training_job(pod: Obj) -> bool:
    return JOB_NAME in labels_of(pod)


# what an MPI training image's entrypoint runs when its Launcher names no command
ENTRYPOINT = ("mpirun", "python", "train.py")


def is_mpi_launcher(pod: Obj) -> bool:
    labels = labels_of(pod)
    return labels.get(JOB_ROLE) == "launcher" and labels.get(OPERATOR_NAME) == "mpi-operator"


def is_mpi_worker(pod: Obj) -> bool:
    labels = labels_of(pod)
    return labels.get(JOB_ROLE) == "worker" and labels.get(OPERATOR_NAME) == "mpi-operator"


def program_for(pod: Obj, container: Obj) -> Program:
    """The program a container runs, from its command and args (see the table above)."""
    from simcluster.node import training

    argv = argv_of(container)
    if not argv and is_mpi_launcher(pod):
        argv = list(ENTRYPOINT)
    if not argv:
        return training.Sshd() if is_mpi_worker(pod) else Forever()
    exe = os.path.basename(argv[0])
    if exe in ("sh", "bash", "ash", "dash") and "-c" in argv[1:]:
        i = argv.index("-c")
        if i + 1 < len(argv):
            steps = _script_steps(argv[i + 1])
            if steps and os.path.basename(steps[0][0]) in training.LAUNCHERS | {"sshd"} | \
                    training.TRAINERS:
                return program_for(pod, {"command": steps[0]})
            return Script(steps)
    if exe in training.LAUNCHERS:
        return training.MpiLauncher(argv)
    if exe == "sshd":
        return training.Sshd()
    if exe in training.TRAINERS or exe.startswith("python"):
        return training.Trainer(argv)
    if exe == "sleep":
        return Sleep(parse_seconds(argv[1:]))
    if exe in ("find", "base64"):
        from simcluster.node import volumes

        return volumes.Find(argv) if exe == "find" else volumes.Base64(argv)
    if exe == "true":
        return Script([["true"]])
    if exe == "false":
        return Script([["false"]])
    if exe == "echo":
        return Script([argv])
    return Forever()


def shell_error(program: str, failure: str) -> tuple[str, int]:
    """What the shell says, and exits with, when `program` cannot be run."""
    if failure == "not-executable":
        return f"/bin/sh: 1: {program}: Permission denied", 126
    return f"/bin/sh: 1: {program}: not found", 127


def shell_program(argv: list[str]) -> str:
    """The program a container's command runs in the end: argv[0], the first command of a
    `sh -c` script, or what a launcher (mpirun, horovodrun) starts."""
    from simcluster.node import training

    if not argv:
        return "sh"
    exe = os.path.basename(argv[0])
    if exe in ("sh", "bash", "ash", "dash") and "-c" in argv[1:]:
        i = argv.index("-c")
        steps = _script_steps(argv[i + 1]) if i + 1 < len(argv) else []
        if steps and steps[0]:
            return shell_program(steps[0])
    if exe in training.LAUNCHERS:
        return training.launched_program(argv)
    return argv[0]


class ShellError(Program):
    """A command the shell cannot run: it says so and exits 127 (not found) or 126."""

    def __init__(self, program: str, failure: str) -> None:
        self.line, self.code = shell_error(program, failure)

    def start(self, run: Run) -> None:
        run.after(SHELL_FAILURE_SECONDS, lambda: (run.write(self.line), run.exit(self.code)))


class FailureTimer:
    """Carries out a failure annotation in a pod that is not part of a training job."""

    FAILURES = ("oom", "evict", "exit-code", "hang", "cuda-oom", "segfault", "node-lost",
                "restart-once")

    @staticmethod
    def arm(run: Run, argv: list[str]) -> None:
        from simcluster.node import training

        b = run.behaviour
        if b.failure not in FailureTimer.FAILURES:
            return
        if b.failure == "restart-once" and run.restart_count > 0:
            return  # it failed once already; this run goes on

        def hit() -> None:
            if b.failure == "oom":
                run.exit(137, "OOMKilled")
            elif b.failure == "evict":
                run.kubelet.evict(run.namespace, run.pod_name)
            elif b.failure == "exit-code":
                run.exit(b.exit_code)
            elif b.failure == "cuda-oom":
                error = training.cuda_oom_error(training.gpu_memory_mib(run, run.pod_name),
                                                seeded(run.namespace, run.pod_name))
                for line in training.oom_traceback(training.script_name(argv), error):
                    run.write(line)
                run.exit(1)
            elif b.failure == "segfault":
                run.exit(139)
            elif b.failure == "node-lost":
                run.kubelet.node_lost(run.namespace, run.pod_name)
            elif b.failure == "restart-once":
                run.write(training.nccl_aborted(0))
                run.exit(1)
            else:
                run.freeze()

        run.after(b.failure_at, hit)


def start_program(run: Run, pod: Obj, container: Obj) -> Program:
    """Pick and start the container's program; returns it (the kubelet keeps it).

    `command-not-found` / `not-executable` hit every container that would run the
    program: the MPI launcher (for the program mpirun starts), each PyTorchJob/TFJob
    replica, a bare pod; not the sshd of MPI workers, which mpirun never got to."""
    argv = argv_of(container)
    if run.behaviour.failure in SHELL_FAILURES and not is_mpi_worker(pod):
        program: Program = ShellError(shell_program(argv), run.behaviour.failure)
    else:
        program = program_for(pod, container)
        if not in_training_job(pod):
            FailureTimer.arm(run, argv)
    program.start(run)
    return program


def seeded(*parts: str) -> random.Random:
    """A random generator that gives the same numbers for the same job every time."""
    digest = hashlib.sha256("\0".join(parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def training_started_at(cluster: Cluster, pod: Obj) -> float | None:
    """When training began for the job `pod` belongs to (clock seconds), else None.

    For a pod of a training job (label training.kubeflow.org/job-name): the moment the
    launcher (MPIJob) or master/chief (PyTorchJob/TFJob) found every replica Running and
    started its first epoch; the same for every pod of the job. For any other pod: when its
    first container started its current run. Failures annotated with
    `simcluster.io/failure-after-seconds` hit at this moment plus that many seconds
    (behaviour.Behaviour.failure_at), so a metrics source can make memory climb towards it.
    """
    from simcluster.node.kubelet import Kubelet

    kubelet = Kubelet.of(cluster)
    if kubelet is None:
        return None
    meta = pod.get("metadata", {})
    ns = meta.get("namespace", "")
    job = labels_of(pod).get(JOB_NAME)
    if job:
        return kubelet.training_started.get((ns, job))
    return kubelet.container_started_at(ns, meta.get("name", ""))
