"""Where a job's TensorBoard runs (TENSORBOARD_RUNNER): a local `tensorboard` process on
127.0.0.1 fed with copies of the job's event files, or a Pod and a Service in the job's
project (odh.training.artifacts.tensorboard), both made with the person's token."""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import requests
from django.conf import settings
from django.utils.translation import gettext as _

from odh.training import errors
from odh.training.artifacts.lister import ListerSettings
from odh.training.artifacts.reading import Artifacts, read_artifacts
from odh.training.artifacts.tensorboard import (
    LogDir,
    TensorBoardRefused,
    copy_event_files,
    start_board_pod,
    stop_board_pods,
)
from odh.training.kinds import JobKind
from training.cluster import client_for_token
from training.tensorboards.boards import (
    FAILED,
    RUNNING,
    STARTING,
    Board,
    Boards,
)

log = logging.getLogger("training.tensorboards")


@dataclass
class LocalRuntime:
    directory: Path  # the cache: logs/ (the copies) and tensorboard.log
    kind: JobKind
    job: dict
    lister: ListerSettings
    process: subprocess.Popen | None = None

    @property
    def logs(self) -> Path:
        return self.directory / "logs"


@dataclass
class PodRuntime:
    person: str


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " ".join(line.strip() for line in text[-lines:])


def _cache_root() -> Path:
    root = Path(settings.TENSORBOARD_CACHE_DIR or Path(tempfile.gettempdir()) /
                "mpijob-dashboard-tensorboard")
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    return root


def start_local(board: Board, kind: JobKind, job: dict, artifacts: Artifacts,
                lister: ListerSettings) -> None:
    """Copy the event files as the person, start `tensorboard` on a free port of 127.0.0.1
    and wait until it answers."""
    if importlib.util.find_spec("tensorboard") is None:
        raise TensorBoardRefused(_("TensorBoard is not installed where the dashboard runs: "
                                   "install the dashboard's extra (pip install "
                                   "'.[dashboard]'), or ask the administrator to set "
                                   "TENSORBOARD_RUNNER=pod."), "not-installed")
    runtime = LocalRuntime(Path(tempfile.mkdtemp(prefix="tb-", dir=_cache_root())), kind, job,
                           lister)
    board.runtime = runtime
    with client_for_token(board.token) as client:
        copy_event_files(client, board.project, board.job_name, artifacts, runtime.logs,
                         lister)
    port = _free_port()
    output = (runtime.directory / "tensorboard.log").open("wb")
    runtime.process = subprocess.Popen(
        [sys.executable, "-m", "training.tensorboards.child", str(os.getpid()),
         "--logdir", str(runtime.logs),
         "--host", "127.0.0.1", "--port", str(port), "--path_prefix", board.path_prefix,
         "--reload_interval", "5"],
        stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        cwd=settings.BASE_DIR)
    output.close()
    upstream = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + settings.TENSORBOARD_START_SECONDS
    while time.monotonic() < deadline:
        if runtime.process.poll() is not None:
            raise TensorBoardRefused(_("TensorBoard ended as it started: %(why)s") % {
                "why": _tail(runtime.directory / "tensorboard.log") or runtime.process.returncode},
                "exited")
        try:
            if requests.get(upstream + board.path_prefix + "/data/logdir", timeout=2).ok:
                if board.state != STARTING:  # stopped meanwhile
                    stop(board)
                    return
                board.upstream, board.state = upstream, RUNNING
                board.last_used = time.monotonic()  # idle from now on, not from the start
                return
        except requests.RequestException:
            pass
        time.sleep(0.25)
    raise TensorBoardRefused(_("TensorBoard did not answer within %(seconds)d s: start it "
                               "again.") % {"seconds": settings.TENSORBOARD_START_SECONDS},
                             "not-started")


def start_pod(board: Board, person: str, logdirs: list[LogDir]) -> None:
    """Create the Pod and Service as the person, then wait for the Pod to run."""
    board.runtime = PodRuntime(person)
    with client_for_token(board.token) as client:
        board.upstream = start_board_pod(client, board.project, board.job_name, person,
                                         logdirs, board.path_prefix,
                                         settings.TENSORBOARD_IMAGE)
        from odh.training.artifacts.tensorboard import board_name

        name = board_name(board.job_name, person)
        deadline = time.monotonic() + settings.TENSORBOARD_START_SECONDS
        while time.monotonic() < deadline:
            if board.state != STARTING:  # stopped meanwhile
                return
            pod = client.get_pod(board.project, name)
            phase = (pod.get("status") or {}).get("phase")
            if phase == "Running":
                board.state, board.last_used = RUNNING, time.monotonic()
                return
            if phase in ("Succeeded", "Failed"):
                raise TensorBoardRefused(_("The TensorBoard pod %(pod)s ended (%(phase)s): see "
                                           "its log in the project.") % {"pod": name,
                                                                         "phase": phase},
                                         "exited")
            time.sleep(1)
    raise TensorBoardRefused(_("The TensorBoard pod did not start within %(seconds)d s: look "
                               "at its events in the project.")
                             % {"seconds": settings.TENSORBOARD_START_SECONDS}, "not-started")


def stop(board: Board) -> None:
    """End the process and remove its copies, or delete the pod."""
    runtime = board.runtime
    if isinstance(runtime, LocalRuntime):
        if runtime.process is not None and runtime.process.poll() is None:
            runtime.process.terminate()
            try:
                runtime.process.wait(10)
            except subprocess.TimeoutExpired:
                runtime.process.kill()
        shutil.rmtree(runtime.directory, ignore_errors=True)
    elif isinstance(runtime, PodRuntime):
        try:
            with client_for_token(board.token) as client:
                stop_board_pods(client, board.project, board.job_name, runtime.person)
        except errors.ClusterError as e:  # it ends itself (activeDeadlineSeconds)
            log.info("TensorBoard pod of %s not deleted: %s", board.key[1:], e.message)


def check(board: Board, boards: Boards) -> None:
    """A running local board: its process still there, its copies fresh while the job runs
    and the board is used."""
    runtime = board.runtime
    if not isinstance(runtime, LocalRuntime):
        return
    if runtime.process is not None and runtime.process.poll() is not None:
        board.state = FAILED
        board.message = _("TensorBoard ended by itself: %(why)s") % {
            "why": _tail(runtime.directory / "tensorboard.log") or runtime.process.returncode}
        shutil.rmtree(runtime.directory, ignore_errors=True)
        return
    now = time.monotonic()
    due = now - board.refreshed >= settings.TENSORBOARD_REFRESH_SECONDS
    if board.finished or board.refreshing or not due or board.last_used < board.refreshed:
        return
    board.refreshing = True

    def refresh() -> None:
        try:
            with client_for_token(board.token) as client:
                artifacts = read_artifacts(client, runtime.kind, runtime.job, runtime.lister)
                copy_event_files(client, board.project, board.job_name, artifacts,
                                 runtime.logs, runtime.lister)
        except (errors.ODHError, OSError) as e:
            log.info("TensorBoard copies of %s not refreshed: %s", board.key[1:], e)
        finally:
            board.refreshed, board.refreshing = time.monotonic(), False
    threading.Thread(target=refresh, name="tensorboard-refresh", daemon=True).start()
