"""Sending one claimed delivery: checked first (may the person still see the job?), then
to the bell, by email or to the webhook; retried with back-off while a failure may pass."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _

from odh.training import webhooks
from training.models import (
    JobSignal,
    JobTransition,
    Notification,
    NotificationDelivery,
    NotificationSubscription,
)
from training.notifications.messages import Message, message_of
from training.notifications.queueing import allow_list, kind_named, utcnow
from training.unlocked import unlocked

log = logging.getLogger("training.notifications")
RETRY_FIRST = timedelta(seconds=30)
RETRY_MAX = timedelta(hours=1)
GIVE_UP_AFTER = timedelta(days=1)
Channel = NotificationDelivery.Channel
State = NotificationDelivery.State


class Permanent(Exception):
    """Sending cannot succeed by trying again."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Passing(Exception):
    """Sending failed this time; it may work later."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Gone(Permanent):
    """The webhook answered 410 Gone."""


def may_see_with_sar(subscription: NotificationSubscription,
                     transition: JobTransition | JobSignal) -> bool:
    """May the subscriber still get the job? Asked by the dashboard's service account."""
    from training.cluster import service_account_client

    kind = kind_named(transition.kind)
    if kind is None:
        return False
    with service_account_client() as client:
        return client.subject_may(subscription.username, subscription.groups or [], "get",
                                  kind.plural, kind.group, namespace=transition.namespace,
                                  name=transition.name)


def send_email(subscription: NotificationSubscription, message: Message) -> int | None:
    body = message.text if not message.url else message.text.replace(
        f" <{message.url}|", "\n\n").rstrip(">") + f"\n{message.url}"
    EmailMessage(message.subject(), body, settings.DEFAULT_FROM_EMAIL,
                 [subscription.email]).send()
    return None


def send_webhook(subscription: NotificationSubscription, message: Message,
                 delivery_id: int) -> int:
    body = json.dumps(message.payload()).encode()
    headers = {webhooks.SIGNATURE_HEADER: webhooks.sign(body, subscription.webhook_secret),
               "X-ODH-Delivery": str(delivery_id)}
    try:
        reply = webhooks.post(subscription.webhook_url, body, headers, allow_list())
    except webhooks.Refused as e:
        raise Permanent(str(e)) from None
    except (OSError, ValueError) as e:  # ValueError: http.client's bad answers
        raise Passing(f"{type(e).__name__}: {e}") from None
    except Exception as e:  # http.client.HTTPException and its kin
        raise Passing(f"{type(e).__name__}: {e}") from None
    if 200 <= reply.status < 300:
        return reply.status
    if reply.status == 410:
        raise Gone(_("The webhook answered 410 Gone."), reply.status)
    if 300 <= reply.status < 400:
        raise Permanent(_("The webhook answered with a redirect (%(status)d), which is not "
                          "followed: use the address it leads to.") % {"status": reply.status},
                        reply.status)
    if reply.status in (408, 429) or reply.status >= 500:
        raise Passing(_("The webhook answered %(status)d.") % {"status": reply.status},
                      reply.status)
    raise Permanent(_("The webhook answered %(status)d.") % {"status": reply.status},
                    reply.status)


def _finish(pk: int, claim: datetime, *, again: bool = True, **fields: Any) -> bool:
    """End or reschedule a claimed attempt, if the claim is still this caller's (tried
    again while locked, unless `again` is False: inside a transaction, the caller does)."""
    def write() -> bool:
        return NotificationDelivery.objects.filter(
            pk=pk, state=State.QUEUED, claimed_until=claim).update(claimed_until=None,
                                                                   **fields) == 1
    return unlocked(write) if again else write()


def _backoff(attempts: int) -> timedelta:
    return min(RETRY_FIRST * (2 ** max(0, attempts - 1)), RETRY_MAX)


def deliver(pk: int, claim: datetime, *,
            may_see: Callable[[NotificationSubscription, JobTransition | JobSignal], bool]
            = may_see_with_sar, clock: Callable[[], datetime] = utcnow,
            tell: Callable[[Notification], None] | None = None) -> str:
    """Send one claimed delivery; its state after. `tell`: given each notice stored for
    the bell, after its transaction (pushes it to its owner's pages)."""
    delivery = NotificationDelivery.objects.select_related(
        "subscription", "transition", "signal").filter(pk=pk).first()
    if delivery is None:
        return "gone"
    subscription, now = delivery.subscription, clock()
    attempts = delivery.attempts + 1
    with translation.override(settings.LANGUAGE_CODE):
        if not subscription.active:
            _finish(pk, claim, state=State.SKIPPED, attempts=attempts,
                    last_error=_("The subscription is turned off."))
            return State.SKIPPED
        message = message_of(delivery, now)
        try:
            event = delivery.transition or delivery.signal
            if event is not None and not may_see(subscription, event):
                _finish(pk, claim, state=State.SKIPPED, attempts=attempts, last_error=_(
                    "%(user)s may no longer see this job.") % {"user": subscription.username})
                return State.SKIPPED
            if delivery.channel == Channel.DASHBOARD:
                def store() -> Notification | None:
                    with transaction.atomic():
                        if _finish(pk, claim, again=False, state=State.SENT,
                                   attempts=attempts, sent=now, last_error=""):
                            return _store(subscription.username, message)
                    return None
                _told(tell, unlocked(store))
                return State.SENT
            if delivery.channel == Channel.EMAIL:
                status = send_email(subscription, message)
            else:
                status = send_webhook(subscription, message, pk)
        except Gone as e:
            _told(tell, _gone(subscription, pk, claim, attempts, e))
            return State.FAILED
        except Permanent as e:
            _finish(pk, claim, state=State.FAILED, attempts=attempts, status_code=e.status,
                    last_error=str(e)[:500])
            return State.FAILED
        except Exception as e:  # Passing, SMTP, the cluster unreachable for the review
            status = getattr(e, "status", None)
            error = str(e) if isinstance(e, Passing) else f"{type(e).__name__}: {e}"
            if now - delivery.created >= GIVE_UP_AFTER:
                _finish(pk, claim, state=State.FAILED, attempts=attempts, status_code=status,
                        last_error=error[:500])
                return State.FAILED
            _finish(pk, claim, attempts=attempts, status_code=status, last_error=error[:500],
                    next_attempt=now + _backoff(attempts))
            log.info("notification %s (%s): %s; trying again later", pk, delivery.channel,
                     error)
            return State.QUEUED
        _finish(pk, claim, state=State.SENT, attempts=attempts, status_code=status, sent=now,
                last_error="")
        return State.SENT


def _store(username: str, message: Message) -> Notification:
    return Notification.objects.create(
        username=username, project=message.project, kind=message.kind, job=message.job,
        from_status=message.from_status, to_status=message.to_status,
        text=message.text.split(" <", 1)[0][:1000], headline=message.headline[:500],
        url=message.url)


def _told(tell: Callable[[Notification], None] | None, notice: Notification | None) -> None:
    """Push a stored notice; a push that fails loses nothing (the page reads the notices
    again when it reconnects)."""
    if tell is None or notice is None:
        return
    try:
        tell(notice)
    except Exception as e:
        log.info("notice %s not pushed: %s", notice.pk, e)


def _gone(subscription: NotificationSubscription, pk: int, claim: datetime, attempts: int,
          e: Gone) -> Notification | None:
    reason = _("The webhook %(url)s answered 410 Gone: its notifications were turned off.") % {
        "url": subscription.webhook_url}
    with transaction.atomic():
        if not _finish(pk, claim, again=False, state=State.FAILED, attempts=attempts,
                       status_code=e.status, last_error=str(e)):
            return None
        NotificationSubscription.objects.filter(pk=subscription.pk).update(
            active=False, disabled_reason=reason[:500])
        NotificationDelivery.objects.filter(subscription=subscription,
                                            state=State.QUEUED).exclude(pk=pk).update(
            state=State.SKIPPED, last_error=_("The subscription is turned off."))
        return Notification.objects.create(username=subscription.username,
                                           text=reason[:1000],
                                           url=settings.DASHBOARD_URL.rstrip("/") +
                                           reverse("training-notifications"))
