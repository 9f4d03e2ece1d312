"""`odh training ...`: training jobs from a terminal, with the dashboard's rules and words.

    odh training create mpijob bert --image quay.io/team/bert:1.0 --workers 4 \\
        --gpu-per-worker 2 --command "horovodrun -np 8 python train.py" --wait
    odh training create mpijob -f mpijob.yaml [--dry-run=client|server]
    odh training list mpijob [-A] [--status Running] [-o wide|json|yaml]
    odh training describe mpijob bert [--watch] [-o json|yaml]
    odh training logs mpijob bert [--worker 2 | --all-workers] [--follow] [--tail 100]
    odh training wait mpijob bert [--for Running] [--timeout 3600]
    odh training suspend|resume mpijob bert
    odh training delete mpijob bert --confirm [--wait]
    odh completion bash|zsh
    odh login --server https://api.example.com:6443 [--token TOKEN]

`odh-training` is the same as `odh training` (`odh-training list`). It is a thin shell
over the SDK: the wizard's validation and resource check (a spec it refuses is refused
here, named by the flag or the manifest field, before anything reaches the cluster), the
job pages' status summaries, the dashboard's diagnosis, its vocabulary (Launcher,
Workers, Slots per worker; durations `2h 15m 43s`). It uses the kubeconfig
(`KUBECONFIG`, `--kubeconfig`, `--context`; `oc login` writes one), so the cluster's RBAC
decides, as in the dashboard; the project defaults to the context's namespace. Every
failure is one line on stderr that says what to do, never a traceback (a closed pipe and
Ctrl-C included). Exit status: 0 done, 1 the cluster refused or the job failed (or timed
out), 2 bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from odh.training import errors
from odh.training.cli.creating import UsageError
from odh.training.i18n import _

OK, REFUSED, BAD_INPUT = 0, 1, 2
INTERRUPTED = 130

__all__ = ["BAD_INPUT", "OK", "REFUSED", "main", "main_exit", "odh_main", "training_main"]


def _odh_parser() -> argparse.ArgumentParser:
    from odh.training.cli.parsing import ArgumentParser

    parser = ArgumentParser(
        prog="odh", usage="odh training VERB [TYPE] [NAME] [flags] | odh login [--server URL] "
                          "| odh completion bash|zsh",
        description=_("Open Data Hub / OpenShift AI from the command line."),
        epilog=_("See 'odh training --help' for the training jobs' verbs."))
    parser.add_argument("noun", choices=["training", "login", "completion"], metavar="NOUN",
                        help=_("training: training jobs; login: sign in to a cluster; "
                               "completion: a shell completion script"))
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser


def training_main(argv: Sequence[str], out: TextIO, prog: str = "odh training") -> int:
    """`odh training ARGS` (and `odh-training ARGS`)."""
    from odh.training.cli.parsing import parse
    argv = list(argv)
    if argv[:1] == ["completion"]:
        return _completion(argv[1:], out)
    args = parse(argv, prog)
    try:
        from odh.training.cli.commands import run
        return run(args, out)
    except UsageError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return BAD_INPUT
    except errors.ValidationError as exc:
        sys.stderr.write(f"error: {exc.message}\n")
        return BAD_INPUT
    except errors.ClusterError as exc:
        message = exc.message
        if type(exc).__name__ == "ConfigurationError" and not args.kubeconfig:
            message = _('No cluster to talk to: log in with "oc login", set KUBECONFIG, or '
                        "pass --kubeconfig.")
        sys.stderr.write(f"error: {message}\n")
        return REFUSED
    except errors.JobTimeoutError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return REFUSED


def _completion(argv: Sequence[str], out: TextIO) -> int:
    from odh.training.cli.completion import script
    shell = argv[0] if argv else ""
    if shell not in ("bash", "zsh"):
        sys.stderr.write(_("error: say which shell: odh completion bash (or zsh)") + "\n")
        return BAD_INPUT
    out.write(script(shell))
    return OK


def _guarded(run, out: TextIO | None) -> int:
    """Run a command; a closed pipe (`| head`, `| grep -q`: the reader has all it wants, 0)
    and Ctrl-C (130) end it quietly."""
    stream = out or sys.stdout
    try:
        code = run(stream)
        stream.flush()
        return code
    except KeyboardInterrupt:
        sys.stderr.write("\n" + _("Interrupted.") + "\n")
        return INTERRUPTED
    except BrokenPipeError:
        # the reader went away: say nothing more, and let the interpreter's final flush
        # of stdout fail silently
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return OK


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """`odh-training ARGS`: the same as `odh training ARGS`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return _guarded(lambda stream: training_main(argv, stream, prog="odh-training"), out)


def odh_main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """`odh NOUN ...`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    head = _odh_parser().parse_args(argv[:1] or ["--help"])

    def run(stream: TextIO) -> int:
        if head.noun == "completion":
            return _completion(argv[1:], stream)
        if head.noun == "login":
            from odh.training.cli.login import run_login
            return run_login(argv[1:], stream)
        return training_main(argv[1:], stream)

    return _guarded(run, out)


def _exit(code: int) -> None:
    sys.exit(code)


def main_exit() -> None:
    """The `odh-training` console script."""
    _exit(main())


def odh_exit() -> None:
    """The `odh` console script."""
    _exit(odh_main())
