"""`odh training list runtimes [-n PROJECT] [-o wide|json|yaml]`: the runtimes a TrainJob of
the project may run on (the cluster's ClusterTrainingRuntimes, then the project's
TrainingRuntimes), with their framework and description."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TextIO

from odh.training.cli import OK
from odh.training.cli.output import dump
from odh.training.i18n import _
from odh.training.jobs.trainjob import read_runtimes_of


def list_runtimes(args: argparse.Namespace, client, namespace: str, out: TextIO) -> int:
    found = read_runtimes_of(namespace, client=client)
    if not found.cluster_listed:
        sys.stderr.write(_("note: you may not list the cluster's runtimes "
                           "(ClusterTrainingRuntimes): shown are the project's and those its "
                           "TrainJobs run on.") + "\n")
    if args.output in ("json", "yaml"):
        dump({"items": [dataclasses.asdict(r) for r in found.items]}, args.output, out)
        return OK
    if not found.items:
        out.write(_("No runtimes: ask your cluster administrator to add one.") + "\n")
        return OK
    headers = [_("NAME"), _("KIND"), _("FRAMEWORK"), _("DESCRIPTION")]
    rows = [[r.name, r.kind, r.framework or "-", r.description or "-"] for r in found.items]
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(3)]
    for row in [headers, *rows]:
        out.write("   ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=False))
                  + "   " + str(row[3]) + "\n")
    return OK
