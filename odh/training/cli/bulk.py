"""`odh training delete mpijob -l team=nlp --status Failed`: the jobs chosen by labels,
status and creator, named in one confirmation, deleted one by one with the person's own
credentials, each with its result (deleted, already gone, refused and why)."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from odh.training import errors
from odh.training.cli.creating import UsageError
from odh.training.cluster.jobwatch import wait_until_gone
from odh.training.i18n import _, ngettext
from odh.training.kinds import JobKind


def _confirmed(args: argparse.Namespace, namespace: str, kind: JobKind,
               names: list[str]) -> bool:
    listed = ", ".join(names)
    if args.confirm:
        return True
    if not sys.stdin.isatty():
        raise UsageError(_("Deleting %(names)s in %(project)s cannot be undone: pass "
                           "--confirm to delete them without being asked.")
                         % {"names": listed, "project": namespace})
    sys.stderr.write(ngettext(
        "Delete %(count)d %(kind)s in %(project)s with its Launcher and Workers: %(names)s? "
        "[y/N] ",
        "Delete %(count)d %(kinds)s in %(project)s with their Launchers and Workers: "
        "%(names)s? [y/N] ", len(names))
        % {"count": len(names), "kind": kind.label, "kinds": kind.plural_label,
           "project": namespace, "names": listed})
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def delete_chosen(args: argparse.Namespace, client, namespace: str, kind: JobKind,
                  out: TextIO) -> int:
    """Exit status 0 when every chosen job is gone, 1 when one was refused."""
    from odh.training.cli import OK, REFUSED

    chosen = [s for s in client.list_jobs(namespace, selector=args.selector or None,
                                          user=args.user or None)
              if s.kind is kind and (not args.status or s.status == args.status)]
    if not chosen:
        out.write(_("No %(kinds)s in %(project)s match: nothing deleted.")
                  % {"kinds": kind.plural_label, "project": namespace} + "\n")
        return OK
    if not _confirmed(args, namespace, kind, [s.name for s in chosen]):
        sys.stderr.write(_("Nothing deleted.") + "\n")
        return REFUSED
    refused, deleted = 0, []
    for s in chosen:
        try:
            client.delete_job(s.name, s.namespace, kind)
            said = _("deleted")
            deleted.append(s.name)
        except errors.NotFound:
            said = _("already gone")
        except errors.ClusterError as e:
            said = _("not deleted: %(reason)s") % {"reason": e.message}
            refused += 1
        out.write(f"{s.namespace}/{s.name}: {said}\n")
        out.flush()
    if args.wait:
        for name in deleted:
            wait_until_gone(client.cluster, kind, namespace, name, args.timeout)
    return REFUSED if refused else OK
