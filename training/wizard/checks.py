"""What the wizard knows about a project and says about a draft.

The project's facts (MPIJob names, claims, priority classes, queues, LimitRanges, quotas)
are read with the person's token; the nodes with the dashboard's service account. The
verdicts themselves come from `odh.training.validation` and `odh.training.capacity.fit`; this module
maps them onto the wizard's form fields and shapes them for the templates.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from decimal import ROUND_CEILING, ROUND_FLOOR

from django.core.cache import cache
from django.utils.translation import gettext as _

from odh.training import errors
from odh.training.capacity.allocation import room_now
from odh.training.capacity.fit import FitReport, check_fit
from odh.training.capacity.nodes import NodeSize
from odh.training.capacity.preflight import ProjectFacts, offer_queue, read_project_facts
from odh.training.capacity.quota import compute_name, resource_title
from odh.training.checks.syntax import command_text
from odh.training.cluster.client import ClusterClient, Project
from odh.training.findings import NP_MISMATCH
from odh.training.kinds import JobKind
from odh.training.manifests.claims import claim_findings
from odh.training.manifests.totals import figure_with_unit
from odh.training.quantity import GPU_RESOURCE, QuantityError, format_resources, parse_quantity
from odh.training.spec import JobSpec
from odh.training.status.room import room_offer
from odh.training.validation import validate_spec
from training.cluster import client_for_token, cluster_config
from training.wizard import changes, drafts, formfields
from training.wizard.projectlists import storage_classes_for
from training.wizard.queue import with_priorities

log = logging.getLogger("training.wizard")

NODES_CACHE_KEY = "wizard:nodes"
NODES_TTL = 30
ROOM_CACHE_KEY = "wizard:room"
ROOM_TTL = 5
_VOLUME_FIELD = re.compile(r"volumes\[(\d+)\]\.(\w+)")


def get_project_facts_for_user(client: ClusterClient, namespace: str,
                                projects: list[Project], name: str = "",
                                kind: JobKind | None = None) -> ProjectFacts:
    return with_priorities(read_project_facts(
        client, namespace, visible=namespace in {p.name for p in projects}, name=name,
        kind=kind))


def get_nodes() -> list[dict]:
    """The cluster's nodes, read with the dashboard's service account (people usually may
    not list nodes), shared by everyone for a short while."""
    nodes = cache.get(NODES_CACHE_KEY)
    if nodes is None:
        try:
            with client_for_token(cluster_config().service_account_token) as sa:
                nodes = sa.list_nodes()
        except errors.ClusterError as e:
            log.warning("cannot list nodes with the service account: %s", e.message)
            return []
        cache.set(NODES_CACHE_KEY, nodes, NODES_TTL)
    return nodes


def get_room() -> list[NodeSize] | None:
    """Each node's room now, from the service account's view of the nodes and of every
    pod, shared by everyone for a few seconds; None when it cannot be read."""
    room = cache.get(ROOM_CACHE_KEY)
    if room is None:
        nodes = get_nodes()
        pods = every_pod() if nodes else None
        if pods is None:
            return None
        room = room_now(nodes, pods)
        cache.set(ROOM_CACHE_KEY, room, ROOM_TTL)
    return room


def every_pod() -> list[dict] | None:
    """Every pod of the cluster, read with the service account (briefly: a page waits on
    it); None when they cannot be read, which is not "no pods"."""
    try:
        with client_for_token(cluster_config().service_account_token) as sa:
            sa.timeout = (2.0, 5.0)
            return sa.list_pods()
    except errors.ClusterError as e:
        log.info("cannot list every pod with the service account: %s", e.message)
        return None


def gpu_product_choices(nodes: list[dict]) -> list[tuple[str, str]]:
    """Choices for "GPU type": each nvidia.com/gpu.product label with how much of it exists."""
    found: dict[str, list[int]] = {}
    for node in nodes:
        labels = (node.get("metadata") or {}).get("labels") or {}
        product = labels.get(formfields.GPU_PRODUCT_LABEL)
        if not product:
            continue
        capacity = ((node.get("status") or {}).get("allocatable")
                    or (node.get("status") or {}).get("capacity") or {})
        try:
            gpus = int(parse_quantity(capacity.get(GPU_RESOURCE, "0")))
        except QuantityError:
            gpus = 0
        found.setdefault(product, []).append(gpus)
    choices = [("", _("Any node (no GPU type required)"))]
    for product, counts in sorted(found.items()):
        choices.append((product, _("%(product)s (%(nodes)d nodes, up to %(gpus)d GPUs each)")
                        % {"product": product, "nodes": len(counts), "gpus": max(counts)}))
    return choices


def _add(messages_: dict, name: str, severity: str, text: str) -> None:
    entry = messages_.setdefault(name, {"errors": [], "warnings": []})
    bucket = entry["errors" if severity == "error" else "warnings"]
    if text not in bucket:
        bucket.append(text)


CLAIMS_MADE_KEY = "_claims_made"  # new claims made by a create that then failed: used again


def claims_made(data: dict) -> list[str]:
    made = data.get(CLAIMS_MADE_KEY)
    return [str(n) for n in made] if isinstance(made, list) else []


def _claim_field(spec_field: str, existing_rows: int) -> str | None:
    """A message about a volume the draft's new claims add (after its `existing_rows`
    volumes of existing claims): said at the new claim's field; None for its claim's name,
    which the claim's own checks judge (it does not exist before the job's create)."""
    match = _VOLUME_FIELD.fullmatch(spec_field)
    if not match or int(match.group(1)) < existing_rows:
        return spec_field
    if match.group(2) in ("claim_name", "name"):
        return None
    return f"claims[{int(match.group(1)) - existing_rows}].{match.group(2)}"


def check_draft(data: dict, base: dict | None, facts: ProjectFacts,
                projects: list[Project], kind: JobKind | None = None,
                storage_classes: list[str] | None = None) -> tuple[JobSpec, dict]:
    """The draft's spec (of `kind`) and every message about it, keyed by form field name
    (its new volume claims' checked against the cluster's `storage_classes`, when known)."""
    read = drafts.spec_from_data(data, base, kind)
    found: dict[str, dict[str, list[str]]] = {}
    for name, texts in read.errors.items():
        for text in texts:
            _add(found, name, "error", text)
    try:
        problems = validate_spec(read.spec, facts.context())
    except Exception:  # a validator bug must not cost the person their page
        log.exception("validate_spec failed")
        problems = []
    claims = drafts.new_claims(data)
    if claims:
        existing_rows = len([r for r in data.get("volumes") or [] if isinstance(r, dict)])
        problems = [dataclasses.replace(p, field=field) for p in problems
                    if (field := _claim_field(p.field, existing_rows)) is not None]
        problems += claim_findings(claims, read.spec.namespace,
                                   set(facts.pvcs) if facts.pvcs is not None else None,
                                   storage_classes, read.spec.workers, claims_made(data))
    for problem in problems:
        name = formfields.form_field_for(problem.field)
        if name in read.errors:
            continue  # the field could not even be read: that message says it
        _add(found, name, problem.severity, problem.message)
        if problem.code == NP_MISMATCH:
            found[name].setdefault("until_workers_chosen", []).append(problem.message)
    namespace = read.spec.namespace
    if namespace and not facts.visible:
        _add(found, "namespace", "error",
             _("You cannot see the project “%(project)s”: choose one of your projects.")
             % {"project": namespace})
    return read.spec, found


def check_draft_for_user(client: ClusterClient, data: dict, base: dict | None,
                         projects: list[Project], kind: JobKind | None = None
                         ) -> tuple[ProjectFacts, JobSpec, dict]:
    """The facts of the draft's project (read with the person's client), the draft's spec
    and every message about it (`check_draft`)."""
    facts = get_project_facts_for_user(client, str(data.get("namespace", "")), projects,
                                       name=str(data.get("name", "")).strip(), kind=kind)
    classes = storage_classes_for(client) if drafts.new_claims(data) else None
    spec, found = check_draft(data, base, facts, projects, kind,
                              classes[0] if classes is not None else None)
    if facts.visible and spec.namespace:
        _check_against_cluster(client, spec, found)
    return facts, spec, found


def _check_against_cluster(client: ClusterClient, spec: JobSpec, found: dict) -> None:
    """The kind's checks against what the cluster holds (a TrainJob's runtime: there, and
    running MPI when an MPI implementation is asked for; the Trainer served at all), as
    the create path makes them, said at the field."""
    model = spec.kind.spec_model
    for rule in model.cluster_rules if model else ():
        try:
            findings = list(rule(client, spec))
        except errors.NotServed as e:
            field = "runtime" if "runtime" in formfields.kind_fields(spec.kind) else "namespace"
            _add(found, field, "error", e.message)
            continue
        except errors.Unauthorized:
            raise
        except errors.ClusterError as e:  # the create path asks again
            log.info("cannot check %s against the cluster: %s", spec.name, e.message)
            continue
        for finding in findings:
            _add(found, formfields.form_field_for(finding.field), finding.severity,
                 finding.message)


def errors_in(found: dict, step: str) -> dict:
    return {name: m for name, m in found.items()
            if m["errors"] and (step == "review" or formfields.step_of(name) == step)}


def shown_messages(found: dict, data: dict, step: str, submitted: bool) -> dict:
    """Messages a step shows: all after it was submitted; before, only about what the
    person has typed (no "required" shouting at an empty page), and the -np check only
    once the Workers are chosen (`changes.WORKERS_CHOSEN_KEY`: the Workers shown on arrival
    are a default or a copy's, not yet the person's answer)."""
    if submitted or step == "review":
        return found
    shown = {}
    for name, m in found.items():
        value = data.get(name)
        row = name.split("-")
        if row[0] in ("env", "volume", "claim") and len(row) == 3:
            value = "row"  # rows exist only when something was typed in them
        if m.get("until_workers_chosen") and not data.get(changes.WORKERS_CHOSEN_KEY):
            m = {**m, "warnings": [t for t in m["warnings"]
                                   if t not in m["until_workers_chosen"]]}
            if not m["errors"] and not m["warnings"]:
                continue
        if value not in (None, "", []):
            shown[name] = m
    return shown


def fit_lines(report: FitReport | None) -> list[dict]:
    """The quota lines with amounts in the product's words and bar widths (used, this job).

    Each cell stands alone on a phone (the row's title is above it), so its amount carries
    its unit ("139.3 CPUs", "1.04Ti"); room left is rounded down, the job's ask up.
    `over_quota`: the job asks for more than the quota holds in all (not only more than is
    left now)."""
    lines = []
    for line in report.lines if report else []:
        unit = compute_name(line.resource)
        hard = line.hard if line.hard > 0 else None
        used_pct = min(100, round(100 * line.used / hard)) if hard else 0
        job_pct = min(100 - used_pct, round(100 * line.requested / hard)) if hard else 100
        lines.append({"quota": line.quota, "title": resource_title(line.resource),
                      "requested": figure_with_unit(unit, line.requested, ROUND_CEILING),
                      "used": figure_with_unit(unit, line.used),
                      "available": figure_with_unit(unit, line.available, ROUND_FLOOR),
                      "hard": figure_with_unit(unit, line.hard), "fits": line.fits,
                      "over_quota": 0 <= line.hard < line.requested,
                      "text": line.text, "used_percent": used_pct, "job_percent": job_pct})
    return lines


def fit_for(spec: JobSpec, facts: ProjectFacts, found: dict) -> FitReport | None:
    if not facts.visible or any(m["errors"] for n, m in found.items()
                                if n in formfields.ESSENTIAL_RESOURCE_FIELDS
                                or n in ("launcher_cpu", "launcher_memory")):
        return None
    try:
        fit = check_fit(spec, facts.quotas, facts.limit_ranges, get_nodes(), spec.namespace,
                        room=get_room())
    except (QuantityError, ValueError, ArithmeticError):
        return None
    offer_queue(fit, spec, facts.local_queues)
    return fit


def fit_context(spec: JobSpec, facts: ProjectFacts, found: dict,
                client: ClusterClient | None = None) -> dict:
    """The resource check's `fit` and `fit_lines`; with the person's `client`, where the
    quota on the number of jobs is full, `room_offer`: the oldest finished jobs they may
    delete to make room (odh.training.status.room)."""
    fit = fit_for(spec, facts, found)
    offer = room_offer(client, spec.namespace, fit) \
        if client is not None and fit is not None and fit.count_quota_full else None
    return {"fit": fit, "fit_lines": fit_lines(fit), "room_offer": offer}


def resources_text(cpu: str, memory: str, gpus: int) -> str:
    try:
        return format_resources(parse_quantity(cpu) if cpu else None,
                                parse_quantity(memory) if memory else None, gpus)
    except QuantityError:
        return ", ".join(part for part in (cpu and f"{cpu} CPU", memory) if part)


def summary(spec: JobSpec) -> dict:
    return {
        "runtime": getattr(spec, "runtime", ""),
        "launcher": resources_text(spec.launcher_cpu, spec.launcher_memory, 0),
        "worker": resources_text(spec.cpu_per_worker, spec.memory_per_worker,
                             spec.gpus_per_worker),
        "command": command_text(spec.command),
    }
