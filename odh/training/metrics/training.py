"""Training curves (odh/training/logs/curves.py) shaped for the Metrics tab's "Training"
group, the comparison page and the exports.

Charts: one per metric, in the order the log first named them, drawn by step, or by epoch
when some of its points have no step (a log that counts samples, not steps). A metric has
up to two traces: the values logged during epochs, and the end-of-epoch summaries.

Export: `export_series` gives the series as the SDK's `get_metrics()["training"]` returns
them, a dict by series name, "loss" for the points logged during epochs, "loss@epoch" for
the end-of-epoch summaries, of points `{"step": 1250, "epoch": 2.5, "value": 0.31, "time":
"2025-01-31T12:00:00Z"}` (step, epoch or time None where the log did not say).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from odh.training.i18n import _
from odh.training.logs.curves import EPOCH, STEP, CurveReader, Point, Series
from odh.training.metrics.series import plotly_text

TRAINING = "training"  # the export's chart name


def metric_title(name: str) -> str:
    """A metric's chart title, in the reader's language for the well-known ones."""
    known = {"loss": _("Loss"), "accuracy": _("Accuracy"), "acc": _("Accuracy"),
             "learning_rate": _("Learning rate"), "lr": _("Learning rate"),
             "img/sec": _("Images per second"), "images/sec": _("Images per second"),
             "samples/sec": _("Samples per second"), "tokens/sec": _("Tokens per second"),
             "img/sec per rank": _("Images per second per rank"),
             "perplexity": _("Perplexity")}
    return known.get(name, name)


def _slug(name: str, taken: set[str]) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "metric"
    base, n = slug, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


def _by_name(reader: CurveReader) -> dict[str, list[Series]]:
    found: dict[str, list[Series]] = {}
    for s in reader.series.values():
        if s.points:
            found.setdefault(s.name, []).append(s)
    for series in found.values():
        series.sort(key=lambda s: s.per != STEP)  # during epochs first, then summaries
    return found


def axis_of(series: list[Series]) -> str:
    """STEP when every point says its step, else EPOCH."""
    points = [q for s in series for q in s.points]
    return STEP if all(q[0] is not None for q in points) else EPOCH


def _xy(points: list[Point], axis: str) -> tuple[list[float], list[float]]:
    index = 0 if axis == STEP else 1
    kept = [q for q in points if q[index] is not None]
    return [_plain(q[index]) for q in kept], [q[2] for q in kept]  # type: ignore[arg-type]


def _plain(x: float) -> float:
    return int(x) if float(x).is_integer() else round(x, 4)


# the figures a finished run's summary names first, as they are most often logged
FIRST = ("loss", "accuracy", "acc", "perplexity", "img/sec", "images/sec", "samples/sec",
         "tokens/sec")


def final_figures(reader: CurveReader | None, most: int = 4) -> list[tuple[str, float]]:
    """What a run ended with: each metric's last value (its last end-of-epoch summary where
    it logged some, else its last step), as (title, value), the well-known ones first
    (loss, accuracy, throughput), at most `most`; [] without curves."""
    if reader is None:
        return []
    found = []
    for name, series in _by_name(reader).items():
        last = next((s for s in series if s.per == EPOCH and s.points), series[-1])
        found.append((name, metric_title(name), _plain(last.points[-1][2])))
    found.sort(key=lambda f: (FIRST.index(f[0]) if f[0] in FIRST else len(FIRST), f[0]))
    return [(title, value) for _name, title, value in found[:most]]


def training_charts(reader: CurveReader | None) -> list[dict]:
    """The Training group's charts: `key`, `title`, `name` (as logged), `axis` (STEP or
    EPOCH), `traces` ({"per", "label", "x", "y"}), and `rows` for the table under it;
    [] when the log had no recognisable metrics."""
    if reader is None:
        return []
    labels = {STEP: _("During epochs"), EPOCH: _("End of epoch")}
    charts, taken = [], set()
    for name, series in _by_name(reader).items():
        axis = axis_of(series)
        traces = []
        for s in series:
            x, y = _xy(s.points, axis)
            if x:
                traces.append({"per": s.per, "label": plotly_text(labels[s.per]),
                               "name": labels[s.per], "x": x, "y": y,
                               "latest": _plain(y[-1]), "lowest": _plain(min(y)),
                               "highest": _plain(max(y)), "count": len(y)})
        if traces:
            charts.append({"key": _slug(name, taken), "name": name,
                           "title": metric_title(name), "axis": axis,
                           "axis_title": _("Step") if axis == STEP else _("Epoch"),
                           "traces": traces})
    return charts


def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


def export_series(reader: CurveReader | None) -> dict[str, list[dict]]:
    """The curves for `get_metrics()["training"]` and the CSV (see the module's doc)."""
    out: dict[str, list[dict]] = {}
    if reader is None:
        return out
    for name, series in _by_name(reader).items():
        for s in series:
            out[name if s.per == STEP else f"{name}@{EPOCH}"] = [
                {"step": None if q[0] is None else _plain(q[0]),
                 "epoch": None if q[1] is None else _plain(q[1]), "value": q[2],
                 "time": _iso(q[3])} for q in s.points]
    return out


def compare_curves(runs: list[CurveReader | None]) -> list[dict]:
    """The same curves of several runs on shared axes (the comparison page): one chart per
    metric any run logged, with one trace per run that has it (its values during epochs,
    else its end-of-epoch summaries; `run`: its place in `runs`), by step when every
    trace has steps, else by epoch."""
    by_metric: dict[str, list[tuple[int, Series]]] = {}
    for i, reader in enumerate(runs):
        if reader is None:
            continue
        for name, series in _by_name(reader).items():
            by_metric.setdefault(name, []).append((i, series[0]))
    charts, taken = [], set()
    for name, found in by_metric.items():
        axis = axis_of([s for _i, s in found])
        traces = []
        for i, s in found:
            x, y = _xy(s.points, axis)
            if x:
                traces.append({"run": i, "x": x, "y": y})
        if traces:
            charts.append({"key": _slug(name, taken), "name": name, "title": metric_title(name),
                           "axis_title": _("Step") if axis == STEP else _("Epoch"),
                           "traces": traces})
    return charts
