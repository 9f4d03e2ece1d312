"""Why a job waits: refused by the operator, a LimitRange or admission, its quota, a
missing volume or Secret, an image that cannot be pulled, no node that could ever hold a
Worker, or simply no GPUs free yet."""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

from odh.training.capacity.nodes import node_sizes
from odh.training.capacity.quota import compute_name, resource_title
from odh.training.cluster.events import message, quota_detail, scheduling_reasons
from odh.training.diagnosis import fixes as f
from odh.training.diagnosis import suggest
from odh.training.diagnosis.common import (
    event_evidence,
    job_events,
    labels,
    names,
    pod_events,
    quote,
    raw_pod,
    replicas_workers_first,
    short_of_gpus,
)
from odh.training.diagnosis.facts import Facts
from odh.training.diagnosis.model import Culprit, Diagnosis, Evidence, Severity
from odh.training.durations import format_duration
from odh.training.i18n import _, ngettext
from odh.training.manifests.totals import cpus, gpus, number
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import (
    GPU_RESOURCE,
    QuantityError,
    display_memory,
    format_memory,
    format_resources,
    parse_quantity,
)
from odh.training.status.pods import PULL_REASONS, ReplicaState


# -- refused before any pod ran -------------------------------------------------------------------
def invalid_job(facts: Facts) -> Diagnosis | None:
    s = facts.s
    if s.reason != "ValidationError":
        return None
    errors = s.message.removeprefix("Found validation errors: ")
    found = suggest.fix(f.edit_fix(_("Clone and correct the job"), "name"))
    found += [suggest.events(), suggest.guide("invalid-job")]
    return Diagnosis("invalid-job", Severity.ERROR, Culprit.CONFIGURATION,
                     _("The MPI Operator refused the job: %(errors)s") % {"errors": quote(errors,
                                                                                           200)},
                     [Evidence("event", f"ValidationError: {quote(s.message)}", s.kind.kind)],
                     [], [], found, raw_reason=s.reason, raw_message=s.message)


_LIMIT = re.compile(r"(maximum|minimum) (\S+) usage per (Container|Pod) is (\S+), but "
                    r"(?:limit|request) is (\S+)")
_RATIO = re.compile(r"max limit to request ratio per (Container|Pod) is (\S+), but provided "
                    r"ratio is (\S+)")
_POD = re.compile(r'pods? "([^"]+)" is forbidden')


def _refusals(facts: Facts) -> list[dict]:
    """The operator's (and the launcher Job's) events saying a pod could not be created,
    newest last, while some of the job's pods are still missing."""
    if not any(not r.exists for r in facts.s.replicas):
        return []
    return [e for e in job_events(facts, ("MPIJobFailed", "FailedCreate", "FailedCreatePod"))
            if "is forbidden" in message(e) or "exceeded quota" in message(e)]


def _role_in(text: str) -> str:
    m = _POD.search(text)
    pod = m.group(1) if m else ""
    if "-launcher" in pod or "launcher pod created failed" in text:
        return _("the Launcher")
    return _("the Workers") if pod or "worker pod" in text else _("the pods")


def _shown(resource: str, value: Decimal, rounding: str = ROUND_HALF_UP) -> str:
    """An amount as the product writes it, memory short ("1.04Ti", not "1088256Mi")."""
    return display_memory(value, rounding) if resource == "memory" else number(resource, value)


def _amount(resource: str, raw: str) -> str:
    try:
        value = parse_quantity(raw)
    except QuantityError:
        return raw
    if resource == "cpu":
        return cpus(value)
    if resource == "memory":
        return format_memory(value)
    if resource == GPU_RESOURCE:
        return gpus(value)
    return number(resource, value)


def admission_refused(facts: Facts) -> Diagnosis | None:
    refusals = [e for e in _refusals(facts) if "exceeded quota" not in message(e)]
    if not refusals:
        return None
    event = refusals[-1]
    text = message(event)
    who = _role_in(text)
    if m := _LIMIT.search(text):
        bound, resource, scope, allowed, asked = m.groups()
        values = {"who": who, "allowed": _amount(resource, allowed),
                  "asked": _amount(resource, asked)}
        if bound == "maximum":
            headline = (_("The project's LimitRange refuses %(who)s: at most %(allowed)s per "
                          "container, each asks for %(asked)s") if scope == "Container" else
                        _("The project's LimitRange refuses %(who)s: at most %(allowed)s per "
                          "pod, each asks for %(asked)s")) % values
        else:
            headline = (_("The project's LimitRange refuses %(who)s: at least %(allowed)s per "
                          "container, each asks for %(asked)s") if scope == "Container" else
                        _("The project's LimitRange refuses %(who)s: at least %(allowed)s per "
                          "pod, each asks for %(asked)s")) % values
    elif m := _RATIO.search(text):
        headline = _("The project's LimitRange refuses %(who)s: their limit may be at most "
                     "%(ratio)s times their request, they ask for %(asked)s times") % {
            "who": who, "ratio": m.group(2), "asked": m.group(3).rstrip("0").rstrip(".")}
    else:
        detail = text.split("is forbidden:", 1)[-1].strip()
        headline = _("An admission check refuses %(who)s: %(detail)s") % {
            "who": who, "detail": quote(detail, 160)}
    found = []
    spec = f.spec_of(facts.job)
    if spec is not None:
        found += [s for fix in f.fit_fixes(facts, spec)[:2] for s in suggest.fix(fix)]
    found.append(suggest.advice(_("See the project's limits:"),
                                f"oc describe limitrange -n {facts.s.namespace}"))
    found += [suggest.events(), suggest.guide("admission-refused")]
    return Diagnosis("admission-refused", Severity.ERROR, Culprit.CONFIGURATION, headline,
                     [event_evidence(event, facts.s.kind.kind)], [], [], found,
                     raw_reason=str(event.get("reason", "")), raw_message=text)


# -- the quota ------------------------------------------------------------------------------------
def _quota_message(text: str) -> tuple[str, dict[str, str], dict[str, str], dict[str, str]]:
    """(quota, requested, used, limited) from "exceeded quota: q, requested: a=1,b=2, used:
    a=3, limited: a=4"."""
    detail = quota_detail(text) or ""
    parts = re.split(r", (requested|used|limited): ", detail)
    name = parts[0].strip()
    found: dict[str, dict[str, str]] = {"requested": {}, "used": {}, "limited": {}}
    for label, body in zip(parts[1::2], parts[2::2], strict=False):
        for pair in body.split(","):
            key, _sep, value = pair.strip().partition("=")
            if key:
                found[label][key] = value
    return name, found["requested"], found["used"], found["limited"]


def _missing_gpus(facts: Facts) -> int:
    return sum(r.gpus for r in facts.s.replicas if not r.exists)


def _missing_like(facts: Facts, text: str) -> int:
    """How many pods like the one refused (its role's) are still missing: each will ask
    for as much as it did."""
    m = _POD.search(text)
    role = "Launcher" if m and "-launcher" in m.group(1) else "Worker"
    return max(1, sum(1 for r in facts.s.replicas if not r.exists and r.role == role))


def quota(facts: Facts) -> Diagnosis | None:
    refusals = [e for e in _refusals(facts) if "exceeded quota" in message(e)]
    if not refusals and facts.s.reason != "ExceededQuota":
        return None
    text = message(refusals[-1]) if refusals else facts.s.message
    name, requested, used, limited = _quota_message(text)
    keys = sorted(limited, key=lambda k: (compute_name(k) != GPU_RESOURCE,
                                          k.startswith("limits."), k))
    evidence = [event_evidence(refusals[-1], facts.s.kind.kind)] if refusals else []
    culprit = Culprit.CAPACITY
    if keys:
        key = keys[0]
        resource = compute_name(key)
        hard, in_use = _parse(limited.get(key)), _parse(used.get(key))
        need = Decimal(_missing_gpus(facts)) if resource == GPU_RESOURCE else \
            _parse(requested.get(key)) * _missing_like(facts, text)
        title = resource_title(key)  # "GPUs", "MPIJobs" as written; "memory" mid-sentence
        title = title.lower() if resource in ("memory", "pods", "count/pods") else title
        values = {"resource": title, "used": _shown(resource, in_use),
                  "hard": _shown(resource, hard),
                  "need": _shown(resource, need, ROUND_CEILING), "quota": name}
        headline = _("Waiting for quota: the project uses %(used)s of its %(hard)s "
                     "%(resource)s and this job needs %(need)s more") % values
        evidence.append(Evidence("number", _("ResourceQuota %(quota)s: %(resource)s %(used)s "
                                             "used of %(hard)s, this job needs %(need)s.")
                                 % values, _("Project")))
        total = Decimal(facts.s.gpus) if resource == GPU_RESOURCE else need
        if total > hard:
            culprit = Culprit.CONFIGURATION
            evidence.append(Evidence("number", _("The job alone asks for more than the whole "
                                                 "quota (%(total)s of %(hard)s): it can never "
                                                 "start as it is.")
                                     % {"total": _shown(resource, total, ROUND_CEILING),
                                        "hard": _shown(resource, hard)}))
        if facts.quotas is None and name:
            facts.quotas = [{"metadata": {"name": name}, "spec": {"hard": dict(limited)},
                             "status": {"used": dict(used)}}]
    else:
        headline = _("Waiting for quota: %(detail)s") % {"detail": quote(
            quota_detail(text) or text, 160)}
    found = []
    spec = f.spec_of(facts.job)
    if spec is not None:
        for fix in f.fit_fixes(facts, spec)[:2]:
            fix = f.JobFix(fix.label, fix.changes, note=_("Delete this job once the copy is "
                                                          "created, so its pods free the quota."))
            found += suggest.fix(fix)
    # every list starts with a first option: "or" only after one
    found.append(suggest.advice(_("Or wait: the job starts by itself when other jobs in the "
                                  "project finish and free the quota.") if found else
                                _("Wait: the job starts by itself when other jobs in the "
                                  "project finish and free the quota.")))
    found.append(suggest.advice(_("Ask a project administrator for a larger quota:"),
                                f"oc describe resourcequota -n {facts.s.namespace}"))
    found.append(suggest.guide("quota"))
    return Diagnosis("quota", Severity.WARNING, culprit, headline, evidence, [], [], found,
                     raw_reason="ExceededQuota", raw_message=text)


def _parse(raw: str | None) -> Decimal:
    try:
        return parse_quantity(raw or "0")
    except QuantityError:
        return Decimal(0)


# -- volumes, Secrets and ConfigMaps -------------------------------------------------------------
_CLAIM_MISSING = re.compile(r'persistentvolumeclaim "([^"]+)" not found')
_UNBOUND = "unbound immediate PersistentVolumeClaims"
_OBJECT_MISSING = re.compile(r'(secret|configmap) "([^"]+)" not found', re.I)
_KEY_MISSING = re.compile(r"couldn't find key (\S+) in (Secret|ConfigMap) ([^/\s]+)/(\S+)")


def _volume_texts(facts: Facts, replica: ReplicaState) -> list[tuple[str, object]]:
    texts: list[tuple[str, object]] = [(replica.message, None)] if replica.message else []
    for reason in ("FailedScheduling", "FailedMount", "Failed"):
        for event in pod_events(facts, replica.name, reason)[-1:]:
            texts.append((message(event), event))
    return texts


def volume(facts: Facts) -> Diagnosis | None:
    for replica in replicas_workers_first(facts):
        for text, event in _volume_texts(facts, replica):
            found = _volume_problem(facts, replica, text)
            if found is None:
                continue
            headline, fix, advice = found
            evidence = [event_evidence(event, replica.label) if isinstance(event, dict)
                        else Evidence("state", f"{replica.reason}: {quote(text)}",
                                      replica.label)]
            claims = _claim_names(facts)
            if claims is not None and "claim" in headline.lower():
                evidence.append(Evidence("state", _("Volume claims in %(namespace)s: "
                                                    "%(claims)s") % {
                    "namespace": facts.s.namespace,
                    "claims": ", ".join(claims) or _("none")}, _("Project")))
            affected = [r for r in replicas_workers_first(facts)
                        if any(_volume_problem(facts, r, t) for t, _e in _volume_texts(facts, r))]
            suggestions = suggest.fix(fix) + ([advice] if advice else []) + [
                suggest.events(), suggest.guide("volume")]
            return Diagnosis("volume", Severity.ERROR, Culprit.CONFIGURATION,
                             headline, evidence, names(affected), labels(affected),
                             suggestions, raw_reason=replica.reason, raw_message=text)
    return None


def _volume_problem(facts: Facts, replica: ReplicaState, text: str):
    namespace = facts.s.namespace
    if m := _CLAIM_MISSING.search(text):
        return (_("The volume claim “%(claim)s” does not exist in %(namespace)s")
                % {"claim": m.group(1), "namespace": namespace},
                f.edit_fix(_("Clone and choose another volume claim"), "volumes"),
                None)
    if _UNBOUND in text:
        claims = [str(get_path(v, ["persistentVolumeClaim", "claimName"], ""))
                  for v in as_list(get_path(raw_pod(facts, replica.name), ["spec", "volumes"]))
                  if isinstance(v, dict) and v.get("persistentVolumeClaim")]
        return (_("The volume claim “%(claim)s” is not bound to a volume yet")
                % {"claim": ", ".join(c for c in claims if c) or "?"},
                f.edit_fix(_("Clone and choose another volume claim"), "volumes"),
                suggest.advice(_("Check the claim's events: its storage class may not "
                                 "provision volumes."),
                               f"oc describe pvc -n {namespace}"))
    if m := _KEY_MISSING.search(text):
        key, kind, _ns, name = m.groups()
        return (_("The %(kind)s “%(name)s” has no key “%(key)s”, which %(pod)s needs")
                % {"kind": kind, "name": name, "key": key, "pod": replica.label}, None,
                suggest.advice(_("Add the key to the %(kind)s, or change the job to use one "
                                 "it has.") % {"kind": kind},
                               f"oc describe {kind.lower()} {name} -n {namespace}"))
    if replica.reason in ("CreateContainerConfigError", "ContainerCreating") or \
            "MountVolume" in text or replica.reason.startswith("Init:"):
        if m := _OBJECT_MISSING.search(text):
            kind = "Secret" if m.group(1).lower() == "secret" else "ConfigMap"
            name = m.group(2)
            command = (f"oc create secret generic {name} --from-literal=KEY=VALUE -n {namespace}"
                       if kind == "Secret" else
                       f"oc create configmap {name} --from-literal=KEY=VALUE -n {namespace}")
            fix = f.secret_fix(facts, name) if kind == "Secret" else None
            return (_("The %(kind)s “%(name)s” that %(pod)s needs does not exist in "
                      "%(namespace)s") % {"kind": kind, "name": name, "pod": replica.label,
                                          "namespace": namespace},
                    fix, suggest.advice(_("Or create it, and the pods start by themselves:")
                                        if fix else
                                        _("Create it, and the pods start by themselves:"),
                                        command))
    return None


def _claim_names(facts: Facts) -> list[str] | None:
    if facts.pvcs is None:
        return None
    return sorted(str(get_path(p, ["metadata", "name"], "")) for p in facts.pvcs)


# -- images ------------------------------------------------------------------------------------
_NOT_FOUND = re.compile(r"manifest unknown|not found|name unknown|does not exist|"
                        r"repository .* not found", re.I)
_UNAUTHORIZED = re.compile(r"unauthorized|authentication required|denied|\b40[13]\b|forbidden|"
                           r"no basic auth credentials|not authorized", re.I)
_UNREACHABLE = re.compile(r"no such host|i/o timeout|connection refused|dial tcp|TLS handshake "
                          r"timeout|network is unreachable|context deadline exceeded|x509|"
                          r"pinging container registry", re.I)


def _pull_error(facts: Facts, replica: ReplicaState) -> str:
    for event in reversed(pod_events(facts, replica.name, "Failed")):
        text = message(event)
        if text.startswith("Failed to pull image"):
            return text
    return replica.message


def _image_of(pod: dict, fallback: str) -> str:
    for status in as_list(get_path(pod, ["status", "containerStatuses"])):
        waiting = as_dict(get_path(status, ["state", "waiting"]))
        if waiting.get("reason") in PULL_REASONS:
            return str(as_dict(status).get("image", "")) or fallback
    containers = as_list(get_path(pod, ["spec", "containers"]))
    return str(as_dict(containers[0]).get("image", "")) if containers else fallback


def image_pull(facts: Facts) -> Diagnosis | None:
    stuck = [r for r in replicas_workers_first(facts) if r.reason in PULL_REASONS]
    if not stuck:
        return None
    first = stuck[0]
    error = _pull_error(facts, first)
    image = _image_of(raw_pod(facts, first.name), "")
    values = {"image": image or _("the image")}
    culprit = Culprit.CONFIGURATION
    if first.reason == "InvalidImageName":
        headline = _("The image name %(image)s is not valid") % values
    elif _UNAUTHORIZED.search(error):
        headline = _("The image %(image)s cannot be pulled: the registry refused access "
                     "(unauthorized)") % values
    elif _UNREACHABLE.search(error):
        headline = _("The image %(image)s cannot be pulled: its registry cannot be reached") \
            % values
        culprit = Culprit.PLATFORM
    elif _NOT_FOUND.search(error):
        headline = _("The image %(image)s cannot be pulled: it does not exist in the "
                     "registry") % values
    else:
        headline = _("The image %(image)s cannot be pulled") % values
    evidence = [Evidence("event", quote(error), first.label)] if error else []
    if facts.pull_secrets is not None:
        evidence.append(Evidence("state", _("Image pull secrets in %(namespace)s: %(names)s")
                                 % {"namespace": facts.s.namespace,
                                    "names": ", ".join(facts.pull_secrets)}
                                 if facts.pull_secrets else
                                 _("The project %(namespace)s has no image pull secret.")
                                 % {"namespace": facts.s.namespace}, _("Project")))
    found = suggest.fix(f.pull_secret_fix(facts)) if _UNAUTHORIZED.search(error) else []
    found += suggest.fix(f.edit_fix(_("Clone and edit the image"), "image"))
    if image:
        found.append(suggest.advice(_("Check that the image exists and that you may pull it:"),
                                    f"podman pull {image}"))
    if _UNAUTHORIZED.search(error):
        found.append(suggest.advice(
            _("Add a pull secret for the registry to the project and link it to the default "
              "service account:"),
            f"oc create secret docker-registry my-registry --docker-server=REGISTRY "
            f"--docker-username=USER --docker-password=TOKEN -n {facts.s.namespace} && "
            f"oc secrets link default my-registry --for=pull -n {facts.s.namespace}"))
    found += [suggest.events(), suggest.guide("image-pull")]
    return Diagnosis("image-pull", Severity.ERROR, culprit, headline, evidence, names(stuck),
                     labels(stuck), found, raw_reason=first.reason, raw_message=error)


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


PENDING_RULES = (invalid_job, admission_refused, quota, volume, image_pull, never_fits)
