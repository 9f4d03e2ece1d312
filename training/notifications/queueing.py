"""Deliveries queued from a transition or a sign, in the transaction that records it,
and claimed by one watcher at a time (the package's docstring says how)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import Q, QuerySet

from odh.training import webhooks
from odh.training.kinds import KINDS, JobKind
from training.models import (
    JobSignal,
    JobTransition,
    NotificationDelivery,
    NotificationSubscription,
)
from training.unlocked import unlocked

Channel = NotificationDelivery.Channel
State = NotificationDelivery.State


def utcnow() -> datetime:
    return datetime.now(UTC)


def kind_named(kind: str) -> JobKind | None:
    return next((k for k in KINDS.values() if k.kind == kind), None)


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def allow_list() -> webhooks.Allow:
    return webhooks.Allow.parse(settings.NOTIFY_WEBHOOK_ALLOW)


def channels_of(subscription: NotificationSubscription) -> list[str]:
    return [channel for channel, on in ((Channel.DASHBOARD, subscription.in_dashboard),
                                        (Channel.EMAIL, bool(subscription.email)),
                                        (Channel.WEBHOOK, bool(subscription.webhook_url)))
            if on]


def subscribers(event: JobTransition | JobSignal) -> QuerySet[NotificationSubscription]:
    """The active subscriptions a transition (or a sign) concerns (its status or signal
    among theirs is checked by the caller: JSON lookups differ between databases)."""
    Scope = NotificationSubscription.Scope
    return NotificationSubscription.objects.filter(active=True).filter(
        Q(scope=Scope.MINE, username=event.created_by) |
        Q(scope=Scope.PROJECT, project=event.namespace) |
        Q(scope=Scope.JOB, project=event.namespace, kind=event.kind,
          job=event.name)).exclude(username="")


def wants_signal(subscription: NotificationSubscription, signal: JobSignal) -> bool:
    if not subscription.wants(signal.signal) or signal.at < subscription.created:
        return False  # not asked for, or it happened before the subscription
    # "Pending longer than N minutes": each N is an occurrence of its own (the key's end)
    return signal.signal != "pending" or \
        signal.key.endswith(f"/{subscription.pending_minutes}m")


def queue_for_signal(signal: JobSignal, now: datetime | None = None) -> int:
    """Queue the deliveries of a sign just claimed (in its transaction); how many."""
    now = now or utcnow()
    rows = [NotificationDelivery(subscription=subscription, signal=signal, channel=channel,
                                 next_attempt=now)
            for subscription in subscribers(signal) if wants_signal(subscription, signal)
            for channel in channels_of(subscription)]
    NotificationDelivery.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def queue_for(transition: JobTransition, now: datetime | None = None) -> int:
    """Queue the deliveries of a transition just recorded (in its transaction); how many."""
    now = now or utcnow()
    rows = []
    for subscription in subscribers(transition):
        if transition.to_status not in (subscription.statuses or []):
            continue
        if transition.from_status == "" and transition.at < subscription.created:
            continue  # a job first seen in a state it reached before this subscription
        rows += [NotificationDelivery(subscription=subscription, transition=transition,
                                      channel=channel, next_attempt=now)
                 for channel in channels_of(subscription)]
    NotificationDelivery.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def queue_test(subscription: NotificationSubscription, now: datetime | None = None) -> int:
    """"Send a test": one delivery per channel, sent by the watcher like any other."""
    now = now or utcnow()
    rows = [NotificationDelivery(subscription=subscription, channel=channel, next_attempt=now)
            for channel in channels_of(subscription)]
    NotificationDelivery.objects.bulk_create(rows)
    return len(rows)


def claim_due(limit: int, now: datetime | None = None) -> list[tuple[int, datetime]]:
    """Claim up to `limit` deliveries due now: (id, the claim's end) of those this caller
    won (another watcher's claim of the same row changes nothing here)."""
    now = now or utcnow()
    until = now + timedelta(seconds=settings.NOTIFY_CLAIM_SECONDS)
    due = NotificationDelivery.objects.filter(
        state=State.QUEUED, next_attempt__lte=now).filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)).order_by(
        "next_attempt", "id").values_list("id", "claimed_until")[:limit * 2]
    won = []
    for pk, claimed in due:
        if len(won) >= limit:
            break
        moved = unlocked(lambda pk=pk, claimed=claimed: NotificationDelivery.objects.filter(
            pk=pk, state=State.QUEUED, claimed_until=claimed).update(claimed_until=until))
        if moved == 1:
            won.append((pk, until))
    return won
