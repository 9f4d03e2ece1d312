"""The dashboard's bell: how many notices are unread, and a notice as its push carries it."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from training.models import (
    Notification,
)


def unread_count(username: str) -> int:
    return Notification.objects.filter(username=username, read=False).count()


def notice_fields(notice: Notification) -> dict[str, Any]:
    """A notice as the bell's push carries it (rendered by each socket in its language)."""
    return {"id": notice.pk, "project": notice.project, "kind": notice.kind,
            "job": notice.job, "from": notice.from_status, "to": notice.to_status,
            "text": notice.text, "headline": notice.headline, "url": notice.url,
            "read": notice.read, "created": notice.created.astimezone(UTC).isoformat()}
