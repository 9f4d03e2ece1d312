"""What a training program leaves on its volume as it runs: a checkpoint per epoch and a
TensorBoard event file, as Hugging Face's Trainer writes them, in the directory its command
or environment names.

The directory is the first of: a flag of the program's command (`--output_dir`,
`--output-dir`, `--checkpoint_dir`, `--checkpoint-dir`, `--save_dir`, `--save-dir`), the
container's `OUTPUT_DIR` or `CHECKPOINT_DIR`, or the job's annotation
`opendatahub.io/output-path` (standing in for a configuration file the program reads). It
must lie on a PersistentVolumeClaim that the program's container mounts, or (an MPI
launcher's) that the first Worker's container mounts, where rank 0 runs; elsewhere nothing
is kept, as a container's own filesystem is lost with it.

At each epoch's end: `checkpoint-<global step>/` with `pytorch_model.bin`, `optimizer.pt`
(twice the model), `scheduler.pt`, `rng_state.pth` and `trainer_state.json` (real JSON), the
oldest removed past KEEP (`save_total_limit`); the event file
`events.out.tfevents.<start>.<host>.<pid>.0` grows by one record of real TensorBoard scalars
(`train/loss`, and `train/accuracy`, `train/learning_rate` where the program has them) at
the epoch's global step, the values the log prints (tfevents.py). At a successful end:
`pytorch_model.bin`, `config.json` and `train_results.json` at the directory's root. A
failed run keeps what it wrote until it failed.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from dataclasses import dataclass
from typing import Any

from simcluster.behaviour import owner_chain
from simcluster.node import tfevents
from simcluster.node.volumes import ClaimKey, Volumes, resolve
from simcluster.node.workloads import Run, seeded

Obj = dict[str, Any]
FLAGS = ("--output_dir", "--output-dir", "--checkpoint_dir", "--checkpoint-dir", "--save_dir",
         "--save-dir")
ENV = ("OUTPUT_DIR", "CHECKPOINT_DIR")
ANNOTATION = "opendatahub.io/output-path"
KEEP = 3


def _words(argv: list[str]) -> list[str]:
    words = list(argv)
    if argv and posixpath.basename(argv[0]) in ("sh", "bash", "ash", "dash") and "-c" in argv:
        i = argv.index("-c")
        try:
            words += shlex.split(argv[i + 1]) if i + 1 < len(argv) else []
        except ValueError:
            pass
    return words


def output_path(run: Run, argv: list[str]) -> str:
    """Where the program writes (see the module's docstring), or ""."""
    words = _words(argv)
    for i, word in enumerate(words):
        for flag in FLAGS:
            if word == flag and i + 1 < len(words):
                return words[i + 1]
            if word.startswith(flag + "="):
                return word[len(flag) + 1:]
    pod = run.pod()
    for c in (pod.get("spec") or {}).get("containers") or []:
        if c.get("name") == run.container:
            for env in c.get("env") or []:
                if env.get("name") in ENV and env.get("value"):
                    return str(env["value"])
    for obj in owner_chain(run.cluster, pod):
        value = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
        if value:
            return str(value).split(",")[0].strip()
    return ""


@dataclass
class CheckpointWriter:
    run: Run
    key: ClaimKey
    directory: str  # inside the volume
    started: float
    model_bytes: int
    host: str

    @property
    def volumes(self) -> Volumes:
        return Volumes.of(self.run.cluster)

    def _path(self, *parts: str) -> str:
        return posixpath.join(self.directory, *parts)

    @property
    def events_path(self) -> str:
        return self._path(f"events.out.tfevents.{int(self.started)}.{self.host}.1.0")

    def _events(self, now: float, step: int, scalars: list[tuple[str, float]]) -> None:
        v = self.volumes
        found = v.files(self.key).get(posixpath.normpath(self.events_path).strip("/"))
        before = found.content if found is not None and found.content else \
            tfevents.file_start(self.started)
        v.write(self.key, self.events_path, now,
                content=before + tfevents.scalars_record(now, step, scalars))

    def epoch(self, k: int, epochs: int, steps: int, loss: float,
              more: dict[str, float] | None = None) -> None:
        """Epoch `k` ended at global step k * steps with `loss` (and `more` scalars,
        `train/<name>`: what the log prints at that step)."""
        now, step = self.run.cluster.clock.now(), k * steps
        name = f"checkpoint-{step}"
        state = {"epoch": float(k), "global_step": step, "max_steps": epochs * steps,
                 "log_history": [{"epoch": float(k), "loss": round(loss, 4), "step": step}]}
        v = self.volumes
        v.write(self.key, self._path(name, "pytorch_model.bin"), now, self.model_bytes)
        v.write(self.key, self._path(name, "optimizer.pt"), now, 2 * self.model_bytes + 1391)
        v.write(self.key, self._path(name, "scheduler.pt"), now, 1064)
        v.write(self.key, self._path(name, "rng_state.pth"), now, 14583)
        v.write(self.key, self._path(name, "trainer_state.json"), now,
                content=json.dumps(state, indent=2).encode())
        self._events(now, step, [("train/loss", loss),
                                 *((f"train/{n}", x) for n, x in (more or {}).items())])
        kept = sorted((p for p, f in v.files(self.key).items()
                       if f.is_dir and posixpath.dirname(p) == self.directory
                       and posixpath.basename(p).startswith("checkpoint-")),
                      key=lambda p: int(p.rsplit("-", 1)[1]) if p.rsplit("-", 1)[1].isdigit()
                      else 0)
        for old in kept[:-KEEP]:
            v.remove_tree(self.key, old, now)

    def finish(self, epochs: int, steps: int, loss: float, seconds: float) -> None:
        now, v = self.run.cluster.clock.now(), self.volumes
        v.write(self.key, self._path("pytorch_model.bin"), now, self.model_bytes)
        v.write(self.key, self._path("config.json"), now, content=json.dumps(
            {"architectures": ["ForSequenceClassification"], "torch_dtype": "float32"},
            indent=2).encode())
        v.write(self.key, self._path("train_results.json"), now, content=json.dumps(
            {"epoch": float(epochs), "global_step": epochs * steps,
             "train_loss": round(loss, 4), "train_runtime": round(seconds, 1)},
            indent=2).encode())


def writer_for(run: Run, argv: list[str], rank0_pod: Obj | None = None
               ) -> CheckpointWriter | None:
    """A writer for the program's output directory, if it names one on a mounted claim."""
    path = output_path(run, argv)
    if not path:
        return None
    found = resolve(run.pod(), run.container, path)
    host = run.pod_name
    if found is None and rank0_pod is not None:
        containers = (rank0_pod.get("spec") or {}).get("containers") or [{}]
        found = resolve(rank0_pod, str(containers[0].get("name", "")), path)
        host = str((rank0_pod.get("metadata") or {}).get("name", host))
    if found is None:
        return None
    key, directory = found
    now = run.cluster.clock.now()
    Volumes.of(run.cluster).mkdir(key, directory, now)
    rng = seeded(run.namespace, run.pod_name, "model")
    return CheckpointWriter(run, key, directory, now, rng.randint(90, 450) * 1_048_576 + 1133,
                            host)
