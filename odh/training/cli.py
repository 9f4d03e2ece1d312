"""`odh-training`: training jobs from a terminal, with the dashboard's rules and words.

    odh-training list [-n PROJECT | -A]
    odh-training describe NAME [-n PROJECT] [--type mpijob]
    odh-training create --name bert --image quay.io/team/bert:1.0 --workers 4 --gpus 2 \
        -- horovodrun -np 8 python train.py
    odh-training create -f mpijob.yaml [--dry-run]
    odh-training logs NAME [--worker 2] [--tail 100]
    odh-training suspend|resume|delete NAME
    odh-training wait NAME [--timeout 3600]

It is a thin shell over the SDK (odh.training.sdk.TrainingClient): the same validation as
the wizard (a spec it refuses is refused here, field by field, before anything reaches the
cluster), the same status summaries as the job pages, the same vocabulary (Launcher,
Workers, Slots per worker; durations as `2h 15m 43s`, resources as `8 CPU, 32Gi, 1 GPU`).
It uses the kubeconfig (`KUBECONFIG`, `--kubeconfig`, `--context`; `oc login` writes one),
so the cluster's RBAC decides, as in the dashboard. The project defaults to the context's
namespace. Every failure is one line on stderr that says what to do, never a traceback;
the exit status is 0 on success, 1 when the cluster refused or failed, 2 for bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TextIO

from odh.training import errors
from odh.training.durations import format_duration
from odh.training.i18n import _
from odh.training.importing import ManifestImportError, parse_manifest_text
from odh.training.kinds import KINDS
from odh.training.model import EnvVar, MPIJobSpec
from odh.training.quantity import format_resources, parse_quantity
from odh.training.spec import build_manifest, manifest_yaml
from odh.training.summary import JobStatus, JobSummary
from odh.training.syntax import read_pairs

# what a person typed on the command line, by the spec attribute a validation error names
FLAGS = {
    "name": "--name", "namespace": "--namespace", "image": "--image", "command": "COMMAND",
    "workers": "--workers", "cpu_per_worker": "--cpu", "memory_per_worker": "--memory",
    "gpus_per_worker": "--gpus", "slots_per_worker": "--slots-per-worker",
    "launcher_cpu": "--launcher-cpu", "launcher_memory": "--launcher-memory",
    "mpi_implementation": "--mpi-implementation", "node_selector": "--node-selector",
    "env": "--env", "priority_class": "--priority-class", "queue_name": "--queue",
}
STATUS_MARKS = {JobStatus.PENDING: "…", JobStatus.RUNNING: "▶", JobStatus.SUCCEEDED: "✔",
                JobStatus.FAILED: "✖", JobStatus.SUSPENDED: "⏸"}

OK, REFUSED, BAD_INPUT = 0, 1, 2


class UsageError(Exception):
    """Bad input on the command line; the message says how to fix it."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="odh-training",
        description=_("Create, watch and manage Kubeflow training jobs (MPIJobs) on OpenShift "
                      "AI, as the dashboard does."))
    parser.add_argument("--kubeconfig", help=_("kubeconfig file (default: $KUBECONFIG or "
                                               "~/.kube/config)"))
    parser.add_argument("--context", help=_("kubeconfig context to use"))
    parser.add_argument("--prometheus", metavar="URL",
                        default=os.environ.get("ODH_PROMETHEUS_URL", ""),
                        help=_("the cluster's Prometheus query API (OpenShift: the Thanos "
                               "querier), for memory peaks and GPU use in diagnoses (default: "
                               "$ODH_PROMETHEUS_URL)"))
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def job_command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("job", metavar="NAME", help=_("the job's name"))
        sub.add_argument("-n", "--namespace", default="",
                         help=_("project (default: the kubeconfig context's)"))
        sub.add_argument("--type", default="mpijob", choices=sorted(KINDS),
                         help=_("job type (default: mpijob)"))
        return sub

    listing = commands.add_parser("list", help=_("list training jobs"))
    where = listing.add_mutually_exclusive_group()
    where.add_argument("-n", "--namespace", default="",
                       help=_("project (default: the kubeconfig context's)"))
    where.add_argument("-A", "--all-projects", action="store_true",
                       help=_("every project you may see"))

    job_command("describe", _("status, Launcher and Workers of one job, and its diagnosis: why "
                              "it fails or waits, and what to do"))

    create = commands.add_parser(
        "create", help=_("create an MPIJob from flags or from a manifest"),
        description=_("Create an MPIJob. Give the training command after `--`, or a manifest "
                      "with -f."))
    create.add_argument("-f", "--filename", help=_("an MPIJob manifest (YAML or JSON); - "
                                                   "reads standard input"))
    create.add_argument("-n", "--namespace", default="",
                        help=_("project (default: the manifest's, else the context's)"))
    create.add_argument("--name", default="", help=_("job name"))
    create.add_argument("--image", default="", help=_("training image"))
    create.add_argument("--workers", type=int, default=None, help=_("number of Workers"))
    create.add_argument("--cpu", default=None, help=_("CPUs per Worker, e.g. 8 or 500m"))
    create.add_argument("--memory", default=None, help=_("memory per Worker, e.g. 32Gi"))
    create.add_argument("--gpus", type=int, default=None, help=_("GPUs per Worker"))
    create.add_argument("--slots-per-worker", type=int, default=None,
                        help=_("MPI slots per Worker (default: GPUs per Worker, or 1)"))
    create.add_argument("--launcher-cpu", default=None, help=_("Launcher CPUs"))
    create.add_argument("--launcher-memory", default=None, help=_("Launcher memory"))
    create.add_argument("--mpi-implementation", default=None,
                        choices=["OpenMPI", "Intel", "MPICH"], help=_("MPI implementation"))
    create.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help=_("environment variable (repeat for more)"))
    create.add_argument("--node-selector", default="", metavar="KEY=VALUE[,KEY=VALUE]",
                        help=_("node labels the Workers need, e.g. "
                               "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB"))
    create.add_argument("--queue", default=None, help=_("Kueue LocalQueue"))
    create.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                        help=_("label of the job (repeat for more)"))
    create.add_argument("--annotation", action="append", default=[], metavar="KEY=VALUE",
                        help=_("annotation of the job (repeat for more)"))
    create.add_argument("--dry-run", action="store_true",
                        help=_("only ask the cluster whether it would accept the job"))
    create.add_argument("--show-yaml", action="store_true",
                        help=_("print the manifest that is sent"))
    create.add_argument("training_command", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                        help=_("the Launcher's command, e.g. horovodrun -np 8 python train.py"))

    logs = job_command("logs", _("the log of the Launcher or of one Worker"))
    logs.add_argument("--worker", type=int, default=None, metavar="N",
                      help=_("Worker N's log (default: the Launcher's)"))
    logs.add_argument("--tail", type=int, default=None, metavar="LINES",
                      help=_("only the last LINES lines"))

    job_command("suspend", _("suspend a job: its Workers stop, it keeps its place"))
    job_command("resume", _("resume a suspended job"))
    job_command("delete", _("delete a job with its Launcher and Workers"))
    wait = job_command("wait", _("wait until a job has Succeeded or Failed"))
    wait.add_argument("--timeout", type=float, default=3600.0, metavar="SECONDS",
                      help=_("give up after SECONDS (default: 3600)"))
    wait.add_argument("--poll", type=float, default=5.0, metavar="SECONDS",
                      help=argparse.SUPPRESS)
    return parser


# -- printing ---------------------------------------------------------------------------------
def _table(rows: list[list[str]], out: TextIO) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
                  .rstrip() + "\n")


def _status(summary: JobSummary) -> str:
    return f"{STATUS_MARKS.get(summary.status, '')} {summary.status.value}".strip()


def _print_list(summaries: list[JobSummary], out: TextIO, now: datetime) -> None:
    if not summaries:
        out.write(_("No training jobs. Create one with: odh-training create --help") + "\n")
        return
    rows = [[_("NAME"), _("TYPE"), _("PROJECT"), _("STATUS"), _("WORKERS"), _("GPUS"),
             _("AGE"), _("DURATION")]]
    for s in summaries:
        age = format_duration((now - s.created).total_seconds()) if s.created else ""
        rows.append([s.name, s.kind.kind, s.namespace, _status(s),
                     f"{s.workers_ready}/{s.workers_total}", str(s.gpus), age,
                     format_duration(s.duration_seconds(now))])
    _table(rows, out)


def _describe(client, name: str, namespace: str, kind: str, prometheus_url: str, out: TextIO,
              now: datetime) -> None:
    """The job's summary, then its diagnosis (why it fails, waits or looks unwell)."""
    from odh.training.diagnosis.gather import Sources, diagnose_job

    prometheus = client.prometheus(prometheus_url) if prometheus_url else None
    try:
        detail, found = diagnose_job(client.cluster, KINDS[kind], namespace, name,
                                     sources=Sources(prometheus=prometheus))
    finally:
        if prometheus is not None:
            prometheus.close()
    _print_summary(detail.summary, out, now)
    if found is not None:
        out.write("\n" + _("Diagnosis:") + "\n")
        out.write("".join(f"  {line}\n" for line in found.text().splitlines()))


def _print_failure(failed, out: TextIO) -> None:
    """What `wait` says of a job that failed: the diagnosis' headline, whose problem it is,
    what to do, and the last log lines it rests on."""
    out.write(_("error: %(headline)s") % {"headline": failed.message} + "\n")
    diagnosis = failed.diagnosis
    if diagnosis is None:
        return
    out.write("".join(f"  {line}\n" for line in diagnosis.text().splitlines()[1:]))


def _print_summary(s: JobSummary, out: TextIO, now: datetime) -> None:
    lines = [
        (_("Job"), f"{s.namespace}/{s.name} ({s.kind.kind})"),
        (_("Status"), _status(s) + (f" ({s.reason})" if s.reason else "")),
        (_("Time in state"), format_duration(s.time_in_state_seconds(now))),
        (_("Step"), s.lifecycle_step),
        (_("Workers ready"), f"{s.workers_ready}/{s.workers_total}"),
        (_("GPUs"), str(s.gpus)),
        (_("Restarts"), str(s.restarts)),
        (_("Created by"), s.created_by or _("unknown")),
        (_("Duration"), format_duration(s.duration_seconds(now))),
    ]
    if s.message:
        lines.append((_("Message"), s.message))
    width = max(len(label) for label, _value in lines)
    for label, value in lines:
        out.write(f"{label + ':':<{width + 1}} {value}\n")
    if s.replicas:
        out.write("\n")
        rows = [[_("POD"), _("ROLE"), _("STATUS"), _("NODE"), _("GPUS"), _("RESTARTS")]]
        for r in s.replicas:
            status = r.status + (f" ({r.reason})" if r.reason else "")
            rows.append([r.name, r.label, status, r.node or "-", str(r.gpus), str(r.restarts)])
        _table(rows, out)


# -- creating ---------------------------------------------------------------------------------
def _quantity(flag: str, value: str) -> str:
    try:
        parse_quantity(value)
    except ValueError:
        raise UsageError(_("%(flag)s: “%(value)s” is not a quantity: write e.g. 8, 500m, "
                           "32Gi.") % {"flag": flag, "value": value[:40]}) from None
    return value


def _spec_from_flags(args: argparse.Namespace) -> MPIJobSpec:
    command = list(args.training_command)
    if command[:1] == ["--"]:
        command = command[1:]
    if args.filename:
        if command:
            raise UsageError(_("Give either a manifest (-f) or a command after --, not both: "
                               "the manifest carries its own command."))
        text = sys.stdin.read() if args.filename == "-" else _read_file(args.filename)
        try:
            spec = parse_manifest_text(text)
        except ManifestImportError as exc:
            raise UsageError(f"{args.filename}: {exc}") from None
    else:
        missing = [flag for flag, value in (("--name", args.name), ("--image", args.image),
                                            ("COMMAND", command)) if not value]
        if missing:
            raise UsageError(_("Missing %(what)s: e.g. odh-training create --name bert --image "
                               "quay.io/team/bert:1.0 --workers 2 -- horovodrun -np 2 python "
                               "train.py") % {"what": ", ".join(missing)})
        spec = MPIJobSpec(name=args.name, image=args.image, command=command)
    if args.name:
        spec.name = args.name
    if args.namespace:
        spec.namespace = args.namespace
    if args.image and args.filename:
        spec.image = args.image
    for attr, flag, value in (("cpu_per_worker", "--cpu", args.cpu),
                              ("memory_per_worker", "--memory", args.memory),
                              ("launcher_cpu", "--launcher-cpu", args.launcher_cpu),
                              ("launcher_memory", "--launcher-memory", args.launcher_memory)):
        if value is not None:
            setattr(spec, attr, _quantity(flag, value))
    for attr, value in (("workers", args.workers), ("gpus_per_worker", args.gpus),
                        ("slots_per_worker", args.slots_per_worker),
                        ("mpi_implementation", args.mpi_implementation),
                        ("queue_name", args.queue)):
        if value is not None:
            setattr(spec, attr, value)
    for item in args.env:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(_("--env “%(item)s”: write NAME=VALUE, e.g. --env "
                               "NCCL_DEBUG=INFO.") % {"item": item[:60]})
        spec.env = [e for e in spec.env if e.name != name] + [EnvVar(name=name, value=value)]
    if args.node_selector:
        spec.node_selector = _pairs("--node-selector", args.node_selector)
    for flag, attr, items in (("--label", "labels", args.label),
                              ("--annotation", "annotations", args.annotation)):
        for item in items:
            setattr(spec, attr, {**getattr(spec, attr), **_pairs(flag, item)})
    return spec


def _pairs(flag: str, text: str) -> dict[str, str]:
    pairs, problems = read_pairs(text)
    if problems:
        raise UsageError(f"{flag}: " + " ".join(problems))
    return pairs


def _read_file(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(4 * 1024 * 1024)
    except OSError as exc:
        raise UsageError(_("Cannot read %(path)s: %(reason)s.")
                         % {"path": path, "reason": exc.strerror or exc}) from None


def _totals(spec: MPIJobSpec) -> str:
    worker = format_resources(_decimal(spec.cpu_per_worker), _decimal(spec.memory_per_worker),
                              spec.gpus_per_worker)
    return _("%(workers)d Workers x %(each)s, %(slots)d slots per worker") % {
        "workers": spec.workers, "each": worker or "-", "slots": spec.effective_slots}


def _decimal(value: str):
    try:
        return parse_quantity(value) if value else None
    except ValueError:
        return None


def _who(client) -> str:
    """The person the kubeconfig signs in as (OpenShift's users/~), recorded as the job's
    creator like the dashboard does; "" where the cluster does not say."""
    try:
        return str(client.cluster.whoami().get("metadata", {}).get("name") or "")
    except errors.ClusterError:
        return ""


# -- running ----------------------------------------------------------------------------------
def _run(args: argparse.Namespace, out: TextIO) -> int:
    # the kubernetes client, lazily
    from odh.training.sdk import InvalidSpec, JobFailedError, TrainingClient

    now = datetime.now(UTC)
    spec = _spec_from_flags(args) if args.command == "create" else None
    with TrainingClient(kubeconfig=args.kubeconfig, context=args.context) as client:
        namespace = args.namespace or client.default_namespace
        if args.command == "list":
            _print_list(client.list_jobs(None if args.all_projects else namespace or None),
                        out, now)
            return OK
        if spec is not None:
            if not spec.created_by:
                spec.created_by = _who(client)
            if args.show_yaml:
                out.write(manifest_yaml(build_manifest(spec)))
            try:
                client.create_mpijob(spec, dry_run=args.dry_run)
            except InvalidSpec as exc:
                for problem in exc.errors:
                    flag = FLAGS.get(problem.field.split("[")[0], problem.field)
                    sys.stderr.write(f"error: {flag}: {problem.message}\n")
                return BAD_INPUT
            project = spec.namespace or client.default_namespace
            text = (_("The cluster would accept the MPIJob %(project)s/%(name)s (dry run, "
                      "nothing created): %(totals)s.") if args.dry_run else
                    _("Created the MPIJob %(project)s/%(name)s: %(totals)s. Follow it with: "
                      "odh-training describe %(name)s -n %(project)s"))
            out.write(text % {"project": project, "name": spec.name,
                              "totals": _totals(spec)} + "\n")
            return OK
        if not namespace:
            raise UsageError(_("Which project? Pass -n PROJECT (the kubeconfig context names "
                               "none)."))
        name, kind = args.job, args.type
        if args.command == "describe":
            _describe(client, name, namespace, kind, args.prometheus, out, now)
        elif args.command == "logs":
            out.write(client.logs(name, namespace, worker=args.worker, tail_lines=args.tail))
        elif args.command == "suspend":
            client.suspend(name, namespace, kind)
            out.write(_("Suspended %(project)s/%(name)s: its Workers stop; resume it with "
                        "odh-training resume %(name)s -n %(project)s")
                      % {"project": namespace, "name": name} + "\n")
        elif args.command == "resume":
            client.resume(name, namespace, kind)
            out.write(_("Resumed %(project)s/%(name)s.") % {"project": namespace,
                                                            "name": name} + "\n")
        elif args.command == "delete":
            client.delete_job(name, namespace, kind)
            out.write(_("Deleted %(project)s/%(name)s with its Launcher and Workers.")
                      % {"project": namespace, "name": name} + "\n")
        elif args.command == "wait":
            try:
                final = client.wait(name, namespace, timeout=args.timeout,
                                    poll_seconds=args.poll, kind=kind)
            except JobFailedError as failed:
                _print_failure(failed, sys.stderr)
                return REFUSED
            out.write(_("%(name)s %(status)s after %(duration)s.") % {
                "name": name, "status": final.status.value,
                "duration": format_duration(final.duration_seconds())} + "\n")
            return OK if final.status == JobStatus.SUCCEEDED else REFUSED
    return OK


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args, out or sys.stdout)
    except UsageError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return BAD_INPUT
    except errors.ClusterError as exc:
        message = exc.message
        if type(exc).__name__ == "ConfigurationError" and not args.kubeconfig:
            message = _('No cluster to talk to: log in with "oc login", set KUBECONFIG, or '
                        "pass --kubeconfig.")
        sys.stderr.write(f"error: {message}\n")
        return REFUSED
    except TimeoutError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return REFUSED
    except KeyboardInterrupt:
        return 130


def main_exit() -> None:
    """The console script's entry point (`odh-training`)."""
    sys.exit(main())


if __name__ == "__main__":
    main_exit()
