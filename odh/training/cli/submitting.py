"""What `odh training create` does with the spec the flags or the manifest give
(odh.training.cli.creating): a dry run prints it; otherwise it is checked and created
through the SDK, and what stands in the way is said: the checks' words, the refusal, the
room there is now, the fixes to pass as flags."""


from __future__ import annotations

import argparse
from typing import TextIO

from odh.training import creating
from odh.training.cli import BAD_INPUT, OK
from odh.training.cli.creating import UsageError, fix_flags, where
from odh.training.cli.errout import err as _err
from odh.training.cli.output import (
    dump,
    totals_text,
)
from odh.training.cli.waiting import await_end
from odh.training.findings import errors_of, warnings_of
from odh.training.i18n import _, ngettext
from odh.training.kinds import JobKind
from odh.training.spec import build_manifest, manifest_yaml
from odh.training.validation import validate_spec


# -- create --------------------------------------------------------------------------------
def create_offline(args: argparse.Namespace, spec, out: TextIO) -> int:
    """--dry-run=client: the wizard's own rules, and the manifest; nothing is sent (the
    project, when not given, is the kubeconfig context's, read from the file)."""
    if not spec.namespace:
        from odh.training.sdk import context_namespace
        spec.namespace = context_namespace(args.kubeconfig, args.context) or "default"
    findings = validate_spec(spec)
    for problem in warnings_of(findings):
        _err(_("warning: %(where)s: %(message)s") % {
            "where": where(problem, args.filename, spec.kind), "message": problem.message})
    problems = errors_of(findings)
    for problem in problems:
        _err(f"error: {where(problem, args.filename, spec.kind)}: {problem.message}")
    if problems:
        return BAD_INPUT
    manifest = build_manifest(spec)
    if args.output == "json":
        dump(manifest, "json", out)
    else:
        out.write(manifest_yaml(manifest))
    return OK


def _say_warnings(checked, filename: str | None, kind: JobKind) -> None:
    for problem in checked.warnings:
        _err(_("warning: %(where)s: %(message)s") % {
            "where": where(problem, filename, kind), "message": problem.message})


def _say_refusal(refused: creating.CreateRefused, filename: str | None,
                 kind: JobKind) -> None:
    """A create refused before anything was sent, on stderr: each problem and its fix."""
    if refused.reason == creating.UNKNOWN_FIELDS:
        _err(f"error: {filename}: {refused}")
        return
    if refused.reason == creating.NOT_SERVED:
        _err(f"error: {refused}")
        return
    _say_warnings(refused.checked, filename, kind)
    if refused.reason == creating.COUNT_QUOTA_FULL:  # no fix of the job's, no --force
        _err(_("error: %(headline)s") % {"headline": str(refused)})
        _say_room(refused.room)
        return
    if refused.reason == creating.INVALID:
        for problem in refused.findings:
            _err(f"error: {where(problem, filename, kind)}: {problem.message}")
        return
    if not refused.checked.nodes_readable:
        _err(_("note: you may not list the cluster's nodes, so whether a node is large enough "
               "for a Worker was not checked."))
    fit = refused.checked.fit
    _err(_("error: this job can never start as it is: %(problems)s")
         % {"problems": " ".join(refused.problems)})
    _say_fixes(fit.fixes)
    _err(_("  or pass --force to create it anyway.") if fit.fixes else
         _("  pass --force to create it anyway."))


def _say_room(room) -> None:
    """The oldest finished jobs whose deletion makes room in a full count quota, with the
    commands that delete them, or why none is offered."""
    if room is None:
        return
    if not room.makes_room:
        _err("  " + room.shortfall())
        return
    _err(ngettext("  fix: %(label)s. Delete it with:", "  fix: %(label)s. Delete them with:",
                  len(room.names)) % {"label": room.label()})
    for command in room.commands():
        _err(f"    {command}")


def _say_fixes(fixes) -> None:
    for fix in fixes:
        flags = fix_flags(fix)
        _err(_("  fix: %(flags)s (%(label)s)") % {"flags": flags, "label": fix.label}
             if flags else f"  fix: {fix.label}")


def create(args: argparse.Namespace, client, spec, namespace: str, out: TextIO) -> int:
    spec.namespace = spec.namespace or namespace
    if not spec.namespace:
        raise UsageError(_("Which project? Pass -n PROJECT (the kubeconfig context names "
                           "none)."))
    if not spec.created_by:
        spec.created_by = client.whoami()
    try:  # the one way to create (odh.training.creating), told as a command tells it
        checked = creating.check(client.cluster, spec, from_manifest=bool(args.filename),
                                 force=args.force)
    except creating.CreateRefused as refused:
        _say_refusal(refused, args.filename, spec.kind)
        return BAD_INPUT
    _say_warnings(checked, args.filename, spec.kind)
    if checked.capacity_note:  # what "fits" could not see
        _err(_("note: %(note)s") % {"note": checked.capacity_note})
    fit = checked.fit
    if not fit.fits:
        said = fit.problems + ([fit.node_problem] if fit.node_problem else [])
        _err(_("warning: %(problems)s %(note)s") % {"problems": " ".join(said),
                                                     "note": fit.waiting_note})
        _say_fixes(fit.fixes)  # the project's queue first, where it has one
    if args.show_yaml:
        out.write(manifest_yaml(build_manifest(spec)))
    created = creating.create(client.cluster, spec, dry_run=bool(args.dry_run),
                              checked=checked).object
    values = {"project": spec.namespace, "name": spec.name, "totals": totals_text(spec),
              "kind": spec.kind.label, "slug": spec.kind.slug}
    if args.output:
        dump(created, args.output, out)
    elif args.dry_run:
        out.write(_("The cluster would accept the %(kind)s %(project)s/%(name)s (dry run, "
                    "nothing created): %(totals)s.") % values + " " + checked.verdict + "\n")
    else:
        out.write(_("Created the %(kind)s %(project)s/%(name)s: %(totals)s. Follow it with: "
                    "odh training describe %(slug)s %(name)s -n %(project)s") % values + "\n")
    if args.wait and not args.dry_run:
        out.flush()
        return await_end(client, spec.name, spec.namespace, spec.kind.slug, args.timeout, None, out)
    return OK


