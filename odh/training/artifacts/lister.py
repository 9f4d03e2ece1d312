"""Reading a job's output directory as the person: a short-lived, read-only pod in the job's
project that mounts the claim read-only, prints what is asked (`find`'s listing, or one
file in base64) and ends; its log is read and the pod deleted.

Every call is made with the person's client, so the cluster's RBAC decides: who may not
create pods in the project (or read their logs) is refused by the API server, and told so
in plain words. The pod asks for little (10m CPU, 32Mi of memory, limits 100m and 64Mi),
runs as non-root without privileges or a service account token, on a read-only root
filesystem, and stops itself after `timeout` seconds (`activeDeadlineSeconds`) should the
dashboard not be there to delete it. It carries the label `opendatahub.io/artifacts-of:
<job>` (never a training job's label, so it is not counted among the job's pods).

A download prints the file only when it is no larger than the limit: one `find` prints
its size, and `-size -<limit+1>c -exec base64 -w 0 {} ;` prints it only then.
"""

from __future__ import annotations

import base64
import binascii
import logging
import posixpath
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from odh.training import errors
from odh.training.artifacts.listing import (
    DEPTH,
    FORMAT,
    Listing,
    human_size,
    parse_listing,
    safe_relative,
)
from odh.training.artifacts.outputs import OutputDir
from odh.training.cluster.client import ClusterClient
from odh.training.i18n import _

log = logging.getLogger("odh.training.artifacts")

DEFAULT_IMAGE = "registry.access.redhat.com/ubi9/ubi:latest"
ARTIFACTS_LABEL = "opendatahub.io/artifacts-of"
MOUNT = "/artifacts"
LISTING_LIMIT_BYTES = 2 * 1024 * 1024
# the waiting reasons after which the pod will not start by itself
_STUCK = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError",
          "CreateContainerError")


@dataclass(frozen=True)
class ListerSettings:
    image: str = DEFAULT_IMAGE
    timeout: float = 90.0  # seconds for the pod to start, print and end
    download_limit: int = 25 * 1024 * 1024  # bytes
    poll: float = 0.25


class ArtifactsRefused(errors.ODHError):
    """The dashboard could not read the job's outputs; `message` says why in plain words.
    `reason`: forbidden, outside, too-big, not-found, not-started."""

    code = "ArtifactsRefused"

    def __init__(self, message: str, reason: str, *, details: str = "") -> None:
        super().__init__(message, details=details)
        self.reason = reason

    def __reduce__(self):  # kept in a cache: made again from its parts
        return (type(self), (self.message, self.reason), {"details": self.details})


@dataclass(frozen=True)
class Download:
    name: str
    content: bytes


def lister_pod(job_name: str, namespace: str, output: OutputDir, command: list[str],
               settings: ListerSettings) -> dict:
    """The pod that runs `command` with the output's claim mounted read-only at MOUNT."""
    suffix = secrets.token_hex(3)
    name = f"{job_name[:40].rstrip('-.')}-artifacts-{suffix}"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace,
                     "labels": {ARTIFACTS_LABEL: job_name[:63].rstrip("-._"),
                                "app.kubernetes.io/managed-by": "mpijob-dashboard"}},
        "spec": {
            "restartPolicy": "Never",
            "activeDeadlineSeconds": max(10, int(settings.timeout)),
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "securityContext": {"runAsNonRoot": True,
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{
                "name": "lister", "image": settings.image, "command": command,
                "resources": {"requests": {"cpu": "10m", "memory": "32Mi"},
                              "limits": {"cpu": "100m", "memory": "64Mi"}},
                "securityContext": {"allowPrivilegeEscalation": False,
                                    "readOnlyRootFilesystem": True,
                                    "capabilities": {"drop": ["ALL"]}},
                "volumeMounts": [{"name": "output", "mountPath": MOUNT, "readOnly": True}],
            }],
            "volumes": [{"name": "output", "persistentVolumeClaim": {
                "claimName": output.claim, "readOnly": True}}],
        },
    }


def _in_volume(output: OutputDir, relative: str = "") -> str:
    """The path in the lister pod of `relative` (already safe) under the output."""
    return posixpath.join(MOUNT, output.sub_path, relative).rstrip("/") or MOUNT


def listing_command(output: OutputDir) -> list[str]:
    return ["find", _in_volume(output), "-mindepth", "1", "-maxdepth", str(DEPTH),
            "-printf", FORMAT]


def download_command(output: OutputDir, relative: str, limit: int) -> list[str]:
    return ["find", _in_volume(output, relative), "-maxdepth", "0", "-type", "f",
            "-printf", r"%s\n", "-size", f"-{limit + 1}c",
            "-exec", "base64", "-w", "0", "{}", ";"]


def _not_started(pod: dict) -> str:
    """Why the pod will not start, or ""."""
    status = pod.get("status") or {}
    for c in status.get("containerStatuses") or []:
        waiting = (c.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in _STUCK:
            return f"{waiting.get('reason')}: {waiting.get('message') or ''}".strip(": ")
    return ""


def _pending_reason(pod: dict) -> str:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return str(cond.get("message") or cond.get("reason") or "")
    return ""


def run_pod(client: ClusterClient, namespace: str, job_name: str, output: OutputDir,
            command: list[str], settings: ListerSettings, limit_bytes: int,
            clock: Callable[[], float] = time.monotonic) -> tuple[str, bool, int]:
    """Run the lister pod to its end: (its log, cut at `limit_bytes`, its exit code)."""
    body = lister_pod(job_name, namespace, output, command, settings)
    name = body["metadata"]["name"]
    try:
        client.create_pod(namespace, body)
    except errors.QuotaExceeded as e:
        raise ArtifactsRefused(_("The project's quota has no room for the small pod that "
                                 "reads the volume (%(reason)s).") % {"reason": e.message},
                               "not-started", details=e.message) from None
    except errors.Forbidden as e:
        raise ArtifactsRefused(_("You may not start pods in %(project)s, and the dashboard "
                                 "reads a job's volume with a short-lived pod of yours: ask "
                                 "the project's administrator for the edit role (or a role "
                                 "that may create pods), or read the volume another way.")
                               % {"project": namespace}, "forbidden", details=e.message) \
            from None
    try:
        return _wait_and_read(client, namespace, name, output, settings, limit_bytes, clock)
    finally:
        try:
            client.delete_pod(namespace, name)
        except errors.ClusterError as e:  # it stops itself (activeDeadlineSeconds)
            log.info("lister pod %s/%s not deleted: %s", namespace, name, e.message)


def _wait_and_read(client: ClusterClient, namespace: str, name: str, output: OutputDir,
                   settings: ListerSettings, limit_bytes: int,
                   clock: Callable[[], float]) -> tuple[str, bool, int]:
    deadline = clock() + settings.timeout
    pod: dict = {}
    while True:
        pod = client.get_pod(namespace, name)
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            break
        pending = _pending_reason(pod)
        # a claim that is not there will not appear by itself: say so at once
        stuck = _not_started(pod) or (pending if "persistentvolumeclaim" in pending else "")
        if stuck or clock() > deadline:
            why = stuck or pending or _("it did not finish in %(seconds)d s") % {
                "seconds": int(settings.timeout)}
            raise ArtifactsRefused(_("The pod that reads the volume “%(claim)s” did not "
                                     "start: %(why)s.") % {"claim": output.claim, "why": why},
                                   "not-started")
        time.sleep(settings.poll)
    text = client.read_log(namespace, name, tail_lines=None, limit_bytes=limit_bytes)
    code = 0
    for c in (pod.get("status") or {}).get("containerStatuses") or []:
        code = int(((c.get("state") or {}).get("terminated") or {}).get("exitCode") or 0)
    return str(text), bool(text.cut), code


def list_output(client: ClusterClient, namespace: str, job_name: str, output: OutputDir,
                settings: ListerSettings) -> Listing:
    """What the output directory holds, read as the person."""
    text, cut, code = run_pod(client, namespace, job_name, output, listing_command(output),
                              settings, LISTING_LIMIT_BYTES)
    if code != 0 and not text.strip():
        raise ArtifactsRefused(_("There is no directory “%(path)s” on the volume “%(claim)s” "
                                 "yet: the job has written nothing there.")
                               % {"path": output.path, "claim": output.claim}, "not-found")
    return parse_listing(text, cut)


def download(client: ClusterClient, namespace: str, job_name: str, output: OutputDir,
             path: str, settings: ListerSettings) -> Download:
    """One file of the output directory, if it is no larger than the limit."""
    relative = safe_relative(path)
    limit = settings.download_limit
    encoded_limit = 4 * ((limit + 2) // 3)
    text, cut, _code = run_pod(client, namespace, job_name, output,
                               download_command(output, relative, limit), settings,
                               encoded_limit + 64)
    first, _sep, rest = text.partition("\n")
    if not first.strip().isdigit():
        raise ArtifactsRefused(_("There is no file “%(path)s” in the job's output directory "
                                 "(any more).") % {"path": relative}, "not-found")
    size = int(first.strip())
    if size > limit or cut:
        raise ArtifactsRefused(_("“%(path)s” is %(size)s, more than the %(limit)s the dashboard "
                                 "downloads: copy it from the volume “%(claim)s” with oc rsync "
                                 "or a pod of your own.")
                               % {"path": relative, "size": human_size(size),
                                  "limit": human_size(limit), "claim": output.claim}, "too-big")
    try:
        content = base64.b64decode(rest.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise ArtifactsRefused(_("The pod that reads the volume did not print “%(path)s” "
                                 "whole: try again.") % {"path": relative}, "not-started") \
            from None
    return Download(posixpath.basename(relative), content)
