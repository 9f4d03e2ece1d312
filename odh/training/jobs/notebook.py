"""A job in a notebook: its rich HTML (`MPIJob._repr_html_`, `TrainJob`'s too), and the
progress `wait_for_completion(show_progress=True)` shows while it waits.

The HTML describes the job (project, image, command, Workers and their size) and, once it
was created or read from the cluster, where it stands: one read of its summary when the
notebook shows it (a job only described makes no call; a cluster that does not answer is
one line saying so, never an exception in the notebook's output).

The progress: a tqdm bar where tqdm is installed (`tqdm.auto`: a widget in Jupyter, text
in a terminal), else one plain line each time what it says changes, on standard output:
`bert: Running · Epoch 12 of 40 (30%), about 1h 2m 3s left`. It says the status, and the
training's progress and time left as the dashboard's progress bar reads them from the
Launcher's log (or as a TrainJob reports them); before training starts, the job's one-line
story instead ("Waiting for 2 of 4 Workers"). tqdm is no dependency of the SDK.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from odh.training import errors
from odh.training import richhtml as rich
from odh.training.durations import format_duration
from odh.training.i18n import _
from odh.training.jobstatus import JobStatus
from odh.training.logs.progress import Progress
from odh.training.logs.running import describe
from odh.training.manifests.totals import totals_for
from odh.training.quantity import format_resources

if TYPE_CHECKING:
    from odh.training.jobs.following import JobFollowing

TEXT, TQDM = "text", "tqdm"
BAR = "{desc}: {percentage:3.0f}%|{bar}| "
Show = Callable[[JobStatus, Progress | None], None]


# -- the job as HTML --------------------------------------------------------------------------
def job_html(job: Any) -> str:
    """A TrainingJob (MPIJob, TrainJob) as a notebook shows it."""
    spec = job.spec
    totals = totals_for(spec)
    workers = format_resources(totals.cpu_per_worker, totals.memory_per_worker,
                               totals.gpus_per_worker)
    launcher = format_resources(totals.launcher_cpu, totals.launcher_memory, 0)
    pairs = [(_("Project"), rich.esc(spec.namespace) if spec.namespace
              else rich.muted(_("the kubeconfig's"))),
             (_("Image"), rich.code(spec.image) if spec.image else ""),
             (_("Command"), rich.code(shlex.join(spec.command)) if spec.command else ""),
             (_("Workers"), rich.esc(_("%(count)d × %(resources)s")  # noqa: RUF001
                                     % {"count": spec.workers, "resources": workers})),
             (_("Launcher"), rich.esc(launcher) if launcher else "")]
    if job.kind.runs_mpirun:
        pairs.append((_("Slots per worker"), rich.esc(spec.effective_slots)))
    if job.object is None:
        head = rich.muted(_("Not created yet: create() sends it to the cluster."))
        return rich.box(f"{job.kind.label} {spec.name}", head, rich.rows(pairs))
    try:
        status = JobStatus.from_summary(job.summary())
    except errors.ODHError as e:
        return rich.box(f"{job.kind.label} {spec.name}", "", rich.rows(pairs)
                        + rich.unavailable(_("Its status could not be read"), e.message))
    head = rich.status_badge(status.phase)
    if status.headline:
        head += f" <span>{rich.esc(status.headline)}</span>"
    return rich.box(f"{job.kind.label} {spec.name}", head,
                    rich.rows(pairs + status.html_rows()))


# -- progress while waiting -------------------------------------------------------------------
def progress_words(status: JobStatus, progress: Progress | None,
                   now: datetime | None = None) -> str:
    """"Epoch 12 of 40 (30%), about 1h 2m 3s left"; the job's one line without progress."""
    if progress is None or status.is_finished:
        return status.headline
    text = describe(progress)
    if progress.percent is not None:
        text += f" ({progress.percent}%)"
    left = progress.eta_at(now or datetime.now(UTC))
    if progress.fraction is not None and progress.fraction >= 1.0:
        return f"{text}, {_('finishing')}"
    if left is not None:
        text += ", " + _("about %(duration)s left") % {"duration": format_duration(left)}
    return text


def progress_line(name: str, status: JobStatus, progress: Progress | None) -> str:
    """`bert: Running · Epoch 12 of 40 (30%), about 1h 2m 3s left`."""
    phase = str(getattr(status.phase, "value", status.phase))
    line = f"{name}: {rich.status_words().get(phase, phase)}"
    words = progress_words(status, progress)
    return f"{line} \u00b7 {words}" if words else line


def choose(show_progress: bool | str) -> str:
    """TEXT or TQDM: what `show_progress` asks for (True: tqdm where installed); ValueError
    for anything else, ImportError for "tqdm" where it is not installed."""
    if show_progress is True:
        return TQDM if importlib.util.find_spec("tqdm") is not None else TEXT
    if show_progress == TQDM and importlib.util.find_spec("tqdm") is None:
        raise ImportError(_('show_progress="tqdm" needs tqdm: pip install tqdm (or use '
                            'show_progress=True, which prints plain lines without it).'))
    if show_progress in (TEXT, TQDM):
        return str(show_progress)
    raise ValueError(_('show_progress is True, False, "text" or "tqdm".'))


class TextProgress:
    """One line each time what it says changes."""

    def __init__(self, name: str, out: TextIO | None = None) -> None:
        self.name = name
        self.out = out or sys.stdout
        self.last = ""

    def __call__(self, status: JobStatus, progress: Progress | None) -> None:
        line = progress_line(self.name, status, progress)
        if line != self.last:
            print(line, file=self.out, flush=True)
            self.last = line

    def close(self) -> None:
        pass


class TqdmProgress:
    """A tqdm bar in percent: the training's share done, the status and time left beside it;
    full once the job Succeeded."""

    def __init__(self, name: str) -> None:
        from tqdm.auto import tqdm
        self.name = name
        self.bar = tqdm(total=100, unit="%", desc=name, leave=True, bar_format=BAR)

    def __call__(self, status: JobStatus, progress: Progress | None) -> None:
        phase = str(getattr(status.phase, "value", status.phase))
        if phase == "Succeeded":
            done = 100
        elif progress is not None and progress.percent is not None:
            done = progress.percent
        else:
            done = self.bar.n
        self.bar.n = done
        self.bar.set_description_str(f"{self.name} {rich.status_words().get(phase, phase)}",
                                     refresh=False)
        # the words after the bar, as they are (tqdm's postfix would put ", " before them)
        words = progress_words(status, progress)
        self.bar.bar_format = BAR + words.replace("{", "{{").replace("}", "}}")
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def display(job: JobFollowing, show_progress: bool | str) -> TextProgress | TqdmProgress:
    """The display `wait_for_completion` updates (`close()` it at the end)."""
    if choose(show_progress) == TQDM:
        return TqdmProgress(job.name)
    return TextProgress(job.name)
