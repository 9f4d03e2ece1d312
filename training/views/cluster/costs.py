"""Cost: the prices administrators set at /cluster/prices/, the chargeback export of the
admin overview, and the numbers in odh.training.cost; the views only read and render."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from odh.training import cost
from odh.training.cost import PriceError, Prices
from odh.training.kinds import KINDS, default_kind
from odh.training.status.summary import Phase
from training import prices
from training.cluster import user_client
from training.models import JobHistory
from training.permissions import cluster_admin
from training.views.pages import render_page
from training.wizard.checks import get_nodes


@dataclass
class GpuRow:
    index: int
    model: str
    value: str
    gpus: int
    error: str = ""


def forbidden_page(request: HttpRequest) -> HttpResponse:
    from training.views.cluster.overview import (
        forbidden_page as cluster_pages_only,  # it imports us
    )
    return cluster_pages_only(request)


def _gpu_rows(current: Prices, typed: dict[str, str] | None = None) -> list[GpuRow]:
    """One row per GPU model: the nodes' (with their GPUs), then any priced model no node
    has any more (its price can be cleared)."""
    on_nodes = cost.gpus_by_model(get_nodes())
    models = sorted(on_nodes) + sorted(m for m in current.gpu if m not in on_nodes)
    rows = []
    for i, model in enumerate(models):
        value = typed.get(model, "") if typed is not None else (
            str(current.gpu[model]) if model in current.gpu else "")
        rows.append(GpuRow(i, model, value, on_nodes.get(model, 0)))
    return rows


def _text(value) -> str:
    return "" if value is None else str(value)


@require_http_methods(["GET", "POST"])
def cluster_prices(request: HttpRequest) -> HttpResponse:
    with user_client(request) as client:
        if not cluster_admin(request, client):
            return forbidden_page(request)
    current = prices.current()
    if request.method == "GET":
        context = {"rows": _gpu_rows(current), "currency": current.currency,
                   "cpu_hour": _text(current.cpu_hour), "gib_hour": _text(current.gib_hour),
                   "errors": {}, "saved": request.GET.get("saved") == "1",
                   "unpublished": request.GET.get("unpublished", "")}
        return render_page(request, "training/cluster_prices.html", context, "prices-form")
    post = request.POST
    count = post.get("gpu_count", "0")
    count = min(int(count), 200) if count.isdigit() else 0
    typed_gpu = {post.get(f"gpu_model_{i}", ""): post.get(f"gpu_price_{i}", "")
                 for i in range(count)}
    typed_gpu.pop("", None)
    errs: dict[str, str] = {}

    def read(parse, value: str, field: str):
        try:
            return parse(value, field)
        except PriceError as e:
            errs[e.field] = e.message
            return None

    currency = read(cost.parse_currency, post.get("currency", ""), "currency")
    cpu = read(cost.parse_price, post.get("cpu_hour", ""), "cpu_hour")
    gib = read(cost.parse_price, post.get("gib_hour", ""), "gib_hour")
    gpu = {}
    for model, value in typed_gpu.items():
        price = read(cost.parse_price, value, f"gpu:{model}")
        if price is not None:
            gpu[model] = price
    if errs:
        prices.refused(request, list(errs.values()))
        rows = _gpu_rows(current, typed_gpu)
        for row in rows:
            row.error = errs.get(f"gpu:{row.model}", "")
        context = {"rows": rows, "currency": post.get("currency", ""),
                   "cpu_hour": post.get("cpu_hour", ""), "gib_hour": post.get("gib_hour", ""),
                   "errors": errs, "saved": False, "unpublished": ""}
        response = render_page(request, "training/cluster_prices.html", context,
                               "prices-form")
        response.status_code = 400  # refused: the page says why, with what was typed
        return response
    problem = prices.save(request, Prices(currency=currency or "USD", gpu=gpu, cpu_hour=cpu,
                                          gib_hour=gib))
    url = "?saved=1" + (f"&unpublished={problem[:200]}" if problem else "")
    return redirect(request.path + url)


# -- chargeback --------------------------------------------------------------------------------
PERIODS = {"7d": 7, "30d": 30, "90d": 90}


@dataclass
class Period:
    since: datetime
    until: datetime
    key: str
    error: str = ""

    @property
    def until_day(self) -> datetime:
        """The period's last day (it ends at that day's end)."""
        return self.until - timedelta(seconds=1)

    @property
    def query(self) -> str:
        if self.key == "custom":
            return (f"period=custom&since={self.since.date().isoformat()}"
                    f"&until={(self.until - timedelta(days=1)).date().isoformat()}")
        return f"period={self.key}"


def period_of(request: HttpRequest, now: datetime) -> Period:
    """The period chosen (?period=7d|30d|90d, or since/until dates), 30 days by default."""
    key = request.GET.get("period", "30d")
    if key in PERIODS:
        return Period(now - timedelta(days=PERIODS[key]), now, key)
    if key == "custom":
        try:
            since = date.fromisoformat(request.GET.get("since", ""))
            until = date.fromisoformat(request.GET.get("until", ""))
        except ValueError:
            return Period(now - timedelta(days=30), now, "30d",
                          _("Write the dates as YYYY-MM-DD; the last 30 days are shown."))
        if until < since:
            return Period(now - timedelta(days=30), now, "30d",
                          _("The period ends before it starts; the last 30 days are shown."))
        return Period(datetime.combine(since, time(), UTC),
                      datetime.combine(until + timedelta(days=1), time(), UTC), "custom")
    return Period(now - timedelta(days=30), now, "30d")


def history_records(rows) -> list[cost.Record]:
    """The job history's records as the chargeback charges them."""
    records = []
    for row in rows:
        kind = next((k for k in KINDS.values() if k.kind == row.kind), default_kind())
        records.append(cost.Record(project=row.namespace, person=row.created_by, kind=kind,
                                   name=row.name, uid=row.uid, spec=row.spec or {},
                                   seconds=row.duration_seconds or 0.0,
                                   gpu_hours=row.gpu_hours, finished=row.finished))
    return records


def chargeback(period: Period, rows=None) -> cost.Chargeback:
    """The finished jobs of the period (of `rows`, a JobHistory query; all by default)
    charged at the prices (`priced` false: none is set, only the hours count)."""
    current = prices.current()
    rows = (JobHistory.objects.all() if rows is None else rows).filter(
        finished__gte=period.since, finished__lt=period.until)
    return cost.chargeback(history_records(rows), current, prices.assumed(current))


def running_now(jobs, now: datetime) -> cost.Chargeback:
    """The jobs running now, each charged from its start to `now` ((manifest, summary)
    pairs). Said apart from the period's figures: those count finished jobs, as the history
    records them, so that a chargeback never changes once its period is over."""
    current = prices.current()
    records = [cost.Record(project=s.namespace, person=s.created_by, kind=s.kind,
                           name=s.name, uid=s.uid, spec=job, seconds=s.duration_seconds(now),
                           gpu_hours=None)
               for job, s in jobs if s.status == Phase.RUNNING]
    return cost.chargeback(records, current, prices.assumed(current) if records else "")


def cluster_chargeback_csv(request: HttpRequest) -> HttpResponse:
    with user_client(request) as client:
        if not cluster_admin(request, client):
            return forbidden_page(request)
    period = period_of(request, datetime.now(UTC))
    result = chargeback(period)
    if not result.priced:
        return HttpResponse(_("No price is set: there is no cost to export."), status=404,
                            content_type="text/plain; charset=utf-8")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"chargeback-{period.since.date()}-{(period.until - timedelta(seconds=1)).date()}"
    response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    writer = csv.writer(response)
    for row in cost.csv_rows(result):
        writer.writerow(row)
    return response


TOP = 10


def cost_context(period: Period, charges: cost.Chargeback, by: tuple[str, ...],
                 cost_url: str, csv_url: str = "", price_url: str = "",
                 running: cost.Chargeback | None = None) -> dict:
    """What training/partials/cost_period.html shows: `by` the tables, among "project",
    "person" and "job" (the top TOP of each), and the jobs `running` now, apart."""
    titles = {"project": (_("By project"), _("Project"), charges.by_project),
              "person": (_("Top consumers by person"), _("Person"), charges.by_person),
              "job": (_("Top consumers by job"), _("Job"), charges.by_job)}
    tables = [{"id": key, "title": titles[key][0], "column": titles[key][1],
               "lines": titles[key][2][:TOP] if key != "project" else titles[key][2]}
              for key in by]
    return {"period": period, "charges": charges, "cost_tables": tables,
            "cost_url": cost_url, "csv_url": csv_url, "price_url": price_url,
            "running": running if running is not None and running.charges else None}
