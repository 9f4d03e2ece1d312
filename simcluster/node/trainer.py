"""PyTorchJob and TFJob replicas: the master or chief trains and logs, the others join it
(training.py)."""


from __future__ import annotations

import math
from collections.abc import Iterator

from simcluster.behaviour import MAX_REPLICAS
from simcluster.node import checkpoints
from simcluster.node.training_texts import (
    FATAL,
    RENDEZVOUS_LOG_SECONDS,
    WORKER_POLL_SECONDS,
    Moment,
    Timeline,
    cuda_oom_error,
    gpu_memory_mib,
    learning_rate,
    loss_curve,
    nccl_aborted,
    oom_traceback,
    owner_of,
    phase_of,
    script_name,
    traceback_lines,
    uses_gpu,
)
from simcluster.node.workloads import JOB_NAME, REPLICA_INDEX, REPLICA_TYPE, Program, Run, seeded

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
            self.owner = self.owner or (owner_of(run, kind) if self.job else None)
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
            backend = "nccl" if uses_gpu(run.pod()) else "gloo"
            run.write(f"Using distributed PyTorch with {backend} backend")
        self._rendezvous()

    @property
    def rank(self) -> int:
        name = self.run.pod_name
        return self.members.index(name) if name in self.members else 0

    def _rendezvous(self) -> None:
        run = self.run
        waiting = [m for m in self.members if phase_of(run, m) != "Running"]
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
        self.rate = rng.uniform(900, 2400) if uses_gpu(run.pod()) else rng.uniform(80, 300)
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
        loss = loss_curve(self.seed, k - 1, self.run.behaviour.epochs, self.loss0, self.loss_end)
        self.run.write(f"Train Epoch: {k} [0/60000 (0%)]\tloss={loss:.4f}")

    def _epoch_middle(self, k: int) -> None:
        if not self.failed:
            loss = loss_curve(self.seed, k - 0.5, self.run.behaviour.epochs, self.loss0,
                          self.loss_end)
            self.run.write(f"Train Epoch: {k} [30080/60000 (50%)]\tloss={loss:.4f}")

    def _epoch_end(self, k: int, seconds: float) -> None:
        if self.failed:
            return
        epochs = self.run.behaviour.epochs
        loss = loss_curve(self.seed, k, epochs, self.loss0, self.loss_end)
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
        loss = loss_curve(self.seed, b.epochs, b.epochs, self.loss0, self.loss_end)
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
            lines, code = traceback_lines(script, error), 1
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
            lines, code = traceback_lines(script, error), b.exit_code
        for line in lines:
            run.write(line)
        run.after(0.3, lambda: run.exit(code))
