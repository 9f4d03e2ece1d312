"""No room for the job's pods: never (no node could ever hold a Worker: never_fits, with
what to ask for instead), or not now (waiting_for_capacity: what holds the room, when it
may free)."""


from __future__ import annotations

import re
from decimal import Decimal

from odh.training.capacity.nodes import node_sizes
from odh.training.cluster.events import scheduling_reasons
from odh.training.diagnosis import fixes as f
from odh.training.diagnosis import suggest
from odh.training.diagnosis.common import (
    labels,
    names,
    quote,
    raw_pod,
    replicas_workers_first,
    short_of_gpus,
)
from odh.training.diagnosis.facts import Facts
from odh.training.diagnosis.model import Culprit, Diagnosis, Evidence, Severity
from odh.training.durations import format_duration
from odh.training.i18n import _, ngettext
from odh.training.manifests.totals import cpus, gpus
from odh.training.paths import as_dict, get_path
from odh.training.quantity import (
    GPU_RESOURCE,
    format_memory,
    format_resources,
)
from odh.training.status.pods import ReplicaState


# -- no room ---------------------------------------------------------------------------------------
def _unscheduled(facts: Facts) -> list[ReplicaState]:
    return [r for r in replicas_workers_first(facts) if r.reason == "Unschedulable"]


def _requests_of(facts: Facts, replica: ReplicaState) -> dict[str, Decimal]:
    from odh.training.capacity.allocation import pod_requests
    return pod_requests(raw_pod(facts, replica.name))


_PREEMPTION = re.compile(r"preemption: 0/(\d+) nodes are available: ([^.]*)")
_NOT_HELPFUL = re.compile(r"(\d+) Preemption is not helpful for scheduling")
_REASONS = re.compile(r"^0/(\d+) nodes are available: (.*?)\.?(?: preemption:|$)")
_RESOURCE_WORDS = {GPU_RESOURCE: GPU_RESOURCE, "cpu": "cpu", "memory": "memory"}


def hopeless(text: str) -> bool:
    """Whether the scheduler says no node could ever take the pod: preemption would help on
    none of them ("preemption: 0/6 nodes are available: 6 Preemption is not helpful for
    scheduling"; kube-scheduler 1.31+ says so of a node too small for what the pod asks)."""
    m = _PREEMPTION.search(text or "")
    if not m:
        return False
    total = int(m.group(1))
    return total > 0 and sum(int(n) for n in _NOT_HELPFUL.findall(m.group(2))) == total


def _short_everywhere(text: str) -> set[str]:
    """The resources the scheduler found short on every node ("6 Insufficient
    nvidia.com/gpu" of 0/6)."""
    m = _REASONS.search(text or "")
    if not m:
        return set()
    total = int(m.group(1))
    found = set()
    for part in m.group(2).split(","):
        count, _sep, reason = part.strip().partition(" ")
        if count.isdigit() and int(count) == total and reason.startswith("Insufficient "):
            found.add(reason.removeprefix("Insufficient ").strip())
    return found


def _too_big(asked: dict[str, Decimal], sizes) -> set[str]:
    """The resources a pod asks for more of than any node has."""
    most = {GPU_RESOURCE: max((n.gpus for n in sizes), default=Decimal(0)),
            "cpu": max((n.cpu for n in sizes), default=Decimal(0)),
            "memory": max((n.memory for n in sizes), default=Decimal(0))}
    return {r for r, top in most.items() if asked.get(r, Decimal(0)) > top}


def _never_headline(who: str, asked: dict[str, Decimal], short: set[str],
                    selector: dict) -> str:
    """The same words whether the nodes could be read (an administrator, the dashboard) or
    only the scheduler's message (most people's CLI): what the pod asks for, not the sizes
    of nodes only some may see (those are evidence)."""
    if selector and not short:
        return _("This job can never start: no node has the labels its node selector asks "
                 "for (%(labels)s)") % {"labels": ", ".join(f"{k}={v}"
                                                            for k, v in selector.items())}
    values = {"who": who}
    if short == {GPU_RESOURCE}:
        values["asked"] = gpus(asked.get(GPU_RESOURCE, Decimal(0)))
        return _("This job can never start: %(who)s asks for %(asked)s and no node has "
                 "that many") % values
    if short == {"cpu"}:
        values["asked"] = cpus(asked.get("cpu", Decimal(0)))
        return _("This job can never start: %(who)s asks for %(asked)s and no node has "
                 "that many") % values
    if short == {"memory"}:
        values["asked"] = format_memory(asked.get("memory", Decimal(0)))
        return _("This job can never start: %(who)s asks for %(asked)s of memory and no "
                 "node has that much") % values
    return _("This job can never start: no single node has everything %(who)s asks for") \
        % values


def never_fits(facts: Facts) -> Diagnosis | None:
    """No node could ever hold a pod: told from the nodes' sizes where they could be read,
    else from the scheduler's own verdict on the pod (preemption helps on no node)."""
    stuck = _unscheduled(facts)
    if not stuck:
        return None
    sizes = node_sizes(facts.nodes) if facts.nodes else None
    selector = as_dict(get_path(raw_pod(facts, stuck[0].name), ["spec", "nodeSelector"]))
    if sizes is not None and selector:
        sizes = [n for n in sizes if all(n.labels.get(k) == v for k, v in selector.items())]
    for replica in stuck:
        asked = _requests_of(facts, replica)
        gpu, cpu, memory = (asked.get(GPU_RESOURCE, Decimal(0)), asked.get("cpu", Decimal(0)),
                            asked.get("memory", Decimal(0)))
        if sizes is not None:
            if any(n.holds(cpu, memory, gpu) for n in sizes):
                continue
            short = _too_big(asked, sizes) if sizes else set()
        elif hopeless(replica.message):
            short = _short_everywhere(replica.message) & set(_RESOURCE_WORDS)
        else:
            continue
        who = _("each Worker") if replica.role == "Worker" else _("the %(role)s") % {
            "role": replica.role}
        headline = _never_headline(who, asked, short, selector)
        evidence = [Evidence("state", quote(replica.message), replica.label)] \
            if replica.message else []
        evidence.append(Evidence("number", _("%(who)s asks for %(asks)s.") % {
            "who": replica.label, "asks": format_resources(cpu, memory, gpu)}, replica.label))
        if sizes:
            evidence.append(Evidence("number", _("The largest node offers %(gpus)s, %(cpus)s "
                                                 "and %(memory)s.") % {
                "gpus": gpus(max(n.gpus for n in sizes)),
                "cpus": cpus(max(n.cpu for n in sizes)),
                "memory": format_memory(max(n.memory for n in sizes))}, _("Cluster")))
        found = []
        spec = f.spec_of(facts.job)
        if spec is not None and facts.nodes:
            for fix in f.fit_fixes(facts, spec)[:3]:
                found += suggest.fix(fix)
        found += [suggest.advice(_("Or ask your administrator whether larger nodes can join "
                                   "the cluster.") if found else
                                 _("Ask your administrator whether larger nodes can join the "
                                   "cluster.")), suggest.guide("never-fits")]
        affected = [r for r in stuck if r.role == replica.role]
        return Diagnosis("never-fits", Severity.ERROR, Culprit.CONFIGURATION, headline,
                         evidence, names(affected), labels(affected), found,
                         raw_reason="Unschedulable", raw_message=replica.message)
    return None


def waiting_for_capacity(facts: Facts) -> Diagnosis | None:
    stuck = _unscheduled(facts)
    if not stuck:
        return None
    s = facts.s
    why = scheduling_reasons(stuck[0].message) if stuck[0].message else ""
    needed = sum(r.gpus for r in stuck) if short_of_gpus(stuck) else 0
    placed = [r for r in s.replicas if r.exists and r.scheduled and r.gpus]
    evidence = [Evidence("state", quote(stuck[0].message), stuck[0].label)] \
        if stuck[0].message else []
    waited = s.time_in_state_seconds(facts.now)
    if needed:
        # the same words for everyone: how many are free is known to some only (evidence)
        headline = _("Waiting for GPUs: %(needed)s needed, not enough free on any node") \
            % {"needed": gpus(needed)}
        if facts.free_gpus is not None:
            evidence.append(Evidence("number", _("%(free)s free on the whole cluster now.")
                                     % {"free": gpus(facts.free_gpus)}, _("Cluster")))
    else:
        headline = _("Waiting for room on a node: %(why)s") % {"why": why or _("busy")}
    evidence.append(Evidence("number", ngettext(
        "%(count)d pod not scheduled yet, waiting for %(time)s",
        "%(count)d pods not scheduled yet, waiting for %(time)s", len(stuck))
        % {"count": len(stuck), "time": format_duration(waited)}))
    if placed:
        held = sum(r.gpus for r in placed)
        evidence.append(Evidence("number", _(
            "%(placed)d of %(total)d pods are already placed and hold %(gpus)s while the rest "
            "wait: those GPUs stay idle until every pod is placed.") % {
            "placed": len(placed), "total": len(s.replicas), "gpus": gpus(held)}))
    estimate = _holders_evidence(facts, needed, evidence)
    found = []
    if estimate is not None:
        found.append(suggest.advice(_("Wait: it should start in about %(time)s.")
                                    % {"time": format_duration(estimate)}))
    else:
        found.append(suggest.advice(_("Wait: the job starts by itself when GPUs are free "
                                      "(when, is not known).")))
    spec = f.spec_of(facts.job)
    if spec is not None and facts.free_gpus is not None and spec.gpus_per_worker:
        held = sum(r.gpus for r in placed if r.role == "Worker")
        workers = (facts.free_gpus + held) // spec.gpus_per_worker
        found += suggest.fix(f.fewer_workers_fix(
            spec, workers, _("Fewer Workers fit the GPUs free now; training takes longer.")))
    found.append(suggest.advice(_("Ask your administrator about a higher priority class or a "
                                  "Kueue queue for the project.")))
    found.append(suggest.guide("waiting-for-capacity"))
    affected = stuck
    return Diagnosis("waiting-for-capacity", Severity.WARNING, Culprit.CAPACITY, headline,
                     evidence, names(affected), labels(affected), found,
                     raw_reason="Unschedulable", raw_message=stuck[0].message)


def _holders_evidence(facts: Facts, needed: int, evidence: list[Evidence]) -> float | None:
    """Say which visible jobs hold GPUs (and for how long); the estimated start, if any."""
    if facts.gpu_holders is None:
        return None
    holders = sorted(facts.gpu_holders, key=lambda h: (h.eta_seconds is None,
                                                       h.eta_seconds or 0, h.name))
    for holder in holders[:5]:
        values = {"name": holder.name, "gpus": gpus(holder.gpus)}
        if holder.eta_seconds is not None:
            values["left"] = format_duration(holder.eta_seconds)
            text = _("%(name)s holds %(gpus)s, about %(left)s left") % values
        else:
            text = _("%(name)s holds %(gpus)s, time left unknown") % values
        evidence.append(Evidence("number", text, holder.namespace))
    if len(holders) > 5:
        evidence.append(Evidence("number", _("%(count)d more running jobs hold GPUs")
                                 % {"count": len(holders) - 5}))
    if facts.hidden_gpus:
        evidence.append(Evidence("number", _("%(gpus)s are held elsewhere on the cluster (other "
                                             "projects' jobs and workloads)")
                                 % {"gpus": gpus(facts.hidden_gpus)}))
    short = needed - (facts.free_gpus or 0)
    if needed and short <= 0:
        return None
    freed = 0
    for holder in holders:
        if holder.eta_seconds is None:
            break
        freed += holder.gpus
        if freed >= short:
            evidence.append(Evidence("number", _("Estimated start: in about %(time)s, when "
                                                 "%(name)s finishes") % {
                "time": format_duration(holder.eta_seconds), "name": holder.name}))
            return holder.eta_seconds
    evidence.append(Evidence("number", _("Estimated start: unknown")))
    return None
