"""What a delivery says: the webhook's JSON, the email's subject and body, the bell's
line, in the site's language."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _

from training.models import (
    JobSignal,
    NotificationDelivery,
)
from training.notifications.queueing import kind_named

TEST_EVENT = "test"
TRANSITION_EVENT = "job.transition"
SIGNAL_EVENTS = {"pending": "job.pending_long", "hang": "job.possible_hang",
                 "restart": "job.restarted", "memory": "job.memory_near_limit",
                 "deadline": "job.deadline_at_risk"}


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
