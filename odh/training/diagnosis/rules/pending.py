"""Why a job waits: refused by the operator, a LimitRange or admission, its quota, a
missing volume or Secret, an image that cannot be pulled, no node that could ever hold a
Worker, or simply no GPUs free yet. The refusals and the quota are here; a pod that
cannot start in pod_setup.py, no room in no_room.py; PENDING_RULES tries them in order."""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

from odh.training.capacity.quota import compute_name, resource_title
from odh.training.cluster.events import message, quota_detail
from odh.training.diagnosis import fixes as f
from odh.training.diagnosis import suggest
from odh.training.diagnosis.common import (
    event_evidence,
    job_events,
    quote,
)
from odh.training.diagnosis.facts import Facts
from odh.training.diagnosis.model import Culprit, Diagnosis, Evidence, Severity
from odh.training.diagnosis.rules.no_room import never_fits
from odh.training.diagnosis.rules.pod_setup import image_pull, volume
from odh.training.i18n import _
from odh.training.manifests.totals import cpus, gpus, number
from odh.training.quantity import (
    GPU_RESOURCE,
    QuantityError,
    display_memory,
    format_memory,
    parse_quantity,
)


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



PENDING_RULES = (invalid_job, admission_refused, quota, volume, image_pull, never_fits)
