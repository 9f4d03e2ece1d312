"""What each verb of `odh training` does, through the SDK (TrainingClient, MPIJob)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

from odh.training import errors
from odh.training.cli import BAD_INPUT, OK, REFUSED
from odh.training.cli.creating import UsageError, fix_flags, spec_from_args
from odh.training.cli.errout import err as _err
from odh.training.cli.output import (
    describe_record,
    dump,
    now_utc,
    print_describe,
    print_list,
)
from odh.training.cli.submitting import create, create_offline
from odh.training.cli.waiting import await_end
from odh.training.cluster.jobwatch import job_changes, wait_until_gone
from odh.training.i18n import _
from odh.training.kinds import KINDS, creatable_kinds, kind_for_slug
from odh.training.logs.logfollow import (
    follow_pod_lines,
    interleaved,
    pod_expected,
    pod_for,
    pod_label,
    read_text,
    wait_for_pod,
    worker_pods,
)
from odh.training.status.summary import JobStatus
from odh.training.status.suspending import set_suspended


def run(args: argparse.Namespace, out: TextIO) -> int:
    if args.verb == "create":
        kind = kind_for_slug(args.kind)
        if not kind.creatable:
            made = creatable_kinds()
            raise UsageError(_("%(kind)s jobs are not created here; these are: %(kinds)s "
                               "(odh training create %(slugs)s NAME ...).")
                             % {"kind": kind.label, "kinds": ", ".join(k.plural_label
                                                                       for k in made),
                                "slugs": "|".join(k.slug for k in made)})
        spec = spec_from_args(args, args.name, kind)
        if args.dry_run == "client":
            return create_offline(args, spec, out)
    from odh.training.sdk import TrainingClient

    with TrainingClient(kubeconfig=args.kubeconfig, context=args.context) as client:
        namespace = args.namespace or client.default_namespace
        if args.verb == "create":
            return create(args, client, spec, namespace, out)
        if args.verb == "list" and args.runtimes:
            from odh.training.cli.runtimes import list_runtimes
            return list_runtimes(args, client, namespace, out)
        if args.verb in ("list", "get") and not args.name:
            return _list(args, client, namespace, out)
        if not namespace:
            raise UsageError(_("Which project? Pass -n PROJECT (the kubeconfig context names "
                               "none)."))
        return VERBS[args.verb](args, client, namespace, out)


# -- reading -------------------------------------------------------------------------------
def _list(args: argparse.Namespace, client, namespace: str, out: TextIO) -> int:
    everywhere = args.all_namespaces or not namespace
    # no type named: every kind, as the dashboard's list shows them
    where = None if everywhere else namespace
    # the STEP column (wide, json, yaml) says each job's story, as the dashboard's list
    chosen = {"selector": args.selector or None, "user": args.user or None}
    listed, told = client.list_told(where, **chosen) if args.output else (
        client.list_jobs(where, **chosen), {})
    summaries = [s for s in listed
                 if (s.kind.slug == args.kind or not args.kind_given)
                 and (not args.status or s.status == args.status)
                 and (not getattr(args, "queue", "") or s.queue == args.queue)]
    print_list(summaries, out, now_utc(), fmt=args.output, all_namespaces=everywhere,
               told=told)
    return OK


def _get(args: argparse.Namespace, client, namespace: str, out: TextIO) -> int:
    if args.output in ("json", "yaml"):
        dump(client.get_job(args.name, namespace, args.kind), args.output, out)
        return OK
    summary = client.summary(args.name, namespace, args.kind)
    print_list([summary], out, now_utc(), fmt=args.output)
    return OK


def _diagnosed(client, args: argparse.Namespace, namespace: str):
    from odh.training.diagnosis.gather import Sources, diagnose_job

    prometheus = client.prometheus(args.prometheus) if args.prometheus else None
    try:
        return diagnose_job(client.cluster, KINDS[args.kind], namespace, args.name,
                            sources=Sources(prometheus=prometheus))
    finally:
        if prometheus is not None:
            prometheus.close()


def _describe_once(args: argparse.Namespace, client, namespace: str, out: TextIO):
    from odh.training.cost import read_prices
    from odh.training.queues.start import progress_ends, read_standing
    detail, found = _diagnosed(client, args, namespace)
    if found is not None:
        found = _with_fix_commands(found, args.kind, detail.summary.name, namespace)
    now = now_utc()
    # where it stands in Kueue's queue, if it names one (what the person may read of it)
    standing = read_standing(client.cluster, KINDS[args.kind], detail.job,
                             ends_in=progress_ends(client.cluster, now)) \
        if not detail.summary.is_finished else None
    prices = read_prices(client.cluster)
    if args.output:
        dump(describe_record(detail.job, detail.summary, detail.events, found, now,
                             standing, prices), args.output, out)
    else:
        print_describe(detail.job, detail.summary, detail.events, found, out, now, standing,
                       prices)
    out.flush()
    return detail.summary


def _with_fix_commands(found, kind: str, name: str, namespace: str):
    """The diagnosis with each fix the flags can make given as the command that makes it:
    the job's manifest, with the fix's flags on top, created under a new name (the
    wizard's "Clone with this fix")."""
    import dataclasses

    suggestions = []
    for s in found.suggestions:
        flags = fix_flags(s.fix) if s.fix is not None else ""
        if flags:
            s = dataclasses.replace(s, command=(
                f"odh training get {kind} {name} -n {namespace} -o yaml | odh training "
                f"create {kind} {name}-fix -n {namespace} -f - {flags}"))
        suggestions.append(s)
    return dataclasses.replace(found, suggestions=suggestions)


def _describe(args: argparse.Namespace, client, namespace: str, out: TextIO) -> int:
    if not args.watch:
        _describe_once(args, client, namespace, out)
        return OK
    shown = None
    for obj in job_changes(client.cluster, KINDS[args.kind], namespace, args.name):
        if obj is None:
            _err(_("%(name)s was deleted.") % {"name": args.name})
            return REFUSED
        summary = client.summary(args.name, namespace, args.kind)
        key = (summary.status, summary.lifecycle_step, summary.workers_ready, summary.reason,
               tuple((r.name, r.status, r.reason) for r in summary.replicas))
        if key == shown:
            continue
        if shown is not None:
            out.write("\n" + "-" * 79 + "\n")
        shown = key
        summary = _describe_once(args, client, namespace, out)
        if summary.is_finished:
            return OK if summary.status == JobStatus.SUCCEEDED else REFUSED
    return OK


def _not_started(who: str) -> None:
    _err(_("note: %(who)s has not started yet: no log to show. Follow it with --follow.")
         % {"who": who})


def _logs(args: argparse.Namespace, client, namespace: str, out: TextIO) -> int:
    """What exists is printed; what has not started yet is named on stderr (exit 0: a job
    just created is not an error); --follow waits for it. --previous: the crashed run."""
    kind = KINDS[args.kind]
    if args.previous and (args.follow or args.all_workers):
        _err(_("error: --previous reads one pod's crashed run: give --worker N (or none for "
               "the Launcher), without --follow or --all-workers."))
        return BAD_INPUT
    if args.all_workers:
        pods = worker_pods(client.cluster, kind, namespace, args.name)
        while not pods and args.follow:
            client.cluster.get_job(kind, namespace, args.name)  # NotFound: it is gone
            time.sleep(1.0)
            pods = worker_pods(client.cluster, kind, namespace, args.name)
        if not pods:
            client.cluster.get_job(kind, namespace, args.name)
            _err(_("note: no Worker of %(name)s has started yet: no log to show. Follow them "
                   "with --follow.") % {"name": args.name})
            return OK
        not_yet: list = []
        for pod, text in interleaved(client.cluster, namespace, pods, follow=args.follow,
                                     tail=args.tail, not_yet=not_yet):
            out.write(f"[{pod.tag}] {text}\n")
            if args.follow:
                out.flush()
        for pod in not_yet:
            _not_started(pod_label(pod))
        return OK
    if args.follow:
        pod = wait_for_pod(client.cluster, kind, namespace, args.name, args.worker)
    else:
        try:
            pod = pod_for(client.cluster, kind, namespace, args.name, args.worker)
        except errors.NotFound:
            if not pod_expected(client.cluster, kind, namespace, args.name, args.worker):
                raise  # no such job, or a pod it will never have
            _not_started(_("Worker %(index)d") % {"index": args.worker}
                         if args.worker is not None else _("The Launcher"))
            return OK
    if not args.follow:
        text = read_text(client.cluster, namespace, pod, args.tail, previous=args.previous)
        if text is None:
            _not_started(pod_label(pod))
            return OK
        out.write(text)
        return OK
    for _stamp, text in follow_pod_lines(client.cluster, namespace, pod.name, pod.container,
                                         tail=args.tail):
        out.write(text + "\n")
        out.flush()
    return OK


# -- metrics -------------------------------------------------------------------------------
def _metrics(args: argparse.Namespace, client, namespace: str, out: TextIO) -> int:
    """The series `MPIJob.get_metrics()` returns: as JSON that dict, as CSV a row a point."""
    from odh.training.metrics.export import csv_text, read_series
    try:
        data = read_series(client, KINDS[args.kind], namespace, args.name, names=args.metric,
                           start=args.start, end=args.end, prometheus=args.prometheus)
    except ValueError as e:
        _err(_("error: %(problem)s") % {"problem": e})
        return BAD_INPUT
    if args.output == "json":
        dump(data, "json", out)
    else:
        out.write(csv_text(data))
    return OK


# -- waiting and changing ------------------------------------------------------------------
def _wait(args: argparse.Namespace, client, namespace: str, out: TextIO) -> int:
    return await_end(client, args.name, namespace, args.kind, args.timeout, args.wait_for or None,
                  out)


def _suspend(args: argparse.Namespace, client, namespace: str, out: TextIO) -> int:
    values = {"project": namespace, "name": args.name, "kind": args.kind}
    done = set_suspended(client.cluster, KINDS[args.kind], namespace, args.name, True)
    if not done.changed:
        out.write(_("%(project)s/%(name)s is already suspended: nothing changed.") % values
                  + "\n")
        return OK
    out.write(_("Suspended %(project)s/%(name)s: its Workers stop; resume it with: "
                "odh training resume %(kind)s %(name)s -n %(project)s") % values + "\n")
    return OK


def _resume(args: argparse.Namespace, client, namespace: str, out: TextIO) -> int:
    values = {"project": namespace, "name": args.name}
    done = set_suspended(client.cluster, KINDS[args.kind], namespace, args.name, False)
    if not done.changed:
        out.write(_("%(project)s/%(name)s is not suspended: nothing changed.") % values + "\n")
        return OK
    out.write(_("Resumed %(project)s/%(name)s.") % values + "\n")
    return OK


def _confirmed(args: argparse.Namespace, namespace: str) -> bool:
    if args.confirm:
        return True
    if not sys.stdin.isatty():
        raise UsageError(_("Deleting %(project)s/%(name)s cannot be undone: pass --confirm "
                           "to delete it without being asked.")
                         % {"project": namespace, "name": args.name})
    sys.stderr.write(_("Delete %(project)s/%(name)s with its Launcher and Workers? [y/N] ")
                     % {"project": namespace, "name": args.name})
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _delete(args: argparse.Namespace, client, namespace: str, out: TextIO) -> int:
    kind = KINDS[args.kind]
    if not args.name:
        from odh.training.cli.bulk import delete_chosen
        return delete_chosen(args, client, namespace, kind, out)
    client.cluster.get_job(kind, namespace, args.name)  # a job not there says so first
    if not _confirmed(args, namespace):
        _err(_("Nothing deleted."))
        return REFUSED
    client.delete_job(args.name, namespace, kind)
    if args.wait:
        wait_until_gone(client.cluster, kind, namespace, args.name, args.timeout)
    out.write(_("Deleted %(project)s/%(name)s with its Launcher and Workers.")
              % {"project": namespace, "name": args.name} + "\n")
    return OK


VERBS = {"get": _get, "describe": _describe, "logs": _logs, "metrics": _metrics, "wait": _wait,
         "suspend": _suspend, "resume": _resume, "delete": _delete}
