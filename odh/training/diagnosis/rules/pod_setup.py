"""A pod that cannot start: a volume, Secret or ConfigMap it needs is missing or not bound,
or its image cannot be pulled (not found, refused, unreachable)."""


from __future__ import annotations

import re

from odh.training.cluster.events import message
from odh.training.diagnosis import fixes as f
from odh.training.diagnosis import suggest
from odh.training.diagnosis.common import (
    event_evidence,
    labels,
    names,
    pod_events,
    quote,
    raw_pod,
    replicas_workers_first,
)
from odh.training.diagnosis.facts import Facts
from odh.training.diagnosis.model import Culprit, Diagnosis, Evidence, Severity
from odh.training.i18n import _
from odh.training.paths import as_dict, as_list, get_path
from odh.training.status.pods import PULL_REASONS, ReplicaState

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
