"""Training curves read from a job's lead log: loss, accuracy, throughput, learning rate...
by step and by epoch.

`CurveReader.feed(lines)` reads log lines (with or without the `timestamps=True` prefix)
and keeps, per metric, its points: where training was (the step, the epoch) and the
value. A line counts when it says both where training is and some values:

- where: the progress lines `odh.training.logs.progress` knows (Horovod-style
  `Epoch 3/40 step 250/500`, epoch summaries `Epoch 3/40: ...`, Keras, Lightning, the
  Horovod examples, DeepSpeed's `step=120`, Megatron's `iteration 182/ 250000`), else a
  plain `step 120` / `global_step=120` / `iteration 120` / `epoch 3` on the line, or the
  `'epoch': 0.5` / `'step': 120` of a Hugging Face Trainer log dict;
- values: every `name=value` and `name: value` pair (`loss=0.31`, `Loss: 0.31`,
  `learning rate: 1.5E-04`, `lr=[0.0001]`, `'loss': 0.31`), a few well-known names
  followed by a number (`loss 0.3123`, `accuracy 0.81`, `lr 0.001`, `perplexity 12.1`),
  and throughputs written as a number and a unit (`1234.5 img/sec`,
  `300.1 img/sec per rank`, `5.40it/s`, `tokens/sec`, `samples/sec`).

Fields are cut at `,`, `|`, `;`, tabs and ` - `, so names may have spaces (Megatron's
`lm loss: 6.1E+00`). The position words themselves (epoch, step, iteration, rank,
skipped...) are not metrics. Lines from a rank other than 0 (`[1,3]<stdout>:`, `[Rank 3]`)
are left out: rank 0 speaks for the run. A job may declare its own patterns (the
annotation `opendatahub.io/metric-patterns`, odh/training/manifests/metric_patterns.py):
a line one of them matches is read by it alone.

A point is `(step, epoch, value, time)`: the global step (steps of earlier epochs
counted, `(k-1) * steps_per_epoch + s`) where the line tells it, the epoch as a fraction
(2.5 = half of the third) where it tells that, and the line's time. A metric has a series
of the points logged during epochs ("step") and one of the end-of-epoch summaries
("epoch"); an end-of-epoch point gets the step of that epoch's end once a step line has
said how many steps an epoch has.

What is kept is bounded: `MAX_NAMES` metrics (the first found; later ones are left out
and counted), names of at most `MAX_NAME_LENGTH` characters, and `MAX_POINTS` points a
series: past that, every second point is dropped (the first and the newest stay), so a
long run keeps its whole shape at a coarser step. A step logged again (a restart from a
checkpoint) replaces the point of that step. Nothing here imports Django: the watcher,
the SDK and the CLI read the same numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from odh.training.logs import progress as p
from odh.training.logs.logvalues import MAX_NAME_LENGTH, values
from odh.training.manifests.metric_patterns import DeclaredPattern, compile_pattern

MAX_NAMES = 16
__all__ = [
    "EPOCH",
    "MAX_NAMES",
    "MAX_NAME_LENGTH",
    "MAX_POINTS",
    "STEP",
    "CurveReader",
    "Point",
    "Series",
    "read_curves",
    "values",
]
MAX_POINTS = 1000
SLACK_SECONDS = 60.0
STEP, EPOCH = "step", "epoch"  # a series of points within epochs, of epoch summaries

Point = tuple[float | None, float | None, float, float | None]  # step, epoch, value, time

_GENERIC_STEP = re.compile(r"\b(?:global[_ ]?step|step|iter(?:ation)?)\s*[=:#]?\s*(\d+)"
                           r"(?:\s*/\s*\d+)?", re.I)
_GENERIC_EPOCH = re.compile(r"\bepoch\s*[=:#]?\s*(\d+(?:\.\d+)?)(?:\s*/\s*\d+)?", re.I)
# position words and counters: where training is, not how it learns
_NOT_METRICS = frozenset({
    "epoch", "epochs", "step", "steps", "global_step", "global step", "iteration", "iter",
    "iterations", "batch", "rank", "local rank", "skipped", "eta", "time", "v_num",
    "consumed samples", "number of skipped iterations", "number of nan iterations"})


@dataclass(frozen=True)
class _Where:
    step: float | None
    epoch: float | None
    per: str  # STEP or EPOCH
    span: tuple[int, int]  # the part of the line that said it


@dataclass
class Series:
    name: str
    per: str
    points: list[Point] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.name}@{self.per}"


class CurveReader:
    """Reads a log as it grows (feed it the new lines each time) and keeps its curves."""

    def __init__(self, state: dict | None = None, patterns: Iterable[str] | None = None
                 ) -> None:
        state = state or {}
        # the job's own patterns (manifests/metric_patterns.py), read before the usual ones
        self.patterns: tuple[str, ...] = tuple(patterns if patterns is not None
                                               else state.get("patterns") or ())
        self._declared = _compiled(self.patterns)
        self.series: dict[str, Series] = {}
        for s in state.get("series") or []:
            series = Series(str(s["name"]), str(s["per"]), [tuple(x) for x in s["points"]])
            self.series[series.key] = series
        self.steps_per_epoch: int | None = state.get("steps_per_epoch")
        self.keras: tuple[int, int] | None = tuple(state["keras"]) if state.get("keras") \
            else None  # type: ignore[assignment]
        self.left_out: int = int(state.get("left_out") or 0)  # metrics past MAX_NAMES
        # how far the log is read: the newest line's time, and how many lines of that very
        # time were read (the next read starts a little before it: `since_seconds`)
        read_to = state.get("read_to")
        self.read_to: datetime | None = datetime.fromisoformat(read_to) if read_to else None
        self.read_at_count: int = int(state.get("read_at_count") or 0)

    def state(self) -> dict:
        """JSON-able: what `CurveReader(state)` carries on from."""
        return {"series": [{"name": s.name, "per": s.per, "points": [list(x) for x in s.points]}
                           for s in self.series.values()],
                "steps_per_epoch": self.steps_per_epoch,
                "keras": list(self.keras) if self.keras else None, "left_out": self.left_out,
                "read_to": self.read_to.isoformat() if self.read_to else None,
                "read_at_count": self.read_at_count,
                **({"patterns": list(self.patterns)} if self.patterns else {})}

    def since_seconds(self, now: datetime, slack: float = SLACK_SECONDS) -> int | None:
        """What to ask the API server for (`sinceSeconds`) to get every line after the
        last one read: from a little before it (`slack`: the dashboard's and the
        cluster's clocks may differ), the lines already read are then left out by
        `feed_log`. None: from the start."""
        if self.read_to is None:
            return None
        return max(1, math.ceil((now - self.read_to).total_seconds() + slack))

    def feed_log(self, text: str, cut: bool = False) -> int:
        """Read the new lines of a `timestamps=True` log read (one started at or before the
        last line read: those read already are left out). `cut`: the read stopped at a byte
        limit, so its last line may be partial: left for the next read. The number of
        points they gave."""
        lines = text.splitlines()
        if cut and lines:
            lines = lines[:-1]
        skip = self.read_at_count if self.read_to is not None else 0
        new: list[tuple[datetime | None, str]] = []
        for line in lines:
            at, rest = p.split_timestamp(line)
            if at is None:
                continue  # not a timestamped line: cannot be placed
            if self.read_to is not None and (at < self.read_to or (at == self.read_to
                                                                   and skip > 0)):
                skip -= at == self.read_to
                continue
            new.append((at, rest))
        if new:
            last = new[-1][0]
            same = sum(1 for at, _rest in new if at == last)
            self.read_at_count = same + (self.read_at_count if last == self.read_to else 0)
            self.read_to = last
        return self.feed(new)

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(s.name for s in self.series.values()))

    def feed(self, lines: Iterable[str | tuple[datetime | None, str]]) -> int:
        """Read these lines; the number of points they gave."""
        added = 0
        for item in lines:
            at, raw = p.split_timestamp(item) if isinstance(item, str) else item
            for physical in raw.split("\n"):
                added += self._line(at, physical)
        return added

    def _line(self, at: datetime | None, physical: str) -> int:
        rank, text = p._clean(physical)
        if not text or (rank is not None and rank != 0):
            return 0
        t = at.timestamp() if at is not None else None
        for pattern in self._declared:
            if (found := pattern.read(text)) is not None:
                step, epoch, pairs = found
                return sum(self._add(name, STEP, (step, epoch, value, t))
                           for name, value in pairs)
        where = self._where(text)
        if where is None:
            return 0
        rest = text[:where.span[0]] + " | " + text[where.span[1]:]
        pairs = values(rest)
        step, epoch = where.step, where.epoch
        for n, v in pairs:  # a Hugging Face dict says where in its own pairs
            if n == "epoch" and epoch is None:
                epoch = v
        pairs = [(n, v) for n, v in pairs if n not in _NOT_METRICS]
        if step is None and epoch is None:
            return 0
        added = 0
        for name, value in pairs:
            if self._add(name, where.per, (step, epoch, value, t)):
                added += 1
        return added

    def _where(self, text: str) -> _Where | None:
        """Where training is, as this line says, or None."""
        if m := p._STEP_IN_EPOCH.search(text):
            k, _n, s, t = (int(g) for g in m.groups())
            self.steps_per_epoch = t or self.steps_per_epoch
            return _Where((k - 1) * t + s, k - 1 + p._part(s, t), STEP, m.span())
        if m := p._KERAS_EPOCH.match(text):
            self.keras = (int(m.group(1)), int(m.group(2)))
            return None
        if self.keras and (m := p._KERAS_STEP.match(text)):
            s, t = int(m.group(1)), int(m.group(2))
            k = self.keras[0]
            self.steps_per_epoch = t or self.steps_per_epoch
            per = EPOCH if s >= t else STEP
            return _Where((k - 1) * t + s, k if per == EPOCH else k - 1 + p._part(s, t), per,
                          m.span())
        for pattern, first in ((p._LIGHTNING_RICH, 0), (p._LIGHTNING_TQDM, 0),
                               (p._TQDM_HOROVOD, 1)):
            if m := (pattern.match(text) if first == 0 else pattern.search(text)):
                groups = [g for g in m.groups()]
                k, s, t = int(groups[0]), int(groups[-2]), int(groups[-1])
                k -= first
                self.steps_per_epoch = t or self.steps_per_epoch
                return _Where(k * t + s, k + p._part(s, t), STEP, m.span())
        if m := p._TORCH_MNIST.search(text):
            k, s, t = (int(g) for g in m.groups())
            return _Where(None, k - 1 + p._part(s, t), STEP, m.span())
        if m := p._EPOCH_SUMMARY.match(text):
            k = int(m.group(1))
            step = k * self.steps_per_epoch if self.steps_per_epoch else None
            end = m.end() - 1  # the pattern ends on the first character after ":"
            return _Where(step, float(k), EPOCH, (m.start(), end))
        if m := p._MEGATRON.match(text):
            return _Where(int(m.group(1)), None, STEP, m.span())
        if m := p._DEEPSPEED.search(text):
            if int(m.group(1)) != 0:
                return None
            return _Where(int(m.group(2)), None, STEP, m.span())
        if m := _GENERIC_STEP.search(text):
            return _Where(int(m.group(1)), None, STEP, m.span())
        if m := _GENERIC_EPOCH.search(text):
            return _Where(None, float(m.group(1)), STEP, m.span())
        if "'epoch'" in text or '"epoch"' in text:  # a Hugging Face dict: its pairs say
            return _Where(None, None, STEP, (0, 0))
        return None

    def _add(self, name: str, per: str, point: Point) -> bool:
        key = f"{name}@{per}"
        series = self.series.get(key)
        if series is None:
            if name not in self.names and len(self.names) >= MAX_NAMES:
                self.left_out += 1
                return False
            series = self.series[key] = Series(name, per)
        x, points = _x(point), series.points
        last = points[-1] if points else None
        if last is not None and _axis(last) == _axis(point) and _x(last) == x:
            points[-1] = point  # the same step logged again (a redraw): the newest counts
        elif last is not None and _axis(last) == _axis(point) and x < _x(last):
            # back to an earlier step (a restart from a checkpoint): the new run replaces
            series.points = [q for q in points if _axis(q) != _axis(point) or _x(q) < x] \
                + [point]
        else:
            points.append(point)
        if len(series.points) > MAX_POINTS:
            series.points = series.points[:-1:2] + [series.points[-1]]
        return True


def _compiled(templates: tuple[str, ...]) -> list[DeclaredPattern]:
    compiled = []
    for template in templates:
        try:
            compiled.append(compile_pattern(template))
        except ValueError:
            continue  # the manifest check said why before the job was created
    return compiled


def _x(point: Point) -> float:
    """Where the point is: its step, else its epoch (a point has one or both)."""
    return point[0] if point[0] is not None else point[1]  # type: ignore[return-value]


def _axis(point: Point) -> str:
    return STEP if point[0] is not None else EPOCH


def read_curves(lines: Iterable[str | tuple[datetime | None, str]],
                patterns: Iterable[str] = ()) -> CurveReader:
    """The curves of a whole log (or tail) at once (`patterns`: the job's own)."""
    reader = CurveReader(patterns=patterns)
    reader.feed(lines)
    return reader
