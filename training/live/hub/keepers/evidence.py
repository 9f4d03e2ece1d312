"""The watch hub's keeper of evidence (odh/training/diagnosis/evidence.py): each failed run of a
job's container is kept as it happens (the pod as it was, its log's last lines read then, with
the dashboard's service account), and a failed pod's last state when it is deleted, in
the database (training.models.KeptEvidence), before the cluster deletes them.

The hub hands each pod change to `saw()` (cheap: a comparison with the pod as the index
had it); the keeper's own thread reads the logs and writes the rows, so a slow log or
database never delays live updates; what the hub finds failed when it starts (it failed
while no watcher ran) is kept then, if it was not before. A log read right after a
container ended usually finds it: a restarted container's previous run stays readable
until its next restart, a failed Launcher's pod until its Job gives up on it. What could
not be read is kept without its log. Written once per (job, pod, container, run),
whichever watcher sees it; that watcher also writes it, small, on the job object
(`ANNOTATION`), where the CLI, the SDK and kubectl read it.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.diagnosis.evidence import (
    ANNOTATION,
    TAIL_LINES,
    Kept,
    Moment,
    annotation_with,
    moments,
)
from odh.training.kinds import kind_for_object
from odh.training.paths import get_path
from training.live.hub.background import Background

log = logging.getLogger("training.live.hub")

Obj = dict[str, Any]
QUEUE_MAX = 1000  # moments waiting to be kept: a burst beyond this drops the oldest
KEPT_DAYS = 30  # kept this long, as long as a finished job's story is looked at
PRUNE_SECONDS = 24 * 3600


def keep_with_orm(**row: Any) -> bool:
    from training.models import KeptEvidence

    return KeptEvidence.keep_once(**row)


def kept_with_orm(job_uid: str, pod: str, container: str, run: int) -> bool:
    from training.models import KeptEvidence

    return KeptEvidence.kept(job_uid, pod, container, run)


class EvidenceKeeper(Background):
    name = "hub-evidence"

    def __init__(self, client_factory: Callable[[], ClusterClient],
                 keep: Callable[..., bool] = keep_with_orm,
                 kept: Callable[[str, str, str, int], bool] = kept_with_orm) -> None:
        super().__init__()
        self.client_factory = client_factory
        self.keep = keep
        self.already = kept
        self.kept = 0
        self.errors = 0
        self.published = 0
        self._queue: deque[tuple[Obj, Moment]] = deque(maxlen=QUEUE_MAX)
        self._busy = False

    def stats(self) -> dict[str, int]:
        with self._cond:
            return {"kept": self.kept, "published": self.published,
                    "queued": len(self._queue), "errors": self.errors}

    def idle(self) -> bool:
        with self._cond:
            return not self._queue and not self._busy

    # -- from the hub ---------------------------------------------------------------------------
    def saw(self, before: Obj | None, after: Obj | None, job: Obj | None) -> None:
        """A pod of `job` changed (`after` None: deleted); `before` as the index had it."""
        if job is None:
            return
        found = moments(before, after)
        if not (job.get("metadata") or {}).get("uid") or not found:
            return
        with self._cond:
            self._queue.extend((job, m) for m in found)
            self._cond.notify()

    # -- the keeper's thread ---------------------------------------------------------------------
    def _prune(self) -> None:
        from datetime import UTC, datetime, timedelta

        from training.models import KeptEvidence

        KeptEvidence.objects.filter(at__lt=datetime.now(UTC) - timedelta(days=KEPT_DAYS)
                                    ).delete()

    def run(self) -> None:
        import time

        from django.db import close_old_connections, connection

        pruned = float("-inf")  # at the start, then daily
        try:
            while not self.stopping:
                if time.monotonic() - pruned > PRUNE_SECONDS:
                    pruned = time.monotonic()
                    close_old_connections()
                    try:
                        self._prune()
                    except Exception as e:  # the database away: next time
                        log.warning("evidence: could not prune: %s", e)
                with self._cond:
                    if not self._queue:
                        self._busy = False
                        self._cond.wait(1.0)
                        continue
                    item = self._queue.popleft()
                    self._busy = True
                close_old_connections()
                try:
                    self._keep(*item)
                except Exception as e:  # the database away: this moment is not kept
                    self.errors += 1
                    log.warning("evidence: could not keep %s: %s", item[1].pod_name, e)
                finally:
                    close_old_connections()
        finally:
            connection.close()

    def _keep(self, job: Obj, moment: Moment) -> None:
        meta = job.get("metadata") or {}
        job_uid, namespace = str(meta.get("uid") or ""), str(meta.get("namespace") or "")
        # what the hub lists when it starts again is seen again: kept already, not read
        if self.already(job_uid, moment.pod_name, moment.container, moment.run):
            return
        text = "" if moment.gone else self._read(namespace, moment)
        created = self.keep(job_uid=job_uid, namespace=namespace,
                            job_name=str(meta.get("name") or ""), pod=moment.pod_name,
                            container=moment.container, run=moment.run,
                            previous=moment.previous, gone=moment.gone, snapshot=moment.pod,
                            log=text)
        if created:
            with self._cond:
                self.kept += 1
            # whichever watcher kept it first writes it on the job too
            self._publish(job, Kept(moment.pod_name, moment.container, moment.run,
                                    moment.previous, moment.pod, text, moment.gone))

    def _publish(self, job: Obj, kept: Kept) -> None:
        """Write the moment on the job (odh.training.diagnosis.evidence.ANNOTATION), for the
        CLI, the SDK and kubectl; the database has it whatever happens here."""
        kind = kind_for_object(job)
        meta = job.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        if kind is None:
            return
        try:
            with self.client_factory() as client:
                for _attempt in range(3):
                    current = client.get_job(kind, namespace, name)
                    if get_path(current, ["metadata", "uid"]) != meta.get("uid"):
                        return  # another job of that name now
                    try:
                        client.annotate_job(kind, namespace, name, ANNOTATION,
                                            annotation_with(current, kept),
                                            str(get_path(current, ["metadata",
                                                                   "resourceVersion"])))
                    except errors.Conflict:
                        continue  # the job changed meanwhile: read it again
                    with self._cond:
                        self.published += 1
                    return
        except errors.ClusterError as e:  # gone, or this account may not patch jobs
            log.info("evidence: not written on %s/%s (%s)", namespace, name, e.message)

    def _read(self, namespace: str, moment: Moment) -> str:
        try:
            with self.client_factory() as client:
                return str(client.read_log(namespace, moment.pod_name,
                                           container=moment.container or None,
                                           tail_lines=TAIL_LINES, timestamps=True,
                                           previous=moment.previous))
        except errors.ClusterError as e:  # gone already, or not readable: kept without it
            log.info("evidence: no log of %s/%s (%s)", namespace, moment.pod_name, e.message)
            return ""
