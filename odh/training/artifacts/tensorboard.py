"""A job's TensorBoard, as the person: the logdirs its listing names, and the two ways to
run it (docs/artifacts.md, "TensorBoard").

- **local**: the job's event files copied, with the person's short-lived lister pods
  (lister.download), into a directory beside the dashboard (`copy_event_files`), for a
  `tensorboard` process there;
- **pod**: a Pod running `tensorboard` that mounts the job's claims read-only and a
  Service in front of it, both created with the person's client (`start_board_pod`), so
  the cluster's RBAC decides, and deleted by label when it is no longer used
  (`stop_board_pods`). The Service belongs to the Pod (an ownerReference), so it goes with
  it even when the dashboard is not there to delete it, and the Pod ends itself after
  BOARD_LIFETIME_SECONDS whatever happens.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from odh.training import errors
from odh.training.artifacts.lister import ArtifactsRefused, ListerSettings, download
from odh.training.artifacts.outputs import OutputDir
from odh.training.artifacts.reading import Artifacts
from odh.training.cluster.client import ClusterClient
from odh.training.i18n import _

TENSORBOARD_LABEL = "opendatahub.io/tensorboard-for"
PERSON_LABEL = "opendatahub.io/tensorboard-person"  # a hash of who started it, not a name
PORT = 6006
LOGS = "/logs"
SCRATCH = "/tmp"  # noqa: S108 (the pod's own emptyDir: TensorBoard's HOME on a read-only root)
MOST_EVENT_FILES = 20  # copied for one local TensorBoard (each is one pod)
BOARD_LIFETIME_SECONDS = 12 * 3600


def no_event_files() -> str:
    """What a job without event files gets (translated when said)."""
    return _("The dashboard found no TensorBoard event files (events.out.tfevents.*) in this "
             "job's output directories yet: TensorBoard has nothing to show. Start it again "
             "once the job has written some.")


class TensorBoardRefused(errors.ODHError):
    """A TensorBoard that could not start; `message` says why and what to do. `reason`:
    no-logs, forbidden, not-installed, exited, not-started."""

    code = "TensorBoardRefused"

    def __init__(self, message: str, reason: str, *, details: str = "") -> None:
        super().__init__(message, details=details)
        self.reason = reason


@dataclass(frozen=True)
class LogDir:
    index: int  # of the output directory among the job's
    output: OutputDir
    relative: str  # the directory inside the output ("" = the output itself)

    @property
    def path(self) -> str:
        """Where the job's containers see it."""
        return posixpath.join(self.output.path, self.relative).rstrip("/")


def job_logdirs(artifacts: Artifacts) -> list[LogDir]:
    """The directories holding event files, in every output directory listed."""
    return [LogDir(i, item.output, d) for i, item in enumerate(artifacts.listings)
            if item.listing is not None for d in item.listing.event_dirs]


def _run_root(output: OutputDir, index: int, several: bool) -> str:
    """The directory of one output's copies under a local TensorBoard's logdir."""
    if not several:
        return ""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", posixpath.basename(output.path)) or "output"
    return f"{index}-{name}"


def write_growing(path: Path, content: bytes) -> None:
    """Write `content` to `path` so that a TensorBoard reading it sees the file grow: only
    the new tail is appended when the file held its beginning (TensorBoard keeps its place
    in an open file), else the file is written anew."""
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_bytes() if path.exists() else b""
    if old and content.startswith(old):
        if len(content) > len(old):
            with path.open("ab") as f:
                f.write(content[len(old):])
        return
    path.write_bytes(content)


def copy_event_files(client: ClusterClient, namespace: str, job_name: str,
                     artifacts: Artifacts, dest: Path, settings: ListerSettings) -> int:
    """Copy the job's event files into `dest` with the person's client; how many. A
    refusal for all of them says why (TensorBoardRefused)."""
    items = [(i, item) for i, item in enumerate(artifacts.listings)
             if item.listing is not None and item.listing.event_files]
    if not items:
        raise TensorBoardRefused(no_event_files(), "no-logs")
    copied, refused = 0, None
    several = len({i for i, _item in items}) > 1
    for i, item in items:
        root = dest / _run_root(item.output, i, several)
        for entry in item.listing.event_files[:MOST_EVENT_FILES]:  # type: ignore[union-attr]
            try:
                got = download(client, namespace, job_name, item.output, entry.path, settings)
            except ArtifactsRefused as e:
                refused = e
                if e.reason == "forbidden":
                    break
                continue
            write_growing(root / entry.path, got.content)
            copied += 1
    if not copied and refused is not None:
        raise TensorBoardRefused(refused.message, "forbidden" if refused.reason == "forbidden"
                                 else "no-logs", details=refused.details)
    return copied


# -- pod -------------------------------------------------------------------------------------
def board_name(job_name: str, person: str) -> str:
    """The Pod's and the Service's name: the job's and a few letters of who started it."""
    base = re.sub(r"[^a-z0-9-]+", "-", job_name.lower())[:40].strip("-") or "job"
    return f"tb-{base}-{person[:8]}"


def board_args(logdirs: list[LogDir], path_prefix: str) -> list[str]:
    """TensorBoard's arguments in the pod: each output's claim is mounted at LOGS/<n>."""
    claims = list(dict.fromkeys(d.output.claim for d in logdirs))
    outputs = list(dict.fromkeys((d.index, d.output) for d in logdirs))
    paths = [(posixpath.join(LOGS, str(claims.index(o.claim)), o.sub_path).rstrip("/"),
              _run_root(o, index, True)) for index, o in outputs]
    if len(paths) == 1:
        logdir = ["--logdir", paths[0][0]]
    else:
        logdir = ["--logdir_spec", ",".join(f"{name}:{path}" for path, name in paths)]
    return ["tensorboard", *logdir, "--port", str(PORT), "--bind_all",
            "--path_prefix", path_prefix]


def board_pod(job_name: str, namespace: str, person: str, logdirs: list[LogDir],
              path_prefix: str, image: str) -> dict:
    """The Pod running TensorBoard on the job's claims, mounted read-only."""
    claims = list(dict.fromkeys(d.output.claim for d in logdirs))
    labels = {TENSORBOARD_LABEL: job_name[:63].rstrip("-._"), PERSON_LABEL: person[:16],
              "app.kubernetes.io/managed-by": "mpijob-dashboard",
              "app.kubernetes.io/name": "tensorboard"}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": board_name(job_name, person), "namespace": namespace,
                     "labels": labels},
        "spec": {
            "restartPolicy": "Never",
            "activeDeadlineSeconds": BOARD_LIFETIME_SECONDS,
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "securityContext": {"runAsNonRoot": True,
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{
                "name": "tensorboard", "image": image,
                "command": board_args(logdirs, path_prefix),
                "ports": [{"name": "http", "containerPort": PORT}],
                "env": [{"name": "HOME", "value": SCRATCH}],
                "readinessProbe": {"httpGet": {"path": path_prefix + "/data/logdir",
                                               "port": PORT}},
                "resources": {"requests": {"cpu": "100m", "memory": "256Mi"},
                              "limits": {"cpu": "1", "memory": "2Gi"}},
                "securityContext": {"allowPrivilegeEscalation": False,
                                    "readOnlyRootFilesystem": True,
                                    "capabilities": {"drop": ["ALL"]}},
                "volumeMounts": [{"name": f"logs-{i}", "mountPath": f"{LOGS}/{i}",
                                  "readOnly": True} for i in range(len(claims))]
                + [{"name": "tmp", "mountPath": SCRATCH}],
            }],
            "volumes": [{"name": f"logs-{i}", "persistentVolumeClaim": {
                "claimName": claim, "readOnly": True}} for i, claim in enumerate(claims)]
            + [{"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}}],
        },
    }


def board_service(pod: dict) -> dict:
    """The Service in front of the Pod, owned by it (deleted with it)."""
    meta = pod["metadata"]
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": meta["name"], "namespace": meta["namespace"],
                     "labels": dict(meta["labels"]),
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod",
                                          "name": meta["name"], "uid": meta.get("uid", "")}]},
        "spec": {"selector": {TENSORBOARD_LABEL: meta["labels"][TENSORBOARD_LABEL],
                              PERSON_LABEL: meta["labels"][PERSON_LABEL]},
                 "ports": [{"name": "http", "port": PORT, "targetPort": PORT}]},
    }


def service_url(namespace: str, name: str) -> str:
    return f"http://{name}.{namespace}.svc:{PORT}"


def start_board_pod(client: ClusterClient, namespace: str, job_name: str, person: str,
                    logdirs: list[LogDir], path_prefix: str, image: str) -> str:
    """Create the Pod and its Service as the person (an earlier pair of theirs is replaced);
    the Service's URL. Refusals in plain words (TensorBoardRefused)."""
    if not logdirs:
        raise TensorBoardRefused(no_event_files(), "no-logs")
    try:
        stop_board_pods(client, namespace, job_name, person)
    except errors.Forbidden:  # the create below says it in plain words
        pass
    pod = board_pod(job_name, namespace, person, logdirs, path_prefix, image)
    try:
        created = client.create_pod(namespace, pod)
        pod["metadata"]["uid"] = str((created.get("metadata") or {}).get("uid") or "")
        client.create_service(namespace, board_service(pod))
    except errors.QuotaExceeded as e:
        raise TensorBoardRefused(_("The project's quota has no room for the TensorBoard pod "
                                   "(%(reason)s): free some, or run TensorBoard in a "
                                   "workbench of the project.") % {"reason": e.message},
                                 "not-started", details=e.message) from None
    except errors.Forbidden as e:
        try:  # a pod created before its service was refused
            stop_board_pods(client, namespace, job_name, person)
        except errors.ClusterError:
            pass
        raise TensorBoardRefused(_("You may not start pods and services in %(project)s, and "
                                   "the dashboard runs a job's TensorBoard as a pod of yours: "
                                   "ask the project's administrator for the edit role, or run "
                                   "TensorBoard in a workbench of the project.")
                                 % {"project": namespace}, "forbidden", details=e.message) \
            from None
    return service_url(namespace, pod["metadata"]["name"])


def stop_board_pods(client: ClusterClient, namespace: str, job_name: str, person: str) -> None:
    """Delete the person's TensorBoard Pod and Service for the job, if there."""
    name = board_name(job_name, person)
    for delete in (client.delete_service, client.delete_pod):
        try:
            delete(namespace, name)
        except errors.NotFound:
            pass
