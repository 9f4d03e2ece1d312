"""The command line's grammar: `odh training VERB [TYPE] [NAME] [flags]`, as kubectl has it.

TYPE is a job type (mpijob, pytorchjob, tfjob, trainjob; plurals too) and may be left out
(then `--type`, by default mpijob), so `odh training describe bert` still works. Flags
and names may come in any order; for `create`, what follows `--` is the training command.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from odh.training.i18n import _
from odh.training.kinds import KINDS, command_line_flags, default_kind
from odh.training.manifests.templates import BUILTIN_TEMPLATES
from odh.training.metrics.export import EXPORT_KEYS

VERBS = ("create", "get", "list", "describe", "logs", "metrics", "wait", "suspend", "resume",
         "delete")
# kubectl's spellings of a type: "mpijob", "mpijobs", "MPIJob"
TYPE_WORDS = {**{slug: slug for slug in KINDS}, **{slug + "s": slug for slug in KINDS}}
STATUSES = ("Pending", "Running", "Succeeded", "Failed", "Suspended")
RUNTIMES = ("runtime", "runtimes")


class ArgumentParser(argparse.ArgumentParser):
    """argparse that says what to do: the error, then the command to get help."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"error: {message}\n" + _("See: %(prog)s --help") % {"prog": self.prog}
                  + "\n")


def _connection(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(_("cluster"))
    group.add_argument("--kubeconfig", help=_("kubeconfig file (default: $KUBECONFIG or "
                                              "~/.kube/config, which oc login writes)"))
    group.add_argument("--context", help=_("kubeconfig context to use"))
    group.add_argument("-n", "--namespace", default="",
                       help=_("project (default: the kubeconfig context's)"))
    group.add_argument("--type", default="", choices=sorted(KINDS), help=argparse.SUPPRESS)


def _target(parser: argparse.ArgumentParser, name_required: bool) -> None:
    parser.add_argument("target", nargs="*", metavar="TYPE NAME" if name_required else
                        "TYPE [NAME]",
                        help=_("the job type (mpijob, pytorchjob, tfjob; default mpijob) and "
                               "the job's name"))


def _output(parser: argparse.ArgumentParser, choices: Sequence[str]) -> None:
    parser.add_argument("-o", "--output", default="", choices=list(choices),
                        help=_("output format: %(formats)s (default: a table)")
                        % {"formats": "|".join(choices)})


def _prometheus(parser: argparse.ArgumentParser, text: str) -> None:
    parser.add_argument("--prometheus", metavar="URL",
                        default=os.environ.get("ODH_PROMETHEUS_URL", ""), help=text)


def _selection(parser: argparse.ArgumentParser, selector_help: str = "") -> None:
    parser.add_argument("-l", "--selector", default="", metavar="SELECTOR",
                        help=selector_help or _("only jobs whose labels match, e.g. "
                                                "team=nlp,tier!=test"))
    parser.add_argument("--user", default="", metavar="USER",
                        help=_("only jobs this person created"))


def verb_parser(verb: str, prog: str) -> ArgumentParser:
    """The parser of one verb (its --help lists its flags)."""
    helps = {
        "create": _("create an MPIJob or a TrainJob from flags or a manifest, checked as the "
                    "wizard checks it"),
        "get": _("show one job, or list them; -o yaml|json gives the object itself"),
        "list": _("list training jobs with their status"),
        "describe": _("status, Workers, resources, events and the diagnosis of one job"),
        "logs": _("the log of the Launcher or of Workers"),
        "metrics": _("a job's GPU, CPU, memory, network and disk series and its training "
                     "curves, as the Metrics tab charts them, as CSV or JSON"),
        "wait": _("wait until a job has finished (or reached --for STATUS)"),
        "suspend": _("suspend a job: its Workers stop, it keeps its place"),
        "resume": _("resume a suspended job"),
        "delete": _("delete a job with its Launcher and Workers"),
    }
    p = ArgumentParser(prog=f"{prog} {verb}", description=helps[verb])
    _target(p, verb not in ("list", "get", "create"))
    _connection(p)
    if verb == "create":
        p.add_argument("-f", "--filename", "--config", dest="filename",
                       help=_("an MPIJob or TrainJob manifest (YAML or JSON); - reads "
                              "standard input"))
        p.add_argument("--template", default="", metavar="TEMPLATE",
                       help=_("start from one of the dashboard's templates (%(names)s)")
                       % {"names": ", ".join(t.slug for t in BUILTIN_TEMPLATES)})
        p.add_argument("--set", dest="set_fields", action="append", default=[],
                       metavar="PATH=VALUE",
                       help=_("set any field of the manifest, e.g. "
                              "spec.runPolicy.backoffLimit=3 (repeat for more)"))
        p.add_argument("--output-artifacts", default=None, metavar="PATH",
                       help=_("where the job writes its results, e.g. /mnt/output (the "
                              "Artifacts tab lists them)"))
        p.add_argument("--retries", type=int, default=None, metavar="N",
                       help=_("start the job again up to N times when it fails on the "
                              "platform (a node lost, an eviction, a preemption), each "
                              "after a longer wait"))
        p.add_argument("--retry-all-failures", action="store_true",
                       help=_("with --retries: retry any failure, not only the platform's"))
        p.add_argument("--name", default="", help=argparse.SUPPRESS)
        p.add_argument("--image", default="", help=_("training image"))
        p.add_argument("--command", dest="command_text", default=None, metavar='"COMMAND"',
                       help=_('the Launcher\'s command, e.g. "horovodrun -np 8 python '
                              'train.py" (or give it after --)'))
        p.add_argument("--workers", "--nodes", dest="workers", type=int, default=None,
                       help=_("number of Workers (a TrainJob's nodes: --nodes)"))
        for flag in command_line_flags():  # those only some kinds' jobs take
            p.add_argument(flag.flag, default=None, choices=list(flag.choices) or None,
                           type=int if flag.whole_number else None, help=str(flag.help))
        p.add_argument("--gpu-per-worker", "--gpus", dest="gpus", type=int, default=None,
                       help=_("GPUs per Worker"))
        p.add_argument("--cpu-per-worker", "--cpu", dest="cpu", default=None,
                       help=_("CPUs per Worker, e.g. 8 or 500m"))
        p.add_argument("--memory-per-worker", "--memory", dest="memory", default=None,
                       help=_("memory per Worker, e.g. 32Gi"))
        p.add_argument("--slots-per-worker", type=int, default=None,
                       help=_("MPI slots per Worker (default: GPUs per Worker, or 1)"))
        p.add_argument("--launcher-cpu", default=None, help=_("Launcher CPUs"))
        p.add_argument("--launcher-memory", default=None, help=_("Launcher memory"))
        p.add_argument("--mpi-implementation", default=None,
                       choices=["OpenMPI", "Intel", "IntelMPI", "MPICH"],
                       help=_("MPI implementation"))
        p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                       help=_("environment variable (repeat for more)"))
        p.add_argument("--env-secret", action="append", default=[],
                       metavar="NAME=SECRET:KEY",
                       help=_("environment variable read from a key of a Secret (repeat "
                              "for more)"))
        p.add_argument("--volume", action="append", default=[], metavar="CLAIM:PATH[:ro]",
                       help=_("mount an existing PersistentVolumeClaim of the project on "
                              "the Launcher and every Worker, e.g. data:/data (:ro: "
                              "read-only; repeat for more)"))
        p.add_argument("--image-pull-secret", default=None, metavar="SECRET",
                       help=_("Secret to pull the image with"))
        p.add_argument("--node-selector", default="", metavar="KEY=VALUE[,KEY=VALUE]",
                       help=_("node labels the Workers need, e.g. "
                              "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB"))
        p.add_argument("--queue", default=None, help=_("Kueue LocalQueue"))
        p.add_argument("--priority-class", default=None, help=_("PriorityClass of the pods"))
        p.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                       help=_("label of the job (repeat for more)"))
        p.add_argument("--annotation", action="append", default=[], metavar="KEY=VALUE",
                       help=_("annotation of the job (repeat for more)"))
        p.add_argument("--dry-run", nargs="?", const="server", default="",
                       choices=["client", "server"],
                       help=_("client: check the job here and print its manifest, sending "
                              "nothing; server (also a bare --dry-run): also ask the cluster "
                              "whether it would accept it. Nothing is created."))
        p.add_argument("--force", action="store_true",
                       help=_("create the job even if the resource check says it can never "
                              "start"))
        p.add_argument("--wait", action="store_true",
                       help=_("wait until the job has finished; exit 1 if it failed"))
        p.add_argument("--timeout", type=float, default=3600.0, metavar="SECONDS",
                       help=_("with --wait, give up after SECONDS (default: 3600)"))
        p.add_argument("--show-yaml", action="store_true",
                       help=_("print the manifest that is sent"))
        _output(p, ("json", "yaml"))
    elif verb in ("list", "get"):
        p.add_argument("-A", "--all-namespaces", "--all-projects", dest="all_namespaces",
                       action="store_true", help=_("every project you may see"))
        p.add_argument("--status", default="", type=str.capitalize, choices=STATUSES,
                       help=_("only jobs with this status"))
        p.add_argument("--queue", default="", metavar="QUEUE",
                       help=_("only jobs in this Kueue LocalQueue"))
        _selection(p)
        _output(p, ("wide", "json", "yaml"))
    elif verb == "describe":
        p.add_argument("-w", "--watch", action="store_true",
                       help=_("print again each time the job changes, until it has finished"))
        _prometheus(p, _("the cluster's Prometheus query API (OpenShift: the Thanos "
                         "querier), for memory peaks and GPU use in the diagnosis "
                         "(default: $ODH_PROMETHEUS_URL)"))
        _output(p, ("json", "yaml"))
    elif verb == "logs":
        p.add_argument("--worker", type=int, default=None, metavar="N",
                       help=_("Worker N's log (default: the Launcher's)"))
        p.add_argument("--all-workers", action="store_true",
                       help=_("every Worker's log, interleaved in time order, each line "
                              "prefixed with its Worker"))
        p.add_argument("-f", "--follow", action="store_true",
                       help=_("keep printing lines as they are written, until the pod ends"))
        p.add_argument("--tail", type=int, default=None, metavar="N",
                       help=_("only the last N lines"))
        p.add_argument("-p", "--previous", action="store_true",
                       help=_("the crashed run: the log of the pod's container before it "
                              "last restarted"))
    elif verb == "metrics":
        _prometheus(p, _("the cluster's Prometheus query API (OpenShift: the Thanos "
                         "querier) (default: $ODH_PROMETHEUS_URL)"))
        p.add_argument("--metric", action="append", default=None, choices=list(EXPORT_KEYS),
                       help=_("only this chart's series (repeat for more; default: all)"))
        p.add_argument("--start", default=None, metavar="TIME",
                       help=_("from TIME, e.g. 2025-01-31T12:00:00Z (default: the job's "
                              "start)"))
        p.add_argument("--end", default=None, metavar="TIME",
                       help=_("until TIME (default: the job's end, or now)"))
        p.add_argument("-o", "--output", default="csv", choices=["csv", "json"],
                       help=_("output format: %(formats)s (default: csv)")
                       % {"formats": "csv|json"})
    elif verb == "wait":
        p.add_argument("--timeout", type=float, default=3600.0, metavar="SECONDS",
                       help=_("give up after SECONDS (default: 3600; exit 1)"))
        p.add_argument("--for", dest="wait_for", default="", type=str.capitalize,
                       choices=STATUSES,
                       help=_("wait for this status instead of the end (Succeeded or Failed)"))
    elif verb == "delete":
        p.add_argument("--confirm", "--yes", "-y", dest="confirm", action="store_true",
                       help=_("delete without asking (needed when not at a terminal)"))
        p.add_argument("--status", default="", type=str.capitalize, choices=STATUSES,
                       help=_("with no NAME: every job with this status"))
        _selection(p, _("with no NAME: every job whose labels match, e.g. team=nlp"))
        p.add_argument("--wait", action="store_true",
                       help=_("return once the cluster no longer has the job"))
        p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                       help=_("with --wait, give up after SECONDS (default: 300)"))
    return p


def noun_parser(prog: str) -> ArgumentParser:
    """`odh training --help`: the verbs."""
    lines = "\n".join(f"  {verb:<10} {verb_parser(verb, prog).description}" for verb in VERBS)
    p = ArgumentParser(
        prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter,
        usage=f"{prog} VERB [TYPE] [NAME] [flags]",
        description=_("Create, watch and manage Kubeflow training jobs (MPIJobs) on "
                      "OpenShift AI, with the dashboard's checks and words."),
        epilog=_("verbs:\n%(verbs)s\n\nTYPE: mpijob (default), pytorchjob, tfjob, trainjob; "
                 "list runtimes lists the TrainJobs' runtimes.\n"
                 "Exit status: 0 done, 1 the cluster refused or the job failed, 2 bad "
                 "input.\nSee '%(prog)s VERB --help' for a verb's flags.")
        % {"verbs": lines, "prog": prog})
    p.add_argument("verb", choices=VERBS, metavar="VERB")
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return p


def parse(argv: Sequence[str], prog: str) -> argparse.Namespace:
    """The verb's flags and its target: `kind` (a JobKind slug) and `name` ("" if none)."""
    top = noun_parser(prog)
    head = top.parse_args(list(argv)[:1] or ["--help"])
    rest = list(argv)[1:]
    training_command: list[str] = []
    if head.verb == "create" and "--" in rest:
        at = rest.index("--")
        rest, training_command = rest[:at], rest[at + 1:]
    parser = verb_parser(head.verb, prog)
    args = parser.parse_intermixed_args(rest)
    args.verb = head.verb
    args.training_command = training_command
    target = list(args.target)
    kind = args.type or default_kind().slug
    args.kind_given = bool(args.type)
    if target and target[0].lower() in TYPE_WORDS:
        kind = TYPE_WORDS[target.pop(0).lower()]
        args.kind_given = True
    # `list runtimes`: the Trainer's runtimes, not jobs
    args.runtimes = head.verb == "list" and bool(target) and target[0].lower() in RUNTIMES
    if args.runtimes:
        target.pop(0)
    if len(target) > 1:
        parser.error(_("one job name at a time (got %(names)s)") % {"names": " ".join(target)})
    args.kind = kind
    args.name = target[0] if target else (getattr(args, "name", "") or "")
    if head.verb == "list" and args.name:
        parser.error(_("list takes no job name: %(prog)s get %(kind)s %(name)s shows one job")
                     % {"prog": prog, "kind": kind, "name": args.name})
    chooses = head.verb == "delete" and (args.selector or args.status or args.user)
    if chooses and args.name:
        parser.error(_("give a job's name or a choice of jobs (-l, --status, --user), not "
                       "both"))
    if head.verb not in ("list", "get", "create") and not args.name and not chooses:
        parser.error(_("which job? e.g. %(prog)s %(verb)s mpijob NAME")
                     % {"prog": prog, "verb": head.verb})
    return args
