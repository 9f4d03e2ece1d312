"""What log lines tell about a failure: the tools' own wording, recognised.

Lines are matched after mpirun's rank tag (`[1,0]<stderr>:`) is taken off. Each finder
returns the line it rests on, so the diagnosis can quote it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_RANK_TAG = re.compile(r"^\[(?:\d+,)?\d+\]<(?:stdout|stderr)>:")


def strip_rank_tag(text: str) -> str:
    return _RANK_TAG.sub("", text, count=1)


def _clean(lines: Iterable[str]) -> list[str]:
    return [strip_rank_tag(line).rstrip() for line in lines]


# -- CUDA out of memory -------------------------------------------------------------------------
_CUDA_OOM = re.compile(
    r"CUDA out of memory|torch\.(?:cuda\.)?OutOfMemoryError|CUDA error: out of memory"
    r"|CUBLAS_STATUS_ALLOC_FAILED|RESOURCE_EXHAUSTED: Out of memory|OOM when allocating tensor"
    r"|NCCL error.*Cuda failure 'out of memory'", re.I)
_TRIED = re.compile(r"Tried to allocate ([\d.]+ ?[KMGT]i?B)", re.I)


def cuda_oom(lines: Sequence[str]) -> str | None:
    """The line that says the GPU ran out of memory, or None."""
    for line in reversed(_clean(lines)):
        if _CUDA_OOM.search(line):
            return line
    return None


def tried_to_allocate(line: str) -> str:
    m = _TRIED.search(line)
    return m.group(1) if m else ""


# -- MPI start-up and communication -------------------------------------------------------------
@dataclass(frozen=True)
class MpiTrouble:
    kind: str   # "refused" | "timeout" | "reset" | "unreachable" | "resolve" | "auth" | "orte"
    host: str   # the host mpirun could not reach ("" when the line names none)
    line: str


_SSH = re.compile(r"ssh: connect to host (\S+) port \d+: (Connection refused|Connection timed "
                  r"out|No route to host|Network is unreachable)")
_RESET = re.compile(r"(?:Connection reset by|Connection closed by) (\S+) port \d+")
_KEX = re.compile(r"kex_exchange_identification:")
_RESOLVE = re.compile(r"ssh: Could not resolve hostname (\S+):")
_AUTH = re.compile(r"Permission denied \(publickey|Host key verification failed")
_ORTE = re.compile(r"ORTE was unable to reliably start one or more daemons|MPI_Init(?:_thread)? "
                   r"failed|PMIx? .*(?:failed|unreachable)|orted.*(?:failed|not found)", re.I)
_SSH_KINDS = {"Connection refused": "refused", "Connection timed out": "timeout",
              "No route to host": "unreachable", "Network is unreachable": "unreachable"}


def mpi_trouble(lines: Sequence[str]) -> MpiTrouble | None:
    """How mpirun failed to reach its Workers, from the Launcher's log, or None.

    The first failing connection counts (later ones repeat it); ORTE's "unable to reliably
    start one or more daemons" alone (no ssh line) still says that start-up failed."""
    cleaned = _clean(lines)
    orte = None
    for index, line in enumerate(cleaned):
        if m := _SSH.search(line):
            return MpiTrouble(_SSH_KINDS.get(m.group(2), "refused"), m.group(1), line)
        if m := _RESET.search(line):
            before = cleaned[index - 1] if index else ""
            return MpiTrouble("reset", m.group(1), before if _KEX.search(before) else line)
        if _KEX.search(line):
            return MpiTrouble("reset", "", line)
        if _AUTH.search(line):
            return MpiTrouble("auth", "", line)
        if orte is None and _ORTE.search(line):
            orte = line
    if orte is not None:
        resolve = next((ln for ln in cleaned if _RESOLVE.search(ln)), None)
        if resolve is not None:
            host = _RESOLVE.search(resolve).group(1)  # type: ignore[union-attr]
            return MpiTrouble("resolve", host, resolve)
        return MpiTrouble("orte", "", orte)
    return None


def lost_daemon(lines: Sequence[str]) -> bool:
    """ORTE lost a running daemon: the consequence of a Worker that died, not a cause."""
    return any("lost communication with its daemon" in line for line in _clean(lines))


# -- the program could not be started -------------------------------------------------------------
_NOT_FOUND = re.compile(r"(?::\s*(\S+): (?:command )?not found$)|executable file not found in "
                        r"\$PATH|mpirun was unable to find the specified executable|"
                        r"exec: \"[^\"]*\": (?:executable file not found|no such file)|"
                        r"can't open file .*No such file or directory", re.I)
_NOT_EXECUTABLE = re.compile(r":\s*(\S+): Permission denied$|exec format error|"
                             r"permission denied.*exec|cannot execute binary file", re.I)
_EXECUTABLE = re.compile(r"^Executable:\s*(\S+)")


def command_not_found(lines: Sequence[str]) -> str | None:
    """The line saying the program does not exist (127, StartError), or None."""
    cleaned = _clean(lines)
    for line in reversed(cleaned):
        if _NOT_FOUND.search(line):
            return line
    return None


def not_executable(lines: Sequence[str]) -> str | None:
    for line in reversed(_clean(lines)):
        if _NOT_EXECUTABLE.search(line):
            return line
    return None


def missing_program(line: str) -> str:
    """The program a "not found" line names ("pyhton"), or ""."""
    if m := re.search(r":\s*(\S+): (?:command )?not found$", line):
        return m.group(1)
    if m := re.search(r'exec: "([^"]*)"', line):
        return m.group(1)
    if m := _EXECUTABLE.search(line):
        return m.group(1)
    return ""


# -- crashes ----------------------------------------------------------------------------------
_SEGFAULT = re.compile(r"Segmentation fault|signal 11\b|SIGSEGV", re.I)


def segfault(lines: Sequence[str]) -> str | None:
    for line in reversed(_clean(lines)):
        if _SEGFAULT.search(line):
            return line
    return None


# -- what went wrong at the end -------------------------------------------------------------------
_ERRORISH = re.compile(r"(?:Error|Exception|error:|FATAL|Fatal|Killed|Aborted|Traceback)")
_BANNER = re.compile(r"^-{20,}$")
MAX_QUOTED = 8


def last_error_lines(lines: Sequence[str], limit: int = MAX_QUOTED) -> list[str]:
    """The lines that best say how a program ended: its last traceback (the call that
    failed and the exception), else its last lines that look like errors, else its last
    lines. At most `limit`, in order, without mpirun's banners."""
    cleaned = [line for line in _clean(lines) if line.strip() and not _BANNER.match(line)]
    start = None
    for index in range(len(cleaned) - 1, -1, -1):
        if cleaned[index].startswith("Traceback (most recent call last)"):
            start = index
            break
    if start is not None:
        block = [cleaned[start]]
        for line in cleaned[start + 1:]:
            block.append(line)
            if not line.startswith((" ", "\t")):
                break  # the exception line ends the traceback
        return block if len(block) <= limit else [block[0], *block[-(limit - 1):]]
    errors = [line for line in cleaned if _ERRORISH.search(line)]
    return (errors or cleaned)[-limit:]


def last_line(lines: Sequence[str]) -> str:
    cleaned = [line for line in _clean(lines) if line.strip()]
    return cleaned[-1] if cleaned else ""


# -- hints for fixes -----------------------------------------------------------------------------
_BATCH_IN_LOG = re.compile(r"batch[ _-]size[ =:]*(\d+)", re.I)


def batch_size_in_log(lines: Sequence[str]) -> int | None:
    for line in reversed(_clean(lines)):
        if m := _BATCH_IN_LOG.search(line):
            value = int(m.group(1))
            if value > 0:
                return value
    return None
