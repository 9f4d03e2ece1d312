"""The objects the JobSet controller (kubernetes-sigs/jobset) creates for a JobSet.

Every builder takes the *defaulted* JobSet (see `apply_defaults`, the JobSet webhook's
defaulting, which simcluster applies in memory as it has no webhook) and returns a
manifest owned by it: a batch/v1 Job `<jobset>-<replicatedJob>-<index>` per replica of
each replicatedJob, and the headless Service `<subdomain>` when DNS hostnames are on.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from simcluster.behaviour import PREFIX
from simcluster.controllers.conditions import controller_ref, int_or

Obj = dict[str, Any]

API_VERSION = "jobset.x-k8s.io/v1alpha2"
CONTROLLER_NAME = "jobset.sigs.k8s.io/jobset-controller"

JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB_NAME = "jobset.sigs.k8s.io/replicatedjob-name"
REPLICATED_JOB_REPLICAS = "jobset.sigs.k8s.io/replicatedjob-replicas"
GLOBAL_REPLICAS = "jobset.sigs.k8s.io/global-replicas"
JOB_INDEX = "jobset.sigs.k8s.io/job-index"
JOB_GLOBAL_INDEX = "jobset.sigs.k8s.io/job-global-index"
JOB_KEY = "jobset.sigs.k8s.io/job-key"
RESTART_ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"
COORDINATOR = "jobset.sigs.k8s.io/coordinator"


def apply_defaults(stored: Obj) -> Obj:
    """A deep copy of the JobSet with the webhook's defaults (network DNS hostnames and
    publishNotReadyAddresses on, successPolicy All, Indexed Jobs, OnFailure pods)."""
    js = copy.deepcopy(stored)
    spec = js.setdefault("spec", {})
    network = spec.get("network") if isinstance(spec.get("network"), dict) else {}
    network.setdefault("enableDNSHostnames", True)
    network.setdefault("publishNotReadyAddresses", True)
    spec["network"] = network
    if not isinstance(spec.get("successPolicy"), dict):
        spec["successPolicy"] = {"operator": "All"}
    spec["successPolicy"].setdefault("operator", "All")
    if not isinstance(spec.get("startupPolicy"), dict):
        spec["startupPolicy"] = {"startupPolicyOrder": "AnyOrder"}
    if isinstance(spec.get("failurePolicy"), dict):
        spec["failurePolicy"].setdefault("restartStrategy", "Recreate")
    rjobs = [r for r in spec.get("replicatedJobs") or [] if isinstance(r, dict)]
    for rjob in rjobs:
        rjob["replicas"] = max(0, int_or(rjob.get("replicas"), 1) or 0)
        template = rjob.setdefault("template", {})
        jspec = template.setdefault("spec", {})
        jspec.setdefault("completionMode", "Indexed")
        pod = jspec.setdefault("template", {}).setdefault("spec", {})
        if not pod.get("restartPolicy"):
            pod["restartPolicy"] = "OnFailure"
    spec["replicatedJobs"] = rjobs
    return js


def managed_externally(js: Obj) -> str | None:
    manager = (js.get("spec") or {}).get("managedBy")
    return manager if manager and manager != CONTROLLER_NAME else None


def restarts(js: Obj) -> int:
    return int_or((js.get("status") or {}).get("restarts"), 0) or 0


def subdomain(js: Obj) -> str:
    return js["spec"]["network"].get("subdomain") or js["metadata"]["name"]


def dns_hostnames(js: Obj) -> bool:
    return bool(js["spec"]["network"].get("enableDNSHostnames"))


def job_name(js: Obj, rjob_name: str, index: int) -> str:
    return f"{js['metadata']['name']}-{rjob_name}-{index}"


def job_key(namespace: str, name: str) -> str:
    """The SHA1 hex digest of `<namespace>/<job name>`, as upstream's jobHashKey."""
    return hashlib.sha1(f"{namespace}/{name}".encode(), usedforsecurity=False).hexdigest()


def global_replicas(js: Obj) -> int:
    return sum(r["replicas"] for r in js["spec"]["replicatedJobs"])


def global_index(js: Obj, rjob_name: str, index: int) -> str:
    total = 0
    for rjob in js["spec"]["replicatedJobs"]:
        if rjob["name"] == rjob_name:
            return str(total + index)
        total += rjob["replicas"]
    return ""


def coordinator_endpoint(js: Obj) -> str | None:
    c = js["spec"].get("coordinator")
    if not isinstance(c, dict) or not c.get("replicatedJob"):
        return None
    return (f"{js['metadata']['name']}-{c['replicatedJob']}-{int_or(c.get('jobIndex'), 0)}-"
            f"{int_or(c.get('podIndex'), 0)}.{subdomain(js)}")


def _jobset_labels(js: Obj, rjob: Obj, index: int) -> dict[str, str]:
    ns = js["metadata"]["namespace"]
    name = job_name(js, rjob["name"], index)
    out = {JOBSET_NAME: js["metadata"]["name"], REPLICATED_JOB_NAME: rjob["name"],
           RESTART_ATTEMPT: str(restarts(js)), REPLICATED_JOB_REPLICAS: str(rjob["replicas"]),
           GLOBAL_REPLICAS: str(global_replicas(js)), JOB_INDEX: str(index),
           JOB_KEY: job_key(ns, name), JOB_GLOBAL_INDEX: global_index(js, rjob["name"], index)}
    endpoint = coordinator_endpoint(js)
    if endpoint is not None:
        out[COORDINATOR] = endpoint
    return out


def simulation_annotations(js: Obj) -> dict[str, str]:
    """simcluster's behaviour annotations of the JobSet (not upstream): carried to its Jobs
    and pods so that they run as the JobSet asks."""
    return {k: str(v) for k, v in (js["metadata"].get("annotations") or {}).items()
            if k.startswith(PREFIX)}


def _label_and_annotate(meta: Obj, js: Obj, rjob: Obj, index: int) -> None:
    ours = _jobset_labels(js, rjob, index)
    meta["labels"] = {**(meta.get("labels") or {}), **ours}
    meta["annotations"] = {**simulation_annotations(js), **(meta.get("annotations") or {}),
                           **ours}


def job(js: Obj, rjob: Obj, index: int) -> Obj:
    template = copy.deepcopy(rjob.get("template") or {})
    tmeta = template.get("metadata") or {}
    meta: Obj = {"name": job_name(js, rjob["name"], index),
                 "namespace": js["metadata"]["namespace"],
                 "labels": dict(tmeta.get("labels") or {}),
                 "annotations": dict(tmeta.get("annotations") or {}),
                 "ownerReferences": [controller_ref(js)]}
    spec = template.get("spec") or {}
    pod = spec.setdefault("template", {})
    _label_and_annotate(meta, js, rjob, index)
    _label_and_annotate(pod.setdefault("metadata", {}), js, rjob, index)
    if dns_hostnames(js):
        pod.setdefault("spec", {})["subdomain"] = subdomain(js)
    spec["suspend"] = bool(js["spec"].get("suspend"))
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


def headless_service(js: Obj) -> Obj:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": subdomain(js), "namespace": js["metadata"]["namespace"],
                         "ownerReferences": [controller_ref(js)]},
            "spec": {"clusterIP": "None",
                     "selector": {JOBSET_NAME: js["metadata"]["name"]},
                     "publishNotReadyAddresses": bool(
                         js["spec"]["network"].get("publishNotReadyAddresses", True))}}


def merge_template_on_resume(job_obj: Obj, rjob: Obj) -> None:
    """resumeJob: the replicatedJob's pod template labels, annotations, nodeSelector,
    tolerations and scheduling gates merged into a suspended Job's (Kueue may change them
    while the JobSet is suspended)."""
    want = (rjob.get("template") or {}).get("spec", {}).get("template") or {}
    wmeta, wspec = want.get("metadata") or {}, want.get("spec") or {}
    tmpl = job_obj.setdefault("spec", {}).setdefault("template", {})
    tmeta, tspec = tmpl.setdefault("metadata", {}), tmpl.setdefault("spec", {})
    for key in ("labels", "annotations"):
        if wmeta.get(key):
            tmeta[key] = {**(tmeta.get(key) or {}), **wmeta[key]}
    if wspec.get("nodeSelector"):
        tspec["nodeSelector"] = {**(tspec.get("nodeSelector") or {}), **wspec["nodeSelector"]}
    for key in ("tolerations", "schedulingGates"):
        extra = [x for x in wspec.get(key) or [] if x not in (tspec.get(key) or [])]
        if extra:
            tspec[key] = list(tspec.get(key) or []) + extra
    job_obj["spec"]["suspend"] = False
