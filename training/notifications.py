"""Notifications of job transitions: queued once, sent by the watcher, to whoever may
still see the job.

- Queued: `queue_for(transition)` runs in the database transaction that records the
  transition (training/live/hub/keepers/transitions.py), so each transition queues its deliveries
  exactly once, whichever watcher recorded it and whenever (a transition found after a
  restart queues like any other). One delivery per subscription and channel; the unique
  constraint makes a second impossible.
- Sent: by `training.live.hub.keepers.notifying.NotificationSender`, in the process that runs the
  hub (runwatcher, or the embedded hub), never by a web request. Each attempt is claimed
  first: `claim_due` moves `claimed_until` with a conditional update and only the
  watcher whose update changed the row sends (as healthchecks claims a Flip). A watcher
  killed while sending leaves the claim to expire (`NOTIFY_CLAIM_SECONDS`); the next
  claims it again: a message to the dashboard's bell is written with its delivery's end in one
  transaction (exactly once); an email or a webhook whose sending was cut between the
  receiver's answer and the record of it is sent again (at least once: the webhook's
  `X-ODH-Delivery` header names the delivery, for receivers that want to drop repeats).
- Signs: a job Pending longer than a person's N minutes, a possible hang, a restart, and
  the early warnings before a failure (odh/training/signs.py) are claimed by the watcher
  as a `JobSignal` per occurrence (training/live/hub/keepers/signs.py), and `queue_for_signal`
  queues their deliveries in that transaction: once per occurrence, like a transition's.
- Checked: before each send, a SubjectAccessReview asks, with the dashboard's own
  service account, whether the person (as their groups were when they subscribed) may
  still get the job; if not, nothing is sent.
- Retried: a failure that may pass (the network, a 5xx, 408, 429) is tried again with
  back-off (`RETRY_FIRST` doubling to `RETRY_MAX`) for `GIVE_UP_AFTER` (a day); a refusal
  (an address webhooks may not reach, a 4xx) is not. A webhook answering 410 Gone turns
  its subscription off and tells its owner in the dashboard.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import OperationalError, transaction
from django.db.models import Q, QuerySet
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _

from odh.training import webhooks
from odh.training.kinds import KINDS, JobKind
from training.models import (
    JobSignal,
    JobTransition,
    Notification,
    NotificationDelivery,
    NotificationSubscription,
)

log = logging.getLogger("training.notifications")

RETRY_FIRST = timedelta(seconds=30)
RETRY_MAX = timedelta(hours=1)
GIVE_UP_AFTER = timedelta(days=1)
TEST_EVENT = "test"
TRANSITION_EVENT = "job.transition"
SIGNAL_EVENTS = {"pending": "job.pending_long", "hang": "job.possible_hang",
                 "restart": "job.restarted", "memory": "job.memory_near_limit",
                 "deadline": "job.deadline_at_risk"}
_LOCKED_RETRIES = (0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
T = TypeVar("T")
Channel = NotificationDelivery.Channel
State = NotificationDelivery.State


def _utcnow() -> datetime:
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


# -- queueing ---------------------------------------------------------------------------------
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
    now = now or _utcnow()
    rows = [NotificationDelivery(subscription=subscription, signal=signal, channel=channel,
                                 next_attempt=now)
            for subscription in subscribers(signal) if wants_signal(subscription, signal)
            for channel in channels_of(subscription)]
    NotificationDelivery.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def queue_for(transition: JobTransition, now: datetime | None = None) -> int:
    """Queue the deliveries of a transition just recorded (in its transaction); how many."""
    now = now or _utcnow()
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
    now = now or _utcnow()
    rows = [NotificationDelivery(subscription=subscription, channel=channel, next_attempt=now)
            for channel in channels_of(subscription)]
    NotificationDelivery.objects.bulk_create(rows)
    return len(rows)


# -- claiming ---------------------------------------------------------------------------------
def claim_due(limit: int, now: datetime | None = None) -> list[tuple[int, datetime]]:
    """Claim up to `limit` deliveries due now: (id, the claim's end) of those this caller
    won (another watcher's claim of the same row changes nothing here)."""
    now = now or _utcnow()
    until = now + timedelta(seconds=settings.NOTIFY_CLAIM_SECONDS)
    due = NotificationDelivery.objects.filter(
        state=State.QUEUED, next_attempt__lte=now).filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)).order_by(
        "next_attempt", "id").values_list("id", "claimed_until")[:limit * 2]
    won = []
    for pk, claimed in due:
        if len(won) >= limit:
            break
        moved = _unlocked(lambda pk=pk, claimed=claimed: NotificationDelivery.objects.filter(
            pk=pk, state=State.QUEUED, claimed_until=claimed).update(claimed_until=until))
        if moved == 1:
            won.append((pk, until))
    return won


# -- what is said -------------------------------------------------------------------------------
def job_url(namespace: str, kind: str, name: str) -> str:
    found = kind_named(kind)
    if found is None or not name:
        return ""
    return settings.DASHBOARD_URL.rstrip("/") + reverse(
        "training-job-detail", args=[namespace, found.slug, name])


@dataclass(frozen=True)
class Message:
    event: str
    job: str
    project: str
    kind: str
    from_status: str
    to_status: str
    at: str
    headline: str
    url: str
    text: str
    label: str = ""  # a sign's name ("Possible hang"); "" for a transition
    advice: str = ""  # a sign's: what to do

    def payload(self) -> dict[str, Any]:
        found = {"event": self.event, "job": self.job, "project": self.project,
                 "kind": self.kind, "from": self.from_status, "to": self.to_status,
                 "at": self.at, "headline": self.headline, "url": self.url,
                 "text": self.text}
        if self.label:
            found["advice"] = self.advice
        return found

    def subject(self) -> str:
        if self.event == TEST_EVENT:
            return _("Test notification from the training dashboard")
        return _("%(kind)s %(project)s/%(job)s: %(status)s") % {
            "kind": self.kind, "project": self.project, "job": self.job,
            "status": self.label or self.to_status}


def message_of(delivery: NotificationDelivery, now: datetime) -> Message:
    """The delivery's words, in the site's language."""
    with translation.override(settings.LANGUAGE_CODE):
        t = delivery.transition
        if t is None and delivery.signal is not None:
            return _signal_message(delivery.signal)
        if t is None:
            return Message(TEST_EVENT, "", "", "", "", "", now.isoformat(), "", "", _(
                "A test from the training dashboard: notifications reach this address."))
        url = job_url(t.namespace, t.kind, t.name)
        said = _("%(kind)s %(project)s/%(job)s is %(status)s.") % {
            "kind": t.kind, "project": t.namespace, "job": t.name, "status": t.to_status}
        if t.from_status:
            said = _("%(kind)s %(project)s/%(job)s went from %(from)s to %(status)s.") % {
                "kind": t.kind, "project": t.namespace, "job": t.name,
                "from": t.from_status, "status": t.to_status}
        text = " ".join(part for part in (said, t.headline) if part)
        if url:  # Slack's link form
            text += f" <{url}|{_('Open the job')}>"
        return Message(TRANSITION_EVENT, t.name, t.namespace, t.kind, t.from_status,
                       t.to_status, t.at.astimezone(UTC).isoformat(), t.headline, url, text)


def signal_label(signal: str) -> str:
    return {"pending": _("Pending too long"), "hang": _("Possible hang"),
            "restart": _("A pod restarted"), "memory": _("Memory near its limit"),
            "deadline": _("Deadline at risk")}.get(signal, signal)


def _signal_message(sign: JobSignal) -> Message:
    url = job_url(sign.namespace, sign.kind, sign.name)
    said = _("%(kind)s %(project)s/%(job)s (%(status)s): %(what)s.") % {
        "kind": sign.kind, "project": sign.namespace, "job": sign.name,
        "status": sign.status, "what": sign.headline}
    text = " ".join(part for part in (said, sign.advice) if part)
    if url:
        text += f" <{url}|{_('Open the job')}>"
    return Message(SIGNAL_EVENTS.get(sign.signal, "job." + sign.signal), sign.name,
                   sign.namespace, sign.kind, sign.status, sign.status,
                   sign.at.astimezone(UTC).isoformat(), sign.headline, url, text,
                   label=signal_label(sign.signal), advice=sign.advice)


# -- sending ----------------------------------------------------------------------------------
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


def _unlocked(write: Callable[[], T]) -> T:
    """A write tried again while SQLite says "locked" (it lets one writer in at a time and
    tells the others so rather than waiting), as the transition recorder does."""
    for delay in (*_LOCKED_RETRIES, None):
        try:
            return write()
        except OperationalError as e:
            if delay is None or "locked" not in str(e):
                raise
            time.sleep(delay)
    raise AssertionError("unreachable")


def _finish(pk: int, claim: datetime, *, again: bool = True, **fields: Any) -> bool:
    """End or reschedule a claimed attempt, if the claim is still this caller's (tried
    again while locked, unless `again` is False: inside a transaction, the caller does)."""
    def write() -> bool:
        return NotificationDelivery.objects.filter(
            pk=pk, state=State.QUEUED, claimed_until=claim).update(claimed_until=None,
                                                                   **fields) == 1
    return _unlocked(write) if again else write()


def _backoff(attempts: int) -> timedelta:
    return min(RETRY_FIRST * (2 ** max(0, attempts - 1)), RETRY_MAX)


def deliver(pk: int, claim: datetime, *,
            may_see: Callable[[NotificationSubscription, JobTransition | JobSignal], bool]
            = may_see_with_sar, clock: Callable[[], datetime] = _utcnow,
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
                _told(tell, _unlocked(store))
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


def unread_count(username: str) -> int:
    return Notification.objects.filter(username=username, read=False).count()


def notice_fields(notice: Notification) -> dict[str, Any]:
    """A notice as the bell's push carries it (rendered by each socket in its language)."""
    return {"id": notice.pk, "project": notice.project, "kind": notice.kind,
            "job": notice.job, "from": notice.from_status, "to": notice.to_status,
            "text": notice.text, "headline": notice.headline, "url": notice.url,
            "read": notice.read, "created": notice.created.astimezone(UTC).isoformat()}


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
