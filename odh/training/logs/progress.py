"""Training progress read from a log tail: "Epoch 12 of 40, about 1h 2m 3s left".

`parse_progress(lines)` looks for the epoch and step lines that the common distributed
training stacks write, and returns a `Progress` (or None when the log says nothing we
recognise). It works best on lines read with `timestamps=True` (each line starts with the
RFC 3339 time the container runtime recorded): the estimated time left comes from the rate
between the first and the last progress points of the tail.

Recognised (after removing a timestamp and an MPI rank tag such as `[1,0]<stdout>:` from
`mpirun --tag-output` / `horovodrun`, or `[0]<stdout>:` from Gloo; when several ranks print,
rank 0 is believed; tqdm's carriage-return redraws are split and the last one counts):

| who | example | unit |
|---|---|---|
| Horovod-style epoch/step (simcluster's launcher) | `Epoch 3/40 step 250/500: loss 1.23` | epoch |
| epoch summary lines | `Epoch 3/40: loss 1.23, accuracy 0.8` | epoch |
| Keras (fit, verbose 1/2, Keras 2 and 3) | `Epoch 3/10` then `469/469 [====] - 12s ...` | epoch |
| Horovod's PyTorch MNIST example | `Train Epoch: 3 [30080/60000 (50%)]  Loss: 0.2` | epoch |
| Horovod's ImageNet examples (tqdm) | `Train Epoch     #3:  45%|####5 | 563/1251 [...]` | epoch |
| Lightning, TQDM bar (epochs from 0) | `Epoch 2:  45%|####5 | 450/1000 [01:23<...]` | epoch |
| Lightning, Rich bar (epochs from 0) | `Epoch 2/9 ━━━━━━━━ 450/1000 0:01:23 • ...` | epoch |
| DeepSpeed engine (steps_per_print) | `[Rank 0] step=120, skipped=0, lr=[...]` | step |
| Megatron-DeepSpeed | ` iteration      182/  250000 | consumed samples: ...` | step |

Lines that state no total (DeepSpeed's `step=`, Lightning's TQDM bar, Horovod's MNIST
example) take it from `total_hint` when given (see `total_hint_from_args`: `--epochs 90`,
`--max_steps 5000` in the job's command); without a total there is a current value but no
fraction and no estimate. Nothing here imports Django: the dashboard, the SDK and the CLI
share it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from odh.training.durations import parse_timestamp

if TYPE_CHECKING:
    from odh.training.kinds.base import JobKind

# REPORTED: a percentage the job reports of itself (no epoch or step; see `reported`)
EPOCH, STEP, REPORTED = "epoch", "step", "reported"


@dataclass(frozen=True)
class Progress:
    """How far training has got.

    `current` is the epoch (or step) being worked on, counted from 1 as people do;
    `done` how many units are complete, with a fraction for a partly done epoch;
    `fraction` = done / total (None without a total); `eta_seconds` the time left
    estimated at `as_of` (the last progress line's time), None when it cannot be told.
    """

    current: int
    total: int | None
    unit: str
    fraction: float | None
    eta_seconds: float | None
    done: float = 0.0
    as_of: datetime | None = None

    @property
    def percent(self) -> int | None:
        return None if self.fraction is None else int(self.fraction * 100)

    def eta_at(self, now: datetime) -> float | None:
        """The time left at `now`: the estimate less what has passed since `as_of`."""
        if self.eta_seconds is None:
            return None
        if self.as_of is None:
            return self.eta_seconds
        return max(0.0, self.eta_seconds - max(0.0, (now - self.as_of).total_seconds()))


@dataclass(frozen=True)
class _Point:
    at: datetime | None
    unit: str
    current: int
    done: float
    total: int | None
    family: str
    rank: int | None


# -- line cleaning --------------------------------------------------------------------------
_TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) ")
# mpirun --tag-output "[1,0]<stdout>:", horovodrun with Gloo "[0]<stdout>:"
_RANK_TAG = re.compile(r"^\[(?:\d+,)?(\d+)\]<(?:stdout|stderr)>:")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def split_timestamp(line: str) -> tuple[datetime | None, str]:
    """A `timestamps=True` log line as (time, text); (None, line) when it has none."""
    m = _TIMESTAMP.match(line)
    if not m:
        return None, line
    return parse_timestamp(m.group(1)), line[m.end():]


def _clean(text: str) -> tuple[int | None, str]:
    """(rank, text) with the rank tag, ANSI colours and tqdm's redraws removed."""
    rank = None
    m = _RANK_TAG.match(text)
    if m:
        rank = int(m.group(1))
        text = text[m.end():]
    text = _ANSI.sub("", text)
    if "\r" in text:  # tqdm redraws with \r: the last non-empty drawing is the newest
        parts = [p for p in text.split("\r") if p.strip()]
        text = parts[-1] if parts else ""
    return rank, text.rstrip("\n")


# -- patterns -------------------------------------------------------------------------------
_N = r"(\d+)"
_STEP_IN_EPOCH = re.compile(rf"\bEpoch {_N}/{_N},? (?:step|batch|iter(?:ation)?) {_N}/{_N}\b",
                            re.I)
_EPOCH_SUMMARY = re.compile(rf"^\s*(?:INFO[:\s]+)?Epoch\s*\[?{_N}\s*/\s*{_N}\]?\s*[:,\-|]\s*\S")
_KERAS_EPOCH = re.compile(rf"^\s*Epoch {_N}/{_N}\s*$")
# Keras 2 "469/469 [=====>....] - ETA: 3s - loss", Keras 3 "469/469 ━━━━ 12s", verbose=2
# "469/469 - 12s - loss"
_KERAS_STEP = re.compile(rf"^\s*{_N}/{_N} (?:\[[=>.]*\]|[━─╸╺ ]+\s|- \d)")
_TORCH_MNIST = re.compile(rf"\bTrain Epoch: {_N} \[{_N}/{_N} \(\d+%\)\]")
_TQDM_HOROVOD = re.compile(rf"\bTrain Epoch\s+#{_N}:\s*\d+%\|[^|]*\|\s*{_N}/{_N}\b")
_LIGHTNING_TQDM = re.compile(rf"^\s*Epoch {_N}:\s*\d+%\|[^|]*\|\s*{_N}/{_N}\b")
_LIGHTNING_RICH = re.compile(rf"^\s*Epoch {_N}(?:/{_N})?\s+[━─╸╺\- ]+\s{_N}/{_N}\b")
_DEEPSPEED = re.compile(rf"\[Rank (\d+)\] step={_N}, skipped=\d+")
_MEGATRON = re.compile(rf"^\s*iteration\s+{_N}/\s*{_N}\s*\|")


def _match(text: str, keras_epoch: tuple[int, int] | None, total_hint: int | None,
           step_hint: int | None) -> tuple[str, int, float, int | None, str] | None:
    """(unit, current, done, total, family) for one cleaned line, or None."""
    if m := _STEP_IN_EPOCH.search(text):
        k, n, s, t = (int(g) for g in m.groups())
        return EPOCH, k, k - 1 + _part(s, t), n, "epoch-step"
    if m := _KERAS_EPOCH.match(text):
        k, n = int(m.group(1)), int(m.group(2))
        return EPOCH, k, k - 1, n, "keras"
    if keras_epoch and (m := _KERAS_STEP.match(text)):
        s, t = int(m.group(1)), int(m.group(2))
        k, n = keras_epoch
        return EPOCH, k, k - 1 + _part(s, t), n, "keras"
    if m := _LIGHTNING_RICH.match(text):
        k, last, s, t = m.groups()
        total = int(last) + 1 if last is not None else total_hint
        return EPOCH, int(k) + 1, int(k) + _part(int(s), int(t)), total, "lightning"
    if m := _LIGHTNING_TQDM.match(text):
        k, s, t = (int(g) for g in m.groups())
        return EPOCH, k + 1, k + _part(s, t), total_hint, "lightning"
    if m := _TQDM_HOROVOD.search(text):
        k, s, t = (int(g) for g in m.groups())
        return EPOCH, k, k - 1 + _part(s, t), total_hint, "tqdm"
    if m := _TORCH_MNIST.search(text):
        k, s, t = (int(g) for g in m.groups())
        return EPOCH, k, k - 1 + _part(s, t), total_hint, "train-epoch"
    if m := _EPOCH_SUMMARY.match(text):
        k, n = int(m.group(1)), int(m.group(2))
        return EPOCH, k, float(k), n, "epoch-step"
    if m := _MEGATRON.match(text):
        s, t = int(m.group(1)), int(m.group(2))
        return STEP, s, float(s), t, "megatron"
    if m := _DEEPSPEED.search(text):
        s = int(m.group(2))
        return STEP, s, float(s), step_hint, "deepspeed"
    return None


def _part(s: int, t: int) -> float:
    return min(1.0, s / t) if t > 0 else 0.0


def _deepspeed_rank(text: str) -> int | None:
    m = _DEEPSPEED.search(text)
    return int(m.group(1)) if m else None


# -- the whole tail -------------------------------------------------------------------------
def progress_points(lines: Iterable[str | tuple[datetime | None, str]], *,
                    total_hint: int | None = None, step_hint: int | None = None
                    ) -> list[_Point]:
    """Every progress point in the tail, oldest first."""
    points: list[_Point] = []
    keras: dict[int | None, tuple[int, int]] = {}  # the epoch Keras announced, per rank
    for item in lines:
        at, raw = split_timestamp(item) if isinstance(item, str) else item
        for physical in raw.split("\n"):
            rank, text = _clean(physical)
            if not text:
                continue
            hit = _match(text, keras.get(rank), total_hint, step_hint)
            if hit is None:
                continue
            unit, current, done, total, family = hit
            if family == "keras" and _KERAS_EPOCH.match(text):
                keras[rank] = (current, total or 0)
            if family == "deepspeed":
                rank = _deepspeed_rank(text)
            points.append(_Point(at, unit, current, done, total, family, rank))
    return points


def parse_progress(lines: Iterable[str | tuple[datetime | None, str]], *,
                   total_hint: int | None = None, step_hint: int | None = None
                   ) -> Progress | None:
    """The job's progress from a log tail (str lines, optionally with a timestamp prefix,
    or (time, text) pairs), or None when no line shows any.

    `total_hint` is the number of epochs, `step_hint` the number of steps, for formats that
    do not print them (from the job's command: `total_hint_from_args`).
    """
    points = progress_points(lines, total_hint=total_hint, step_hint=step_hint)
    if not points:
        return None
    # believe one source: the family of the newest point, rank 0 when ranks are tagged
    family = points[-1].family
    points = [p for p in points if p.family == family]
    ranks = {p.rank for p in points}
    if len(ranks) > 1:
        chosen = 0 if 0 in ranks else points[-1].rank
        points = [p for p in points if p.rank == chosen]
    # a restart (the count went back) begins a new run: keep the points since
    start = 0
    for i in range(1, len(points)):
        if points[i].done < points[i - 1].done - 1e-9 and points[i].current < points[i - 1].current:
            start = i
    points = points[start:]
    last = points[-1]
    total = last.total
    fraction = None
    if total:
        fraction = max(0.0, min(1.0, last.done / total))
    return Progress(current=last.current, total=total, unit=last.unit, fraction=fraction,
                    eta_seconds=_eta(points, total), done=last.done, as_of=last.at)


def _eta(points: Sequence[_Point], total: int | None) -> float | None:
    """Seconds left: remaining units over the rate between the first and last point."""
    if not total:
        return None
    timed = [p for p in points if p.at is not None]
    if len(timed) < 2:
        return None
    first, last = timed[0], timed[-1]
    seconds = (last.at - first.at).total_seconds()  # type: ignore[operator]
    gained = last.done - first.done
    if seconds <= 0 or gained <= 0:
        return None
    remaining = max(0.0, total - last.done)
    return remaining / (gained / seconds)


_EPOCH_ARGS = ("--epochs", "--num-epochs", "--num_epochs", "--max-epochs", "--max_epochs",
               "--num_train_epochs", "--num-train-epochs", "--n-epochs", "--n_epochs")
_STEP_ARGS = ("--max-steps", "--max_steps", "--train-iters", "--train_iters",
              "--num-train-steps", "--num_train_steps", "--total-steps", "--total_steps")


def total_hint_from_args(argv: Sequence[str]) -> tuple[int | None, int | None]:
    """(epochs, steps) named in a command line (`--epochs 90`, `--max_steps=5000`)."""
    epochs = steps = None
    args = [str(a) for a in argv]
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if not eq:
            value = args[i + 1] if i + 1 < len(args) else ""
        if not value.isdecimal() or int(value) <= 0:
            continue
        if name in _EPOCH_ARGS and epochs is None:
            epochs = int(value)
        elif name in _STEP_ARGS and steps is None:
            steps = int(value)
    return epochs, steps


# -- which pod tells, and what its command says ------------------------------------------------
# The replica whose log carries the progress lines: the MPI launcher (rank output comes
# back through mpirun), a PyTorchJob's Master, a TFJob's Chief, else the first Worker.
_SOURCE_ROLES = ("Launcher", "Master", "Chief")


def progress_source(replicas: Sequence) -> object | None:
    """The replica (odh.training.status.pods.ReplicaState) to read progress from, or None."""
    for role in _SOURCE_ROLES:
        for r in replicas:
            if getattr(r, "role", "") == role and getattr(r, "exists", True):
                return r
    workers = [r for r in replicas if getattr(r, "role", "") == "Worker"
               and getattr(r, "exists", True)]
    workers.sort(key=lambda r: (getattr(r, "index", None) is None, getattr(r, "index", 0) or 0))
    return workers[0] if workers else None


def hints_from_job(kind: JobKind, job: dict) -> tuple[int | None, int | None]:
    """(epochs, steps) named in the command of the job's lead (its launcher, master, chief;
    a TrainJob's trainer), as its kind (odh.training.kinds.JobKind) reads its commands."""
    for argv in kind.commands(job):
        epochs, steps = total_hint_from_args(argv)
        if epochs or steps:
            return epochs, steps
    return None, None


def reported_progress(kind, job: dict) -> Progress | None:
    """How far the job's training has got as its controller reports it on the job
    (`JobKind.progress_report`), or None where it says nothing usable."""
    report = kind.progress_report(job)
    return reported(*report) if report is not None else None


def reported(percent: object, remaining: object, as_of: object) -> Progress | None:
    """The progress a job's controller reports on the job itself (a TrainJob's
    `status.trainerStatus`: a percentage and the seconds left, either may be unknown, as of
    `as_of`), or None when it reports neither. Unit REPORTED: no epoch or step is known."""
    def whole(value: object, top: int | None = None) -> int | None:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return None
        return min(value, top) if top is not None else value
    done, left = whole(percent, 100), whole(remaining)
    if done is None and left is None:
        return None
    return Progress(current=done or 0, total=100 if done is not None else None, unit=REPORTED,
                    fraction=None if done is None else done / 100,
                    eta_seconds=None if left is None else float(left), done=float(done or 0),
                    as_of=parse_timestamp(as_of if isinstance(as_of, str) else None))
