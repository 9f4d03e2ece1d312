"""A listing of an output directory, as GNU `find -printf` writes it, and what it holds:
files with their sizes and times, the checkpoints among them, the newest one.

The lister pod prints one line per entry, `FORMAT` below: its type (`f` file, `d`
directory, `l` symbolic link...), its size in bytes, its modification time in seconds since
the epoch, and its path relative to the directory listed. A line that does not read so (a
name with a newline in it, a cut last line) is skipped.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from odh.training.i18n import _

# `find DIR -mindepth 1 -maxdepth DEPTH -printf FORMAT`
FORMAT = r"%y %s %T@ %P\n"
DEPTH = 4
# checkpoint-500, checkpoint_500, ckpt-500, step_500, epoch-3, global_step500, model-500.ckpt
_CHECKPOINT = re.compile(r"^(?:checkpoint|ckpt|step|global_step|epoch)[-_]?(\d+)$|"
                         r"^.*?(\d+)?\.(?:ckpt|pt|pth)$", re.IGNORECASE)
_EVENTS = "events.out.tfevents."


@dataclass(frozen=True)
class Entry:
    path: str  # relative to the directory listed, "/"-separated
    size: int  # bytes; a directory's is the sum of the files under it
    modified: datetime
    is_dir: bool = False

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)

    @property
    def depth(self) -> int:
        return self.path.count("/")

    @property
    def is_events(self) -> bool:
        return not self.is_dir and self.name.startswith(_EVENTS)


@dataclass(frozen=True)
class Checkpoint:
    entry: Entry
    step: int | None  # the number in its name, where it has one

    @property
    def path(self) -> str:
        return self.entry.path


@dataclass(frozen=True)
class Listing:
    entries: list[Entry]
    cut: bool = False  # the listing was longer than the dashboard reads

    @property
    def files(self) -> list[Entry]:
        return [e for e in self.entries if not e.is_dir]

    @property
    def total_size(self) -> int:
        return sum(e.size for e in self.files)

    @property
    def checkpoints(self) -> list[Checkpoint]:
        """The checkpoints, oldest first: the top-level directories or files named like one
        (`checkpoint-500/`, `epoch_3.pt`), ordered by step, then time."""
        found = []
        for e in self.entries:
            if e.depth != 0 or (not e.is_dir and e.size == 0):
                continue
            match = _CHECKPOINT.match(e.name)
            if match:
                number = match.group(1) or match.group(2)
                found.append(Checkpoint(e, int(number) if number else None))
        return sorted(found, key=lambda c: (c.step if c.step is not None else -1,
                                            c.entry.modified))

    @property
    def newest_checkpoint(self) -> Checkpoint | None:
        return self.checkpoints[-1] if self.checkpoints else None

    @property
    def event_files(self) -> list[Entry]:
        return [e for e in self.entries if e.is_events]

    @property
    def event_dirs(self) -> list[str]:
        """The directories holding TensorBoard event files ("" = the one listed): the
        logdirs to give TensorBoard."""
        return sorted({posixpath.dirname(e.path) for e in self.event_files})

    def get(self, path: str) -> Entry | None:
        return next((e for e in self.entries if e.path == path), None)


def parse_listing(text: str, cut: bool = False) -> Listing:
    """The entries `find -printf FORMAT` printed, sorted by path; directories get the sum of
    the files under them as their size."""
    raw: list[tuple[str, int, datetime, bool]] = []
    for line in text.splitlines():
        parts = line.split(" ", 3)
        if len(parts) != 4 or not parts[3] or parts[0] not in ("f", "d"):
            continue
        try:
            size = int(parts[1])
            when = datetime.fromtimestamp(float(parts[2]), UTC)
        except (ValueError, OverflowError, OSError):
            continue
        raw.append((parts[3], size, when, parts[0] == "d"))
    sums: dict[str, int] = {}
    for path, size, _when, is_dir in raw:
        if is_dir:
            continue
        parent = posixpath.dirname(path)
        while parent:
            sums[parent] = sums.get(parent, 0) + size
            parent = posixpath.dirname(parent)
    entries = [Entry(path, sums.get(path, 0) if is_dir else size, when, is_dir)
               for path, size, when, is_dir in raw]
    return Listing(sorted(entries, key=lambda e: e.path), cut)


class UnsafePath(ValueError):
    """A path that would leave the directory it is read in."""


def safe_relative(path: str) -> str:
    """`path` as a path inside a directory ("a/b.txt"), or UnsafePath when it would leave it
    (`..`, an absolute path) or names nothing."""
    text = str(path or "").strip()
    if not text or text.startswith("/") or "\\" in text or "\0" in text or "\n" in text:
        raise UnsafePath(_("“%(path)s” is not a path inside the job's output directory: "
                           "choose a file from the list.") % {"path": text[:200]})
    normal = posixpath.normpath(text)
    if normal in (".", "..") or normal.startswith("../"):
        raise UnsafePath(_("“%(path)s” is outside the job's output directory, on which the "
                           "dashboard reads only: choose a file from the list.")
                         % {"path": text[:200]})
    return normal


def human_size(size: int) -> str:
    """1536 -> "1.5 KiB"; bytes below 1 KiB as they are."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
