"""Notifications: subscriptions, the signs heard, deliveries queued and sent, the bell's rows
(training/notifications/)."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from training.models.jobs import JobTransition

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
    the same transaction (training/notifications/), as a transition's are."""

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
