"""Waiting for a job's end (`--wait`, `odh training wait`): its changes followed as they
happen, each new status said, and what its end means for the exit code."""


from __future__ import annotations

import sys
from typing import TextIO

from odh.training.cli import OK, REFUSED
from odh.training.cli.errout import err as _err
from odh.training.durations import format_duration
from odh.training.i18n import _
from odh.training.status.summary import JobStatus


def await_end(client, name: str, namespace: str, kind: str, timeout: float,
           wait_for: str | None, out: TextIO) -> int:
    from odh.training.errors import JobFailedError

    finished = (JobStatus.SUCCEEDED, JobStatus.FAILED)
    # a job that ends will not get to the status waited for
    until = tuple(dict.fromkeys(((JobStatus(wait_for),) if wait_for else ()) + finished))
    try:
        final = client.wait(name, namespace, until=until, timeout=timeout, kind=kind,
                            raise_on_failure=wait_for != JobStatus.FAILED)
    except JobFailedError as failed:
        _err(_("error: %(headline)s") % {"headline": failed.message})
        if failed.diagnosis is not None:
            sys.stderr.write("".join(f"  {line}\n" for line in
                                     failed.diagnosis.text().splitlines()[1:]))
        return REFUSED
    wanted = JobStatus(wait_for) if wait_for else JobStatus.SUCCEEDED
    if wait_for and final.status != wanted:
        _err(_("error: %(name)s is %(status)s: it will not be %(wanted)s.") % {
            "name": name, "status": final.status.value, "wanted": wanted.value})
        return REFUSED
    out.write(_("%(name)s %(status)s after %(duration)s.") % {
        "name": name, "status": final.status.value,
        "duration": format_duration(final.duration_seconds())} + "\n")
    return OK if final.status == wanted else REFUSED
