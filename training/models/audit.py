"""The audit trail: one row per change a person made through the dashboard, append-only."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


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
