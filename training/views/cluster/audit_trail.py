"""The audit trail viewer at /cluster/audit/ and its CSV export (cluster administrators).

Filters (user, project, action, outcome, from/to dates) are query parameters, so a
filtered view can be bookmarked and its export link carries the same filters. The export
streams rows as it reads them, and writes any value that a spreadsheet would take for a
formula (= + - @ first) with a leading apostrophe.
"""

from __future__ import annotations

import csv
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, date, datetime, time

from django import forms
from django.core.handlers.asgi import ASGIRequest
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from odh.training.kinds import KINDS
from training.cluster import user_client
from training.models import VERB_LABELS, AuditEvent, verb_label
from training.permissions import cluster_admin
from training.views.cluster.overview import forbidden_page
from training.views.pages import render_page
from training.web import params

PER_PAGE = 50
KNOWN_VERBS = tuple(VERB_LABELS)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
SLUG_BY_KIND = {k.kind: k.slug for k in KINDS.values()}
CSV_COLUMNS = ("time", "user", "groups", "project", "kind", "name", "verb", "outcome",
               "detail", "source_ip", "user_agent", "request_id", "job_url")


class AuditFilterForm(forms.Form):
    user = forms.CharField(label=gettext_lazy("User"), required=False, max_length=253)
    project = forms.CharField(label=gettext_lazy("Project"), required=False, max_length=253)
    verb = forms.ChoiceField(label=gettext_lazy("Action"), required=False)
    outcome = forms.ChoiceField(
        label=gettext_lazy("Outcome"), required=False,
        choices=[("", gettext_lazy("All outcomes"))] + list(AuditEvent.Outcome.choices))
    since = forms.DateField(label=gettext_lazy("From"), required=False,
                            widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(label=gettext_lazy("To"), required=False,
                            widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args, verbs: list[str] | tuple[str, ...] = KNOWN_VERBS, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["verb"].choices = [("", _("All actions"))] + [(v, verb_label(v))
                                                                  for v in verbs]

    def clean(self):
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        for name, day in (("since", since), ("until", until)):
            if not params.in_range(day):
                self.add_error(name, _("Enter a date between 1970 and 9000."))
        if since and until and since > until:
            self.add_error("until", _("“To” must be on or after “From”."))
        return data


def _verbs() -> list[str]:
    seen = set(AuditEvent.objects.values_list("verb", flat=True).distinct())
    return list(KNOWN_VERBS) + sorted(v for v in seen if v not in KNOWN_VERBS)


def _start_of(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def filtered_events(form: AuditFilterForm) -> QuerySet[AuditEvent]:
    """The audit events the valid filters of `form` select, newest first (an invalid
    filter selects nothing rather than everything)."""
    events = AuditEvent.objects.all()
    if not form.is_valid():
        return events.none()
    data = form.cleaned_data
    if data.get("user"):
        events = events.filter(username=data["user"].strip())
    if data.get("project"):
        events = events.filter(project=data["project"].strip())
    if data.get("verb"):
        events = events.filter(verb=data["verb"])
    if data.get("outcome"):
        events = events.filter(outcome=data["outcome"])
    if data.get("since"):
        events = events.filter(created__gte=_start_of(data["since"]))
    if data.get("until"):  # the whole of that day (UTC)
        events = events.filter(created__lt=_start_of(params.day_after(data["until"])))
    return events.order_by("-created", "-id")


def job_url(event: AuditEvent) -> str:
    """The job's page, or "" for other kinds. Whether the job still exists is not asked
    of the cluster row by row: its page answers that, and when the job is gone its "no
    longer exists" page links to the job's newest history record (views/history.py), so
    the row of a deleted job reaches the record in one more click."""
    slug = SLUG_BY_KIND.get(event.kind)
    if not slug or not event.project or not event.name:
        return ""
    return reverse("training-job-detail", args=[event.project, slug, event.name])


def _form(request: HttpRequest) -> AuditFilterForm:
    # bound even without parameters, so that "no filters" is valid and selects everything
    return AuditFilterForm(request.GET or {}, verbs=_verbs())


@require_GET
def audit_trail(request: HttpRequest) -> HttpResponse:
    with user_client(request) as client:
        if not cluster_admin(request, client):
            return forbidden_page(request)
    form = _form(request)
    events = filtered_events(form)
    page = Paginator(events, PER_PAGE).get_page(request.GET.get("page"))
    rows = [{"event": e, "job_url": job_url(e)} for e in page]
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form, "page": page, "rows": rows, "query": query.urlencode(),
        "users": AuditEvent.objects.order_by("username").values_list(
            "username", flat=True).distinct()[:500],
        "projects": AuditEvent.objects.order_by("project").values_list(
            "project", flat=True).distinct()[:500],
        "filtered": any(request.GET.get(k) for k in form.fields),
        "filter_chips": _filter_chips(request, form),
    }
    return render_page(request, "training/cluster_audit.html", context, "audit-table")


def _filter_chips(request: HttpRequest, form) -> list[dict]:
    """The filters in use as chips ("Outcome: Denied"), each with the address without it."""
    chips = []
    for name, field in form.fields.items():
        value = request.GET.get(name, "").strip()
        if not value:
            continue
        shown = dict(getattr(field, "choices", ())).get(value, value)
        kept = {k: v for k, v in request.GET.items() if k not in (name, "page")}
        chips.append({"category": field.label, "value": shown, "url": "?" + urlencode(kept)})
    return chips


# -- export -------------------------------------------------------------------------------------
def spreadsheet_safe(value: object) -> str:
    """A cell a spreadsheet shows as text: a value that would start a formula gets a
    leading apostrophe (CSV injection)."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class _Line:
    """csv.writer's file: hands back each line instead of keeping it."""

    def write(self, value: str) -> str:
        return value


def _csv_row(writer, event: AuditEvent) -> str:
    values = (event.created.astimezone(UTC).isoformat(), event.username,
              " ".join(event.groups or []), event.project, event.kind, event.name, event.verb,
              event.outcome, event.detail, event.source_ip or "", event.user_agent,
              event.request_id, job_url(event))
    return writer.writerow([spreadsheet_safe(v) for v in values])


def _lines(events: QuerySet[AuditEvent]) -> Iterator[str]:
    writer = csv.writer(_Line())
    yield writer.writerow(CSV_COLUMNS)
    for event in events.iterator(chunk_size=500):
        yield _csv_row(writer, event)


async def _alines(events: QuerySet[AuditEvent]) -> AsyncIterator[str]:
    writer = csv.writer(_Line())
    yield writer.writerow(CSV_COLUMNS)
    async for event in events.aiterator(chunk_size=500):
        yield _csv_row(writer, event)


@require_GET
def audit_export(request: HttpRequest) -> HttpResponse:
    with user_client(request) as client:
        if not cluster_admin(request, client):
            return forbidden_page(request)
    events = filtered_events(_form(request))
    # under daphne (ASGI) rows are read and sent as they come; a synchronous server gets
    # the synchronous iterator (each would otherwise have to read everything first)
    body = _alines(events) if isinstance(request, ASGIRequest) else _lines(events)
    response = StreamingHttpResponse(body, content_type="text/csv; charset=utf-8")
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="audit-trail-{stamp}.csv"'
    return response
