"""This process's TensorBoards: one per person and job, with when it was last used.

A board is started in a thread of its own (copying event files and waiting for TensorBoard
to answer take seconds); its page polls its state. The reaper, one daemon thread started
with the first board, wakes a few times per idle period: it stops a board unused for
TENSORBOARD_IDLE_SECONDS (a local process ended and its copies removed; a pod deleted with
the token of the person who started it), notices a local process that ended by itself, and
copies a running job's new event files every TENSORBOARD_REFRESH_SECONDS while its board is
used. A
stopped board stays known (saying why) until it is started again.

The boards live in the process that started them: with several web replicas, a person's
requests reach the one holding their board through the session's affinity (the Route's
cookie); a board another replica holds is "not running" here.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from odh.training.errors import ODHError

log = logging.getLogger("training.tensorboards")

STARTING, RUNNING, FAILED, STOPPED = "starting", "running", "failed", "stopped"
Key = tuple[str, str, str, str]  # (person, project, kind slug, job name)


@dataclass
class Board:
    key: Key
    runner: str  # "local" or "pod"
    token: str  # the person's, to refresh copies and stop a pod: kept in memory only
    path_prefix: str
    finished: bool  # the job had ended when it was started: its files no longer change
    state: str = STARTING
    message: str = ""
    upstream: str = ""  # where TensorBoard answers, path_prefix included in its paths
    started: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    refreshed: float = field(default_factory=time.monotonic)
    idle_minutes: int = 0  # set when stopped for being unused
    runtime: Any = None  # the runner's own (a process, a cache directory, a pod name)
    refreshing: bool = False

    @property
    def project(self) -> str:
        return self.key[1]

    @property
    def job_name(self) -> str:
        return self.key[3]


class Boards:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.boards: dict[Key, Board] = {}
        self._reaper: threading.Thread | None = None
        self._wake = threading.Event()

    def get(self, key: Key) -> Board | None:
        with self.lock:
            return self.boards.get(key)

    def start(self, board: Board, run: Callable[[Board], None]) -> Board:
        """Keep `board` (replacing a stopped or failed one) and run `run(board)` in a
        thread: it sets the board RUNNING with its upstream, or FAILED with why."""
        with self.lock:
            found = self.boards.get(board.key)
            if found is not None and found.state in (STARTING, RUNNING):
                return found
            self.boards[board.key] = board
            self._ensure_reaper()
        self._wake.set()  # the reaper's pace follows the idle time in force now

        from training.tensorboards import runners

        language = translation.get_language()

        def starting() -> None:
            with translation.override(language):
                try:
                    run(board)
                except ODHError as e:  # said on the page, never a 500
                    board.state, board.message = FAILED, e.message
                except Exception as e:
                    log.exception("TensorBoard for %s did not start", board.key[1:])
                    board.state = FAILED
                    board.message = _("TensorBoard did not start: %(why)s") % {"why": e}
                if board.state == FAILED:
                    runners.stop(board)
        threading.Thread(target=starting, name="tensorboard-start", daemon=True).start()
        return board

    def touch(self, board: Board) -> None:
        board.last_used = time.monotonic()

    def stop(self, board: Board, message: str = "", *, idle: bool = False) -> None:
        from training.tensorboards import runners

        with self.lock:
            if board.state == STOPPED:
                return
            board.state, board.message = STOPPED, message
            if idle:
                board.idle_minutes = max(1, round(settings.TENSORBOARD_IDLE_SECONDS / 60))
        runners.stop(board)

    # -- the reaper ----------------------------------------------------------------------
    def _ensure_reaper(self) -> None:
        if self._reaper is None:  # the process's end stops what it started
            atexit.register(self.stop_all)
        if self._reaper is None or not self._reaper.is_alive():
            self._reaper = threading.Thread(target=self._reap_forever, name="tensorboard-reaper",
                                            daemon=True)
            self._reaper.start()

    def _reap_forever(self) -> None:
        while True:
            idle = float(settings.TENSORBOARD_IDLE_SECONDS)
            self._wake.wait(max(0.2, min(idle / 4, settings.TENSORBOARD_REFRESH_SECONDS, 30.0)))
            self._wake.clear()
            try:
                self.reap()
            except Exception:  # the next round tries again
                log.exception("TensorBoard reaper")

    def reap(self) -> None:
        from training.tensorboards import runners

        now, idle = time.monotonic(), float(settings.TENSORBOARD_IDLE_SECONDS)
        with self.lock:
            boards = list(self.boards.values())
        for board in boards:
            if board.state == RUNNING and now - board.last_used > idle:
                self.stop(board, idle=True)
            elif board.state == RUNNING:
                runners.check(board, self)

    def stop_all(self) -> None:
        with self.lock:
            boards = list(self.boards.values())
        for board in boards:
            self.stop(board)


BOARDS = Boards()
