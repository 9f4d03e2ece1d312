"""What the dashboard keeps of jobs the cluster forgets: the history of finished jobs, their
last known state and each transition, kept evidence, and automatic retries."""

from __future__ import annotations

from django.db import IntegrityError, models
from django.utils.translation import gettext_lazy as _

from training.unlocked import unlocked


class JobHistory(models.Model):
    """A finished job as it was: written once when the watcher sees it succeed or fail, so
    success rates, comparisons and clone-from-history survive the job's deletion.

    One row per job uid (a unique constraint): `record_once` is safe to call from every
    watcher that sees the job finish, at the same time, in any number of processes.
    """

    class Outcome(models.TextChoices):
        SUCCEEDED = "Succeeded", _("Succeeded")
        FAILED = "Failed", _("Failed")

    uid = models.CharField(max_length=64, unique=True)
    namespace = models.CharField(max_length=253, db_index=True)
    # the project's uid when the job ran: a project deleted and made again under the same
    # name is another project, whose members must not see this one's records ("" for
    # records written before it was kept: taken as the project of that name)
    project_uid = models.CharField(max_length=64, blank=True, db_index=True)
    kind = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    created_by = models.CharField(max_length=253, blank=True, db_index=True)
    spec = models.JSONField(default=dict)  # the manifest without status (re-appliable)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, db_index=True)
    reason = models.CharField(max_length=253, blank=True)  # the operator's
    message = models.TextField(blank=True)
    # the dashboard's diagnosis of a failure: the pod that best explains it, in words
    # ("Worker 2 was OOMKilled"), and that pod's reason ("OOMKilled"), which the failures
    # metric prefers to the operator's generic one (BackoffLimitExceeded)
    cause = models.CharField(max_length=500, blank=True)
    cause_reason = models.CharField(max_length=63, blank=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True, db_index=True)
    duration_seconds = models.FloatField(null=True, blank=True)
    gpu_hours = models.FloatField(default=0.0)
    # what its Workers used, from Prometheus, written by the watcher just after the record
    # (odh/training/metrics/usage.py): the highest Worker's peak working set, in bytes, and
    # its GPUs' mean utilisation, in percent; null where Prometheus had none (the wizard's
    # advice from history reads them: odh/training/advice/)
    peak_memory_bytes = models.FloatField(null=True, blank=True)
    gpu_utilization = models.FloatField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-finished", "-id"]
        indexes = [models.Index(fields=["namespace", "kind", "name"])]
        verbose_name_plural = "job histories"

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name} ({self.uid}): {self.outcome}"

    @classmethod
    def record_once(cls, *, uid: str, namespace: str, kind: str, name: str, outcome: str,
                    created_by: str = "", spec: dict | None = None, reason: str = "",
                    project_uid: str = "",
                    message: str = "", cause: str = "", cause_reason: str = "",
                    started=None, finished=None,
                    duration_seconds: float | None = None,
                    gpu_hours: float = 0.0) -> tuple[JobHistory, bool]:
        """The job's record, written if it is not there yet: (record, whether written now).

        The first writer wins and later ones get its row, even when they race: the unique
        uid makes the database refuse a second insert, and get_or_create then reads the
        row the other writer committed.
        """
        if not uid:
            raise ValueError("a job history record needs the job's uid")
        if outcome not in cls.Outcome.values:
            raise ValueError(f"a job history record is for a finished job, not {outcome!r}")
        defaults = {"namespace": namespace, "project_uid": project_uid, "kind": kind,
                    "name": name,
                    "created_by": created_by, "spec": spec or {}, "outcome": outcome,
                    "reason": reason[:253], "message": message[:4000], "cause": cause[:500],
                    "cause_reason": cause_reason[:63], "started": started,
                    "finished": finished, "duration_seconds": duration_seconds,
                    "gpu_hours": gpu_hours}
        def write() -> tuple[JobHistory, bool]:
            try:
                return cls.objects.get_or_create(uid=uid, defaults=defaults)
            except IntegrityError:
                # get_or_create already retries the read once; a writer whose transaction
                # committed between the two is found here
                return cls.objects.get(uid=uid), False
        return unlocked(write)

    @classmethod
    def record_finished(cls, job: dict, summary, project_uid: str = "") -> tuple[JobHistory,
                                                                                 bool]:
        """`record_once` for a finished job object and its status summary."""
        from odh.training.status.history import history_fields
        return cls.record_once(**history_fields(job, summary), project_uid=project_uid)

    @classmethod
    def of_project(cls, name: str, uid: str | None):
        """The records of project `name` as it is now (`uid`), and those written before
        project uids were kept; None: the person does not see the project, so none."""
        if uid is None:
            return cls.objects.none()
        return cls.objects.filter(namespace=name).filter(
            models.Q(project_uid=uid) | models.Q(project_uid=""))


class JobState(models.Model):
    """The status the watchers last recorded for each job (one row per job uid): what a
    transition is claimed against (training/live/hub/keepers/transitions.py). A watcher that sees
    a job in another status moves the row with a conditional update; only the one whose
    update changed the row records the transition, so it is recorded once however many
    watchers saw it. `since` (when the job says the status began) keeps a watcher that is
    behind from moving the row back. The row of a deleted job is pruned a day after its
    deletion (`updated`); its transitions stay."""

    uid = models.CharField(max_length=64, unique=True)
    namespace = models.CharField(max_length=253)
    kind = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    status = models.CharField(max_length=16)  # Pending ... Suspended, or "Deleted"
    since = models.DateTimeField(null=True, blank=True)
    updated = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name} ({self.uid}): {self.status}"


class JobTransition(models.Model):
    """A job moved from one status to another, recorded exactly once: the event the job
    history (and, next, notifications) are made from. `from_status` "" is a job seen for
    the first time (created, or there before any watcher ran); `to_status` "Deleted" is a
    job gone. Never changed but for `audited`."""

    uid = models.CharField(max_length=64, db_index=True)
    namespace = models.CharField(max_length=253)
    kind = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    created_by = models.CharField(max_length=253, blank=True)
    from_status = models.CharField(max_length=16, blank=True)
    to_status = models.CharField(max_length=16)
    # when it happened as the job tells it (its condition's time), or when it was seen
    at = models.DateTimeField()
    job_created = models.DateTimeField(null=True, blank=True)
    # the diagnosis headline, in the site's language, where there is one
    headline = models.CharField(max_length=500, blank=True)
    recorded = models.DateTimeField(auto_now_add=True, db_index=True)
    # creations and deletions: whether the audit trail was told (done here, or "seen")
    audited = models.BooleanField(default=True)

    class Meta:
        ordering = ["-recorded", "-id"]
        indexes = [models.Index(fields=["namespace", "kind", "name"]),
                   # the recorder's audit pass, every 2 s: the few not yet audited
                   models.Index(fields=["recorded"], condition=models.Q(audited=False),
                                name="jobtransition_unaudited_idx")]

    def __str__(self) -> str:
        return (f"{self.kind} {self.namespace}/{self.name}: {self.from_status or '(new)'} -> "
                f"{self.to_status}")


class KeptEvidence(models.Model):
    """A failed run of one of a job's containers, kept when it happened (the watcher's
    odh.training.diagnosis.evidence moments): the pod as it was, and its log's last lines. The
    cluster may delete both soon after (a Launcher restarted in place and deleted at its
    backoff limit); the diagnosis takes them back as the pods and logs they were.

    One row per (job uid, pod, container, run): written once, whichever watcher sees it
    first (`keep_once`); `run` -1 is a failed pod's last state when it was deleted."""

    job_uid = models.CharField(max_length=64, db_index=True)
    namespace = models.CharField(max_length=253)
    job_name = models.CharField(max_length=253)
    pod = models.CharField(max_length=253)
    container = models.CharField(max_length=253, blank=True)
    run = models.IntegerField()
    previous = models.BooleanField(default=False)
    gone = models.BooleanField(default=False)
    snapshot = models.JSONField(default=dict)
    log = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job_uid", "pod", "container", "run"],
                                               name="kept_evidence_once")]

    @classmethod
    def keep_once(cls, *, job_uid: str, namespace: str, job_name: str, pod: str,
                  container: str, run: int, previous: bool, gone: bool, snapshot: dict,
                  log: str) -> bool:
        """Keep the moment if it is not kept yet (another watcher may have): whether now."""
        def write() -> bool:
            try:
                _row, created = cls.objects.get_or_create(
                    job_uid=job_uid, pod=pod, container=container, run=run,
                    defaults={"namespace": namespace, "job_name": job_name,
                              "previous": previous, "gone": gone, "snapshot": snapshot,
                              "log": log})
                return created
            except IntegrityError:
                return False
        return unlocked(write)

    @classmethod
    def kept(cls, job_uid: str, pod: str, container: str, run: int) -> bool:
        return unlocked(lambda: cls.objects.filter(job_uid=job_uid, pod=pod,
                                                   container=container, run=run).exists())

    @classmethod
    def of_job(cls, job_uid: str):
        """The job's kept moments, the latest RUNS_KEPT failed runs of each container and
        the last state of each pod that went away."""
        from odh.training.diagnosis.evidence import RUNS_KEPT, Kept

        rows = list(cls.objects.filter(job_uid=job_uid).order_by("pod", "container", "-run"))
        kept, counted = [], {}
        for row in rows:
            key = (row.pod, row.container)
            counted[key] = counted.get(key, 0) + 1
            if row.gone or counted[key] <= RUNS_KEPT:
                kept.append(Kept(row.pod, row.container, row.run, row.previous, row.snapshot,
                                 row.log, row.gone))
        return kept


class JobRetry(models.Model):
    """An automatic retry of a failed job (odh/training/manifests/retries.py): decided in
    the transaction that records the job's transition to Failed (training/live/hub/
    transitions.py), so once per failure whichever watcher recorded it; started by the
    watcher's process when `due` (the back-off), each attempt claimed first
    (`claimed_until`, a conditional update) so that two watchers never start it twice
    (training/live/hub/keepers/retries.py). One row per (first job, attempt): the unique constraint
    makes a second impossible."""

    class State(models.TextChoices):
        WAITING = "waiting", _("Waiting")
        STARTED = "started", _("Started")
        REFUSED = "refused", _("Not started")

    original_uid = models.CharField(max_length=64)  # the first job's
    attempt = models.PositiveSmallIntegerField()  # 1: the first retry
    retries = models.PositiveSmallIntegerField()  # as many as were asked for
    namespace = models.CharField(max_length=253)
    kind = models.CharField(max_length=63)
    original = models.CharField(max_length=253)  # the first job's name
    failed = models.CharField(max_length=253)  # the job whose failure this answers
    failed_uid = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=253)  # the retry's
    created_by = models.CharField(max_length=253, blank=True)  # the first job's creator
    scenario = models.CharField(max_length=63, blank=True)  # the diagnosis of the failure
    headline = models.CharField(max_length=500, blank=True)
    spec = models.JSONField(default=dict)  # the failed job's manifest, cloned when due
    due = models.DateTimeField()
    state = models.CharField(max_length=8, choices=State.choices, default=State.WAITING)
    claimed_until = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=1000, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["attempt", "id"]
        constraints = [models.UniqueConstraint(fields=["original_uid", "attempt"],
                                               name="job_retry_once")]
        indexes = [models.Index(fields=["due"], condition=models.Q(state="waiting"),
                                name="job_retry_due_idx"),
                   models.Index(fields=["namespace", "kind", "original"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}: retry {self.attempt} of " \
               f"{self.original} ({self.state})"


# the watcher's training curves, in a part of their own (registered with the app here)
from training.curves.models import TrainingCurves  # noqa: E402,F401
