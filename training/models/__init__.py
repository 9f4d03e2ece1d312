"""What the dashboard keeps that the cluster forgets: the audit trail (audit), wizard drafts
and saved job templates (wizard), the history of finished jobs, their transitions, kept
evidence and retries (jobs), notifications (notifications) and prices (prices)."""

from __future__ import annotations

from training.models.audit import (
    VERB_LABELS,
    AppendOnlyError,
    AuditEvent,
    AuditQuerySet,
    verb_label,
)
from training.models.jobs import (
    JobHistory,
    JobRetry,
    JobState,
    JobTransition,
    KeptEvidence,
)
from training.models.notifications import (
    DEFAULT_NOTIFY_STATUSES,
    NOTIFY_SIGNALS,
    NOTIFY_STATUSES,
    SIGNALS_WANTED,
    JobSignal,
    Notification,
    NotificationDelivery,
    NotificationSubscription,
)
from training.models.prices import PriceList
from training.models.wizard import JobTemplate, WizardDraft, default_draft_kind

__all__ = [
    "DEFAULT_NOTIFY_STATUSES", "NOTIFY_SIGNALS", "NOTIFY_STATUSES", "SIGNALS_WANTED",
    "VERB_LABELS", "AppendOnlyError", "AuditEvent", "AuditQuerySet", "JobHistory", "JobRetry",
    "JobSignal", "JobState", "JobTemplate", "JobTransition", "KeptEvidence", "Notification",
    "NotificationDelivery", "NotificationSubscription", "PriceList", "WizardDraft",
    "default_draft_kind", "verb_label",
]
