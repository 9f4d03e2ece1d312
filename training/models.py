"""What the dashboard keeps that the cluster forgets: the audit trail, wizard drafts,
saved job templates and the history of finished jobs."""

from __future__ import annotations

import time
import uuid

from django.conf import settings
from django.db import IntegrityError, OperationalError, models
from django.utils.translation import gettext_lazy as _

from odh.training.kinds import JobKind, default_kind, kind_for_slug


class AppendOnlyError(RuntimeError):
    pass


class AuditQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnlyError("audit events are append-only: they cannot be updated")

    def delete(self):
        raise AppendOnlyError("audit events are append-only: they cannot be deleted")

    def bulk_update(self, *args, **kwargs):
        raise AppendOnlyError("audit events are append-only: they cannot be updated")


# The actions the audit trail records, as people read them; the verb itself is what is
# stored, filtered on and exported.
VERB_LABELS = {
    "create": _("Create"),
    "clone": _("Clone"),
    "retry": _("Retry"),
    "delete": _("Delete"),
    "suspend": _("Suspend"),
    "resume": _("Resume"),
    "set_prices": _("Set prices"),
    "set_quota": _("Change quota"),
    "set_nominal_quota": _("Change queue quota"),
    "set_priority": _("Change priority"),
    "create_claim": _("Create a volume claim"),  # made with a job, before it (the wizard)
}


def verb_label(verb: str) -> str:
    """An audit verb as people read it (translated); one recorded by a later version that
    this one does not know stays as it was recorded."""
    return str(VERB_LABELS.get(verb, verb))


class AuditEvent(models.Model):
    """One mutation made through the dashboard, whatever its outcome. Never changed."""

    class Outcome(models.TextChoices):
        SUCCESS = "success", _("Success")
        DENIED = "denied", _("Denied")
        FAILED = "failed", _("Failed")
        # made or removed outside the dashboard (CLI, SDK, kubectl): seen by the watcher
        SEEN = "seen", _("Seen")

    created = models.DateTimeField(auto_now_add=True, db_index=True)
    username = models.CharField(max_length=253, db_index=True)
    groups = models.JSONField(default=list)
    project = models.CharField(max_length=253, db_index=True)
    kind = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    verb = models.CharField(max_length=32, db_index=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, db_index=True)
    detail = models.TextField(blank=True)
    source_ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=512, blank=True)
    request_id = models.CharField(max_length=64, blank=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["project", "kind", "name"])]

    def __str__(self) -> str:
        return f"{self.username} {self.verb} {self.kind} {self.project}/{self.name}: {self.outcome}"

    @property
    def verb_label(self) -> str:
        return verb_label(self.verb)

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise AppendOnlyError("audit events are append-only: they cannot be updated")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("audit events are append-only: they cannot be deleted")


def default_draft_kind() -> str:
    """A new draft creates the default kind (the MPIJob)."""
    return default_kind().slug


class WizardDraft(models.Model):
    """A create-job wizard in progress: what the person typed, kept server-side.

    Each draft has its own key in the wizard's URL (/jobs/new/<key>/<step>/), so two tabs
    are two drafts, and a reload, a failed create or a trip through sign-in comes back to
    the same input. `data` holds the fields as the forms posted them (strings, lists of
    rows), valid or not; `base` is the manifest the draft started from (clone, import or
    template) so that fields the wizard does not show survive into the created job.
    """

    key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="wizard_drafts")
    step = models.CharField(max_length=32, default="type")
    # the slug of the job kind the draft creates (odh.training.kinds)
    kind = models.CharField(max_length=32, default=default_draft_kind)
    # "" | "clone:<project>/<type>/<name>" | "retry:<project>/<type>/<name>" |
    # "template:<slug or id>" | "import"
    source = models.CharField(max_length=600, blank=True)
    data = models.JSONField(default=dict, blank=True)
    base = models.JSONField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True, db_index=True)
    # the browser's send time (ms, rising per page) of the newest form post written: a live
    # check sent before a step's Next and answered after it writes nothing (views/wizard/base.py)
    revision = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["-updated"]

    @property
    def job_kind(self) -> JobKind:
        """The kind the draft creates; a kind the wizard does not show (no longer created
        here, or created by the SDK and CLI only) falls back to the default kind."""
        try:
            kind = kind_for_slug(self.kind)
        except KeyError:
            return default_kind()
        return kind if kind.wizard_ready else default_kind()

    def __str__(self) -> str:
        return f"draft {self.key} of {self.user}: {self.data.get('name', '')!r} at {self.step}"


class JobTemplate(models.Model):
    """A job configuration saved from the wizard's review step, to start from next time.

    `project` blank: personal (only `owner` sees it); otherwise shared with everyone who can
    see that project. `spec` is the MPIJob manifest without name and namespace.
    """

    owner = models.CharField(max_length=253, db_index=True)
    project = models.CharField(max_length=253, blank=True, db_index=True)
    # the shared project's uid: a project made again under the same name is another one
    # ("" for templates saved before it was kept, taken as the project of that name)
    project_uid = models.CharField(max_length=64, blank=True)
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    spec = models.JSONField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["owner", "project", "name"],
                                               name="unique_template_name")]

    def __str__(self) -> str:
        where = self.project or _("personal")
        return f"{self.name} ({where}, {self.owner})"

    @classmethod
    def for_person(cls, username: str, projects) -> models.QuerySet:
        """The templates someone may start from: their own personal ones, and those shared
        with the projects they see as those projects are now (`projects`: Project objects;
        a template of a project deleted and made again under the same name is not shown)."""
        shared = models.Q()
        for project in projects:
            shared |= models.Q(project=project.name) & (
                models.Q(project_uid=project.uid) | models.Q(project_uid=""))
        return cls.objects.filter(models.Q(project="", owner=username) | shared)


# seconds between attempts when SQLite answers "database is locked" (PostgreSQL waits instead)
_LOCKED_RETRIES = (0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6)


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
        for delay in (*_LOCKED_RETRIES, None):
            try:
                return cls.objects.get_or_create(uid=uid, defaults=defaults)
            except IntegrityError:
                # get_or_create already retries the read once; a writer whose transaction
                # committed between the two is found here
                return cls.objects.get(uid=uid), False
            except OperationalError as e:
                # SQLite lets one writer at a time in, and tells the others "locked" rather
                # than always waiting: try again shortly (the record must not be lost)
                if delay is None or "locked" not in str(e):
                    raise
                time.sleep(delay)
        raise AssertionError("unreachable")

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
        for delay in (*_LOCKED_RETRIES, None):
            try:
                _row, created = cls.objects.get_or_create(
                    job_uid=job_uid, pod=pod, container=container, run=run,
                    defaults={"namespace": namespace, "job_name": job_name,
                              "previous": previous, "gone": gone, "snapshot": snapshot,
                              "log": log})
                return created
            except IntegrityError:
                return False
            except OperationalError as e:  # SQLite's "locked": as JobHistory.record_once
                if delay is None or "locked" not in str(e):
                    raise
                time.sleep(delay)
        raise AssertionError("unreachable")

    @classmethod
    def kept(cls, job_uid: str, pod: str, container: str, run: int) -> bool:
        for delay in (*_LOCKED_RETRIES, None):
            try:
                return cls.objects.filter(job_uid=job_uid, pod=pod, container=container,
                                          run=run).exists()
            except OperationalError as e:  # SQLite's "locked": as keep_once
                if delay is None or "locked" not in str(e):
                    raise
                time.sleep(delay)
        raise AssertionError("unreachable")

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


# -- notifications (training/notifications.py) ----------------------------------------------
# the statuses a subscription may ask to hear of, in the order the form shows them
NOTIFY_STATUSES = ("Failed", "Succeeded", "Running", "Pending", "Suspended")
DEFAULT_NOTIFY_STATUSES = ["Failed", "Succeeded"]
# the signs a subscription may also ask to hear of (odh/training/signs.py), in the form's
# order: "warnings" are the early warnings before a failure (memory near its limit, an ETA
# past the deadline, a possible hang with idle GPUs)
NOTIFY_SIGNALS = ("pending", "hang", "restart", "warnings")
SIGNALS_WANTED = {"pending": ("pending",), "hang": ("hang",), "restart": ("restart",),
                  "warnings": ("hang", "memory", "deadline")}


class NotificationSubscription(models.Model):
    """A person's wish to hear of transitions: of their own jobs, one job, or every job
    of a project, through any of three channels (the dashboard's bell, email, a signed
    webhook). `groups` are the person's groups when they saved it: the SubjectAccessReview
    made at each delivery asks for that user and those groups."""

    class Scope(models.TextChoices):
        MINE = "mine", _("My jobs")
        JOB = "job", _("One job")
        PROJECT = "project", _("A project")

    username = models.CharField(max_length=253, db_index=True)
    groups = models.JSONField(default=list, blank=True)
    scope = models.CharField(max_length=8, choices=Scope.choices, default=Scope.MINE)
    project = models.CharField(max_length=253, blank=True)
    kind = models.CharField(max_length=63, blank=True)
    job = models.CharField(max_length=253, blank=True)
    statuses = models.JSONField(default=list)
    # NOTIFY_SIGNALS asked for; "pending" with pending_minutes (N)
    signals = models.JSONField(default=list, blank=True)
    pending_minutes = models.PositiveIntegerField(null=True, blank=True)
    in_dashboard = models.BooleanField(default=True)
    email = models.EmailField(max_length=254, blank=True)
    webhook_url = models.CharField(max_length=2000, blank=True)
    webhook_secret = models.CharField(max_length=128, blank=True)
    # a webhook answering 410 Gone turns the subscription off, saying so here
    active = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=500, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["scope", "project", "job", "id"]
        indexes = [models.Index(fields=["scope", "project"])]

    def __str__(self) -> str:
        return f"{self.username}: {self.scope} {self.project}/{self.job}"

    def wants(self, signal: str) -> bool:
        """Whether it asked to hear of this sign (odh.training.signs' names)."""
        return any(signal in SIGNALS_WANTED.get(asked, ()) for asked in self.signals or [])


class JobSignal(models.Model):
    """One occurrence of a sign worth telling before a job ends (odh/training/signs.py): a
    job Pending past N minutes, a possible hang, a restart, an early warning. Claimed once
    per (uid, signal, key), whichever watcher saw it first; its notifications are queued in
    the same transaction (training/notifications.py), as a transition's are."""

    uid = models.CharField(max_length=64)
    namespace = models.CharField(max_length=253)
    kind = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    created_by = models.CharField(max_length=253, blank=True)
    status = models.CharField(max_length=16)  # the job's status when it was seen
    signal = models.CharField(max_length=16)
    key = models.CharField(max_length=300)
    at = models.DateTimeField()
    headline = models.CharField(max_length=500)
    advice = models.CharField(max_length=1000, blank=True)
    recorded = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-recorded", "-id"]
        constraints = [models.UniqueConstraint(fields=["uid", "signal", "key"],
                                               name="job_signal_once")]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}: {self.signal} {self.key}"


class NotificationDelivery(models.Model):
    """One message to send: a transition (or a sign, `signal`) through one channel of one
    subscription (or a test, without either). Queued in the transaction that records the transition,
    so once per transition; sent by the watcher's process, each attempt claimed first
    (`claimed_until`, a conditional update) so that two watchers never send it twice."""

    class Channel(models.TextChoices):
        DASHBOARD = "dashboard", _("In the dashboard")
        EMAIL = "email", _("Email")
        WEBHOOK = "webhook", _("Webhook")

    class State(models.TextChoices):
        QUEUED = "queued", _("Queued")
        SENT = "sent", _("Sent")
        FAILED = "failed", _("Failed")
        SKIPPED = "skipped", _("Not sent")

    subscription = models.ForeignKey(NotificationSubscription, on_delete=models.CASCADE,
                                     related_name="deliveries")
    transition = models.ForeignKey(JobTransition, null=True, blank=True,
                                   on_delete=models.CASCADE)
    signal = models.ForeignKey(JobSignal, null=True, blank=True, on_delete=models.CASCADE)
    channel = models.CharField(max_length=10, choices=Channel.choices)
    state = models.CharField(max_length=8, choices=State.choices, default=State.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt = models.DateTimeField()
    claimed_until = models.DateTimeField(null=True, blank=True)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    sent = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]
        constraints = [models.UniqueConstraint(
            fields=["subscription", "transition", "channel"],
            condition=models.Q(transition__isnull=False), name="notification_delivery_once"),
            models.UniqueConstraint(
                fields=["subscription", "signal", "channel"],
                condition=models.Q(signal__isnull=False),
                name="notification_delivery_signal_once")]
        indexes = [models.Index(fields=["next_attempt"],
                                condition=models.Q(state="queued"),
                                name="notification_delivery_due_idx")]

    def __str__(self) -> str:
        return f"{self.channel} #{self.pk} of {self.subscription_id}: {self.state}"


class Notification(models.Model):
    """What the bell shows a person: a delivery through the dashboard's own channel, or
    word that a webhook was turned off."""

    username = models.CharField(max_length=253)
    project = models.CharField(max_length=253, blank=True)
    kind = models.CharField(max_length=63, blank=True)
    job = models.CharField(max_length=253, blank=True)
    from_status = models.CharField(max_length=20, blank=True)
    to_status = models.CharField(max_length=20, blank=True)
    text = models.CharField(max_length=1000)
    headline = models.CharField(max_length=500, blank=True)
    url = models.CharField(max_length=2000, blank=True)
    read = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["username", "read"])]

    def __str__(self) -> str:
        return f"{self.username}: {self.text[:60]}"

class PriceList(models.Model):
    """The prices an administrator sets at /cluster/prices/ (one row: the cluster's), per
    hour of each resource in one currency; a price left empty is no price. Every change
    is audited (training/prices.py)."""

    currency = models.CharField(max_length=3, default="USD")
    # {GPU model (the node label nvidia.com/gpu.product): price as a decimal string}
    gpu = models.JSONField(default=dict, blank=True)
    cpu_hour = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    gib_hour = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    updated = models.DateTimeField(auto_now=True)
    updated_by = models.CharField(max_length=253, blank=True)

    def __str__(self) -> str:
        return f"prices in {self.currency}, set by {self.updated_by or '-'}"


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
