"""The `notices` subscription of the live websocket: the masthead's bell.

| kind      | value         | group (channel layer)        | access asked                      |
|-----------|---------------|------------------------------|-----------------------------------|
| `notices` | `<user name>` | `notices.<digest of the name>` | the socket's own person only    |

Every page's bell follows its person's notices (training/notifications/ stores them:
a delivery through the dashboard's own channel, or word that a webhook answered 410
Gone). The subscription names a user, and is refused unless it names the socket's own
signed-in person (`ViewState.username`, from the session the OAuth sign-in made): nobody
hears another's notices. On every (re)connect the page gets
`{"type": "notices", "unread": n, "html": <the drawer's list>}`; when the watcher stores a
notice it sends `{"type": "hub.notice", "notice": {...}, "unread": n}` to the group
(training/live/hub/keepers/notifying.py), and each socket sends its page
`{"type": "notice", "unread": n, "html": <the list item>, "text": <what is said aloud>,
"title": ..., "body": ...}` in its viewer's language and time zone (static/js/bell.js).
When the person opens the drawer in one tab (the notices are marked read), the web process
sends `{"type": "hub.notices_read", "unread": n}` to the same group (`tell_read`), and every
other tab of theirs, on any web process, gets `{"type": "notices", "unread": n}`: the count
goes down everywhere at once.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from odh.training.cluster.access import Access
from odh.training.cluster.client import ClusterClient
from odh.training.durations import parse_timestamp
from training.live.hub.groups import notices_group
from training.live.hub.languages import in_viewer_language
from training.live.subscription_kinds import (
    AccessRefused,
    BadSubscription,
    Frame,
    Subscription,
    SubscriptionKind,
    ViewState,
)

log = logging.getLogger("training.live")

SHOWN = 20  # the drawer lists the newest notices
NOBODY = Access("get", "")  # never asked: access is the person's own name (authorize)


def notice_link(project: str, kind: str, job: str) -> str:
    """The page a notice leads to, on this dashboard: the job's, else /notifications/
    (a webhook turned off)."""
    from training.notifications import kind_named

    found = kind_named(kind)
    if found is not None and project and job:
        return reverse("training-job-detail", args=[project, found.slug, job])
    return reverse("training-notifications")


def _item(fields: dict[str, Any]) -> dict[str, Any]:
    return {**fields, "link": notice_link(fields.get("project", ""), fields.get("kind", ""),
                                          fields.get("job", "")),
            "from_status": fields.get("from", ""), "to_status": fields.get("to", ""),
            # no job, and a link (to /notifications/): word that a webhook was turned off
            "turned_off": not fields.get("job") and bool(fields.get("url")),
            "when": parse_timestamp(str(fields.get("created") or ""))}


def render_list(notices: list[dict[str, Any]]) -> str:
    return render_to_string("training/partials/notices.html#notice-list",
                            {"notices": [_item(n) for n in notices]})


def render_item(notice: dict[str, Any]) -> str:
    return render_to_string("training/partials/notices.html#notice-item",
                            {"n": _item(notice)})


def spoken(notice: dict[str, Any]) -> tuple[str, str]:
    """(title, body) of a new notice: said by the page's aria-live region and shown by
    the browser's own notification."""
    from training.live.pushes import status_text

    if notice.get("job") and notice.get("to"):
        title = _("%(job)s in %(project)s is %(status)s") % {
            "job": notice["job"], "project": notice.get("project", ""),
            "status": status_text(notice["to"])}
        return title, str(notice.get("headline") or "")
    return _("Notifications"), str(notice.get("text") or "")


def tell_read(username: str, unread: int) -> None:
    """The person's other tabs: their notices were read (from a web request). A channel
    layer that cannot be reached costs those tabs only a stale count until they reload."""
    try:
        async_to_sync(get_channel_layer().group_send)(
            notices_group(username), {"type": "hub.notices_read", "unread": unread})
    except Exception:
        log.warning("could not tell %s's other tabs that their notices were read", username,
                    exc_info=True)


def _in_viewer_zone(view: ViewState):
    """Times as the socket's person reads them: their browser's zone (the cookie
    training/web/localtime.py reads for pages), else UTC."""
    from training.web.localtime import zone_named

    zone = zone_named(view.time_zone)
    return timezone.override(zone) if zone is not None else timezone.override(
        timezone.get_default_timezone())


def recent(username: str) -> tuple[int, list[dict[str, Any]]]:
    """The person's unread count and newest notices (blocking: the database)."""
    from training.models import Notification
    from training.notifications import notice_fields, unread_count

    shown = Notification.objects.filter(username=username)[:SHOWN]
    return unread_count(username), [notice_fields(n) for n in shown]


class PersonNotices(SubscriptionKind):
    name = "notices"

    def parse(self, value: str) -> Subscription:
        if not value or len(value) > 253:
            with in_viewer_language():
                raise BadSubscription(_("Live updates need something to follow."))
        return Subscription(self.name, value, "", notices_group(value), NOBODY)

    def authorize(self, client: ClusterClient, token: str, sub: Subscription,
                  view: ViewState) -> None:
        """The person's own notices, nobody else's."""
        if not view.username or sub.value != view.username:
            raise AccessRefused(sub.value)

    def snapshot(self, client: ClusterClient, sub: Subscription, view: ViewState,
                 now: datetime) -> list[Frame]:
        unread, notices = recent(sub.value)
        with _in_viewer_zone(view):
            return [{"type": "notices", "unread": unread, "html": render_list(notices)}]

    def on_message(self, sub: Subscription, message: dict[str, Any],
                   view: ViewState) -> list[Frame]:
        if message.get("type") == "hub.notices_read":
            return [{"type": "notices", "unread": int(message.get("unread") or 0)}]
        if message.get("type") != "hub.notice":
            return []
        notice = message.get("notice") or {}
        with in_viewer_language(), _in_viewer_zone(view):
            title, body = spoken(notice)
            text = _("New notification: %(title)s. %(body)s") % {"title": title, "body": body}
            return [{"type": "notice", "unread": int(message.get("unread") or 0),
                     "html": render_item(notice), "text": text.strip(), "title": title,
                     "body": body, "link": notice_link(notice.get("project", ""),
                                                       notice.get("kind", ""),
                                                       notice.get("job", ""))}]
