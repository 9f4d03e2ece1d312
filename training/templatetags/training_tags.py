"""Presentation helpers: status as colour + icon + text, durations in the product's words."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import quote

from django import template
from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format, time_format
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from odh.training.durations import format_duration
from odh.training.kinds.base import pod_label
from odh.training.manifests.retries import policy_of, wish_text
from odh.training.status.pods import NOT_CREATED

register = template.Library()

# status -> (PatternFly label colour, Font Awesome icon, translated text)
STATUS_STYLE = {
    "Pending": ("orange", "fa-hourglass-half", _("Pending")),
    "Running": ("blue", "fa-sync-alt", _("Running")),
    "Succeeded": ("green", "fa-check-circle", _("Succeeded")),
    "Failed": ("red", "fa-exclamation-circle", _("Failed")),
    "Suspended": ("grey", "fa-pause-circle", _("Suspended")),
    "Terminating": ("grey", "fa-ban", _("Terminating")),
    "Deleted": ("grey", "fa-trash", _("Deleted")),
    "Unknown": ("grey", "fa-question-circle", _("Unknown")),
}


@register.filter
def role_label(replica) -> str:
    """"Launcher", "Worker 2": a pod's role (translated) and index, in its kind's words
    ("Node 2") where the pod says them."""
    label = replica.get("label") if isinstance(replica, dict) else getattr(replica, "label", "")
    if label:
        return str(label)
    role = str(getattr(replica, "role", None) or (replica.get("role") if isinstance(
        replica, dict) else "") or "")
    index = getattr(replica, "index", None) if not isinstance(replica, dict) \
        else replica.get("index")
    return pod_label(role, index)


# reasons odh.training itself gives a replica (not the cluster's words, which stay as sent)
OWN_REASONS = {NOT_CREATED: _("Not created")}


@register.filter
def retry_wish(annotations) -> str:
    """A job's automatic-retry wish in words ("" when it asked for none)."""
    return wish_text(policy_of(dict(annotations or {})))


@register.filter
def replica_reason(reason: str) -> str:
    """A replica's reason as shown: translated where odh.training made it up."""
    return str(OWN_REASONS.get(reason, reason))


@register.inclusion_tag("training/partials/status_label.html")
def status_label(status: object, reason: str = "") -> dict:
    value = str(getattr(status, "value", status) or "Unknown")
    colour, icon, text = STATUS_STYLE.get(value, STATUS_STYLE["Unknown"])
    return {"colour": colour, "icon": icon, "text": text, "reason": reason, "value": value}


# audit outcome -> (PatternFly label colour, Font Awesome icon); any other outcome: failed
OUTCOME_STYLE = {"success": ("green", "fa-check-circle"), "denied": ("orange", "fa-ban"),
                 "seen": ("grey", "fa-eye")}  # made or removed outside the dashboard
FAILED_STYLE = ("red", "fa-exclamation-circle")


@register.inclusion_tag("training/partials/status_label.html")
def outcome_label(event) -> dict:
    """An audit event's outcome as colour + icon + text, like a job's status."""
    colour, icon = OUTCOME_STYLE.get(event.outcome, FAILED_STYLE)
    return {"colour": colour, "icon": icon, "text": event.get_outcome_display(), "reason": "",
            "value": event.outcome}


# Texts a script shows with a number in them, in their singular and plural forms
# ("%(count)s" stands for the number; the script fills it in).
COUNTED_TEXTS = {
    "matches": lambda n: ngettext("%(count)s match", "%(count)s matches", n),
    "held": lambda n: ngettext("Paused — %(count)s new line", "Paused — %(count)s new lines", n),
    "skipped": lambda n: ngettext("… %(count)s line skipped …", "… %(count)s lines skipped …",
                                  n),
}


@register.simple_tag
def counted_text(name: str) -> str:
    """`data-<name>-one` and `data-<name>-many` attributes: a counted text's translated
    singular and plural, for a script to pick from by its count (static/js/logs.js)."""
    text = COUNTED_TEXTS[name]
    return format_html('data-{}-one="{}" data-{}-many="{}"', name, text(1), name, text(2))


@register.filter
def duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return format_duration(float(seconds))


@register.filter
def since(moment: datetime | None, now: datetime | None = None) -> str:
    """Time elapsed since `moment`, e.g. `2h 15m 43s`."""
    if moment is None:
        return ""
    now = now or datetime.now(UTC)
    return format_duration(max(0.0, (now - moment).total_seconds()))


@register.filter
def job_duration(summary, now: datetime) -> str:
    return format_duration(summary.duration_seconds(now))


@register.filter
def time_in_state(summary, now: datetime) -> str:
    return format_duration(summary.time_in_state_seconds(now))


@register.filter
def sort_toggle(filters, key: str) -> str:
    """The `sort` value a column header links to."""
    return filters.toggled(key)


@register.filter
def event_when(event: dict, now: datetime) -> str:
    """How long ago an event last happened."""
    from odh.training.durations import parse_timestamp
    ts = parse_timestamp(event.get("lastTimestamp") or event.get("eventTime")
                         or (event.get("metadata") or {}).get("creationTimestamp"))
    if ts is None:
        return ""
    return format_duration(max(0.0, (now - ts).total_seconds()))


@register.filter
def width_class(percent: object) -> str:
    """`dash-w-37`: a bar's width as a class of dashboard.css (0-100, whole percents), not
    a style attribute, which the Content-Security-Policy refuses (training/web/headers.py)."""
    try:
        value = float(percent)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        value = 0.0
    if value != value:  # NaN
        value = 0.0
    return f"dash-w-{round(min(100.0, max(0.0, value)))}"


_TRAIL_ROOTS = {
    "jobs": (_("Training jobs"), "training-job-list"),
    "cluster": (_("Cluster overview"), "training-cluster-overview"),
    "help": (_("Troubleshooting"), "training-help"),
}


@register.inclusion_tag("training/partials/breadcrumb.html")
def breadcrumb(current: str, root: str = "jobs", project: str = "", job=None,
               job_name: str = "", job_url: str = "") -> dict:
    """PatternFly's breadcrumb: the section (`root`), the project, the job, then this page."""
    label, url_name = _TRAIL_ROOTS[root]
    trail = [(label, reverse(url_name))]
    if project:
        trail.append((project, f"{reverse('training-job-list')}?{urlencode({'project': project})}"))
    if job is not None:
        job_name = job.name
        job_url = reverse("training-job-detail", args=[job.namespace, job.kind.slug, job.name])
    if job_name and job_url:
        trail.append((job_name, job_url))
    return {"trail": trail, "current": current}


@register.filter
def figures_of(pod_figures: object, pod: str) -> list:
    """A pod's [CPU, memory] figures (odh.training.metrics.podnow), [None, None] where the
    page has none (a pod new since, or a push, which reads no Prometheus)."""
    found = pod_figures.get(pod) if isinstance(pod_figures, dict) else None
    return found or [None, None]


@register.simple_tag
def console_pod_url(namespace: str, pod: str) -> str:
    """The pod in the OpenShift web console (settings.CONSOLE_URL), "" when it is not set."""
    if not settings.CONSOLE_URL or not pod:
        return ""
    return f"{settings.CONSOLE_URL}/k8s/ns/{quote(namespace, safe='')}/pods/{quote(pod, safe='')}"


@register.filter
def when(moment: datetime | None) -> str:
    """A moment as the person reads dates: their language's short date, a 24-hour time and
    their time zone's abbreviation (the browser's zone: training/web/localtime.py)."""
    if moment is None:
        return ""
    local = timezone.localtime(moment) if timezone.is_aware(moment) else moment
    return (f"{date_format(local, 'SHORT_DATE_FORMAT')} {time_format(local, 'H:i:s')} "
            f"{local.strftime('%Z') or 'UTC'}").strip()
