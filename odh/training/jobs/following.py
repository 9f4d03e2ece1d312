"""What a job in the cluster tells as it runs, as the SDK's jobs read it: its status (with
its queue's standing and its one-line story), each change as it happens, the wait for its
end, its diagnosis and its pods' logs."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import ClassVar

from odh.training import errors
from odh.training.cluster.jobwatch import BACKOFF, WINDOW, job_changes
from odh.training.i18n import _
from odh.training.jobstatus import JobStatus, Phase, StatusNow
from odh.training.kinds import JobKind
from odh.training.logs.logfollow import (
    follow_pod_lines,
    pod_expected,
    pod_for,
    read_text,
    wait_for_pod,
)
from odh.training.logs.progress import Progress
from odh.training.queues.start import progress_ends, read_standing
from odh.training.sdk import TrainingClient

PROGRESS_EVERY = 5  # seconds at most between two readings of a shown progress


class JobFollowing:
    """The reading half of `TrainingJob`: a job of `kind` named `name` in `namespace`, read
    through `client`."""

    kind: ClassVar[JobKind]
    name: str
    namespace: str
    client: TrainingClient

    @property
    def status(self) -> StatusNow:
        """Where the job stands now (`read_status`), read from the cluster each time; call
        it or read it: `job.status().phase` and `job.status.phase` are the same, and
        `job.status == "Succeeded"` compares its phase."""
        return StatusNow.of(self.read_status())

    def read_status(self) -> JobStatus:
        """Where the job stands now (phase, Workers by state, start, completion); for a
        job that names a Kueue queue and has not finished, `queue` too: its position, what
        it needs against what is free, the jobs ahead and its expected start, as far as
        you may read them (odh.training.queues.standing.QueueStanding)."""
        from odh.training.diagnosis import diagnose
        from odh.training.diagnosis.gather import Sources, gather
        from odh.training.diagnosis.story import tell
        from odh.training.status.queries import job_detail
        cluster = self.client.cluster
        detail = job_detail(cluster, self.kind, self.namespace, self.name)
        summary = detail.summary
        status = JobStatus.from_summary(summary)
        standing = None
        if summary.queue and not summary.is_finished:
            standing = read_standing(cluster, self.kind, detail.job,
                                     ends_in=progress_ends(cluster))
            status = dataclasses.replace(status, queue=standing)
        # its one line, as the dashboard and `describe` say it (odh.training.diagnosis.story): the
        # diagnosis from what its headline rests on (objects, events, log tails)
        facts = gather(cluster, detail.job, detail.pods, detail.events, summary=summary,
                       sources=Sources(brief=True, read_nodes=False))
        queued = standing.headline() if standing is not None and summary.held_by_queue \
            else None
        told = tell(summary, diagnose(facts), queued)
        # `step` says the same (the lifecycle step alone: `summary().lifecycle_step`)
        return dataclasses.replace(status, step=str(told.line), headline=str(told.line))

    def _statuses(self, timeout: float | None, window: int = WINDOW) -> Iterator[JobStatus]:
        """The status each time the job changes and at the end of each quiet `window`
        seconds; ends after the job has finished, after `timeout`, or when it is deleted."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for obj in job_changes(self.client.cluster, self.kind, self.namespace, self.name,
                               deadline=deadline, window=window):
            if obj is None:
                return
            current = self._status_through_cuts(deadline)
            yield current
            if current.is_finished:
                return

    def _status_through_cuts(self, deadline: float | None) -> StatusNow:
        """`status`, read again after a back-off when the connection drops mid-read (as the
        watch beside it does), so a wait of hours survives a network blip; still
        unreachable at `deadline`, ClusterUnavailable is raised."""
        delay = BACKOFF[0]
        while True:
            try:
                return self.status
            except errors.ClusterUnavailable:
                if deadline is not None and time.monotonic() + delay >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, BACKOFF[1])

    def watch(self, timeout: float | None = None) -> Iterator[JobStatus]:
        """Each new status as it happens (driven by a watch on the job, not by polling),
        the current one first; ends after the job has finished, or after `timeout`
        seconds, or when it is deleted."""
        last: JobStatus | None = None
        for current in self._statuses(timeout):
            if current.changed_from(last):
                last = current
                yield current

    def progress(self) -> Progress | None:
        """How far training has got (`odh.training.logs.progress.Progress`: epoch or step,
        `fraction`, `eta_at(now)`), as the dashboard's progress bar reads it from the
        Launcher's log (or as a TrainJob reports it); None when the job is not running or
        its log says nothing recognisable."""
        from odh.training.logs.progress import hints_from_job
        from odh.training.logs.running import running_progress
        from odh.training.status.queries import job_detail
        cluster = self.client.cluster
        detail = job_detail(cluster, self.kind, self.namespace, self.name)
        return running_progress(cluster, detail.summary, hints_from_job(self.kind, detail.job))

    def wait_for_completion(self, timeout: float = 3600,
                            show_progress: bool | str = False) -> JobStatus:
        """Return the final status once the job Succeeded; raise JobFailedError (with the
        diagnosis, its suggestions and the log lines it rests on) if it failed, and
        JobTimeoutError after `timeout` seconds.

        `show_progress=True` shows the status and the training's progress and time left
        while it waits, refreshed at least every PROGRESS_EVERY seconds: a tqdm bar where
        tqdm is installed, else a plain line each time it changes ("text" asks for the
        lines, "tqdm" for the bar; odh.training.jobs.notebook)."""
        if not show_progress:
            return self._wait(timeout, None)
        from odh.training.jobs.notebook import display
        shown = display(self, show_progress)
        try:
            return self._wait(timeout, shown)
        finally:
            shown.close()

    def _wait(self, timeout: float, show) -> JobStatus:
        last: JobStatus | None = None
        statuses = self.watch(timeout=timeout) if show is None else \
            self._statuses(timeout, PROGRESS_EVERY)
        for last in statuses:
            if show is not None:
                show(last, self._progress_quietly(last))
            if last.phase == Phase.FAILED:
                raise self.client.failure(self.name, self.namespace, self.kind)
            if last.phase == Phase.SUCCEEDED:
                return last
        if last is not None and last.phase in (Phase.SUCCEEDED, Phase.FAILED):
            return last
        try:
            last = self.status()
        except errors.NotFound:
            raise errors.NotFound(_("%(name)s was deleted before it finished.")
                                  % {"name": self.name}, status=404,
                                  namespace=self.namespace) from None
        raise errors.JobTimeoutError(
            _("%(name)s is still %(status)s after %(seconds)d seconds.") % {
                "name": self.name, "status": last.phase.value, "seconds": int(timeout)},
            status=last)

    def _progress_quietly(self, status: JobStatus) -> Progress | None:
        """The progress to show beside `status`: None where it cannot be read (the log
        refused, the job gone): the wait goes on, saying the status alone."""
        if status.phase != Phase.RUNNING:
            return None
        try:
            return self.progress()
        except errors.ClusterError:
            return None

    def cost(self):
        """What the job has cost so far (not finished) or in all (finished), at the prices
        the dashboard's administrators set, as it publishes them (the ConfigMap
        mpijob-dashboard-prices in $ODH_DASHBOARD_NAMESPACE, by default mpijob-dashboard):
        an `odh.training.cost.Cost` (`.total` a Decimal, `.currency`, `.text` "12.35
        USD", `.basis` what it counts), or None when no price is set."""
        from odh.training.cost import job_cost, read_prices
        from odh.training.status.queries import job_detail
        cluster = self.client.cluster
        prices = read_prices(cluster)
        if not prices.is_set:
            return None
        detail = job_detail(cluster, self.kind, self.namespace, self.name)
        return job_cost(prices, self.kind, detail.job, detail.summary.duration_seconds())

    def get_metrics(self, names=None, start=None, end=None, *,
                    prometheus: str | None = None) -> dict[str, dict[str, list[dict]]]:
        """The job's series as the dashboard's Metrics tab charts them, read from the
        cluster's Prometheus with your credentials: a dict by chart (`names`, by default
        every one: "gpu_util", "gpu_memory", "cpu", "memory", "network_receive",
        "network_transmit", "disk_read", "disk_write") of dicts by series ("launcher",
        "worker-0", "worker-0 GPU 0") of points `{"time": "2025-01-31T12:00:00Z",
        "value": 87.0}` (percent, bytes, cores, bytes per second). `start` and `end`
        (datetimes, or ISO 8601 texts) default to the job's whole run. `prometheus` is the
        query API's URL (default: $ODH_PROMETHEUS_URL); ClusterUnavailable when there is
        none or it does not answer."""
        from odh.training.metrics.export import read_series
        return read_series(self.client, self.kind, self.namespace, self.name, names=names,
                           start=start, end=end, prometheus=prometheus)

    def diagnose(self):
        """Why the job failed, waits or looks unwell, and what to do (None: all is well)."""
        return self.client.diagnose(self.name, self.namespace, self.kind)

    def get_logs(self, component: str = "launcher", worker_id: int | None = None,
                 follow: bool = False, tail: int | None = None,
                 previous: bool = False) -> Iterator[str]:
        """The Launcher's log lines (`component="launcher"`) or Worker `worker_id`'s
        (`component="worker"`). With `follow`, lines come as they are written until the
        pod ends, waiting first for a pod or container that has not started; a dropped
        connection is picked up again without losing or repeating a line. Without it, the
        lines there are: none yet for a job that is starting. `previous`: the crashed run
        (the container's log before it last restarted; NotFound when it never did)."""
        if component not in ("launcher", "worker"):
            raise ValueError(_('component is "launcher" or "worker".'))
        if component == "worker" and worker_id is None:
            raise ValueError(_("worker_id is required for a Worker's log: "
                               "get_logs(component=\"worker\", worker_id=0)."))
        if previous and follow:
            raise ValueError(_("A crashed run has ended: read it without follow."))
        index = worker_id if component == "worker" else None
        cluster = self.client.cluster
        if follow:
            pod = wait_for_pod(cluster, self.kind, self.namespace, self.name, index)
        else:
            try:
                pod = pod_for(cluster, self.kind, self.namespace, self.name, index)
            except errors.NotFound:
                if not pod_expected(cluster, self.kind, self.namespace, self.name, index):
                    raise  # no such job, or a pod it will never have
                return iter(())
            text = read_text(cluster, self.namespace, pod, tail, previous=previous)
            return iter((text or "").splitlines())
        return (text for _stamp, text in follow_pod_lines(
            self.client.cluster, self.namespace, pod.name, pod.container, tail=tail))
