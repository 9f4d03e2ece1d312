"""sshd in MPI Workers and the mpirun launcher (OpenMPI 4 / ORTE, Horovod's horovodrun):
the launcher waits for its Workers, connects, runs the program on every rank and prints
what the real tools print, failures included (training.py)."""


from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from simcluster.behaviour import MAX_REPLICAS
from simcluster.node import checkpoints
from simcluster.node.network import Network
from simcluster.node.training_texts import (
    FATAL,
    ISTIO_INJECT,
    MAX_NP,
    ORTE_DAEMON_LAUNCH,
    RANK_LINES,
    RULE,
    SSH_REPORT_SECONDS,
    SSH_TIMEOUT_SECONDS,
    WORKER_POLL_SECONDS,
    WORKER_WAIT_SECONDS,
    Moment,
    Timeline,
    cuda_oom_error,
    gpu_memory_mib,
    learning_rate,
    loss_curve,
    nccl_aborted,
    oom_traceback,
    orte_node_died,
    owner_of,
    phase_of,
    pod_of,
    script_name,
    segfault_report,
    traceback_lines,
    uses_gpu,
)
from simcluster.node.workloads import JOB_NAME, Program, Run, seeded

Obj = dict[str, Any]


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
    mpijob = owner_of(run, "MPIJob") if job else None
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
        phases = {name: phase_of(run, name) for name, _ in self.world.workers}
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
        pods = {name: pod_of(run, name) or {} for name, _ in world.workers}
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
        first = pod_of(run, world.workers[0][0]) if world.workers else None
        gpu = uses_gpu(first or {}) or uses_gpu(run.pod())
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
        loss = loss_curve(self.seed, k - 0.5, epochs, self.loss0, self.loss_end)
        # the linear scaling rule (0.1 for a batch of 256), decayed over the run
        lr = learning_rate(0.1 * self.batch * min(self.np, 64) / 256, (k - 0.5) / epochs)
        self.run.write(self.out(0, f"Epoch {k}/{epochs} step "
                                   f"{self.steps // 2}/{self.steps}: loss {loss:.4f}, "
                                   f"lr {lr:.6f}, {self._throughput(k):.1f} img/sec"))

    def _epoch(self, k: int) -> None:
        if self.failed:
            return
        epochs = self.run.behaviour.epochs
        loss = loss_curve(self.seed, k, epochs, self.loss0, self.loss_end)
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
        loss = loss_curve(self.seed, b.epochs, b.epochs, self.loss0, self.loss_end)
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
                lines = [self.out(0, line, "stderr") for line in traceback_lines(script, error)]
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


