"""The prices the administrator sets (odh.training.cost): kept in the database, every change
audited, and published for the CLI and SDK as a ConfigMap in the dashboard's namespace,
written with the dashboard's own service account (deploy/base/rbac-prices.yaml lets it
write that one ConfigMap, and everyone signed in read it)."""

from __future__ import annotations

import dataclasses
import json
import logging
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.http import HttpRequest

from odh.training import errors
from odh.training.cost import (
    PRICES_CONFIGMAP,
    PRICES_KEY,
    Cost,
    Prices,
    assumed_model,
    cost,
    gpus_by_model,
    job_ask,
    usage,
)
from training import audit
from training.models import PriceList

log = logging.getLogger("training.prices")

VERB = "set_prices"


def current() -> Prices:
    """The prices in force (none set: `Prices()`, whose `is_set` is false)."""
    row = PriceList.objects.order_by("id").first()
    if row is None:
        return Prices()
    gpu = {str(m): Decimal(str(p)) for m, p in (row.gpu or {}).items()}
    return Prices(currency=row.currency, gpu=gpu,
                  cpu_hour=None if row.cpu_hour is None else row.cpu_hour.normalize(),
                  gib_hour=None if row.gib_hour is None else row.gib_hour.normalize())


def _changes(before: Prices, after: Prices) -> dict[str, list]:
    """What changed, as "field: [before, after]" (the audit row's detail)."""
    def flat(p: Prices) -> dict[str, str | None]:
        out: dict[str, str | None] = {"currency": p.currency if p.is_set else None,
                                      "cpu_hour": None if p.cpu_hour is None
                                      else str(p.cpu_hour),
                                      "gib_hour": None if p.gib_hour is None
                                      else str(p.gib_hour)}
        out.update({f"gpu:{m}": str(v) for m, v in p.gpu.items()})
        return out
    old, new = flat(before), flat(after)
    return {k: [old.get(k), new.get(k)] for k in sorted(set(old) | set(new))
            if old.get(k) != new.get(k)}


def refused(request: HttpRequest, reasons: list[str]) -> None:
    """An attempt the form refused, audited as failed (nothing changed)."""
    audit.record(request, VERB, "Prices", "", "prices", "failed", " ".join(reasons))


def save(request: HttpRequest, prices: Prices) -> str:
    """Keep `prices`, audit the change and publish them; the reason publishing failed
    ("" : published). The prices are kept either way: the dashboard's pages use them."""
    before = current()
    row = PriceList.objects.order_by("id").first() or PriceList()
    row.currency = prices.currency
    row.gpu = {m: str(p) for m, p in prices.gpu.items()}
    row.cpu_hour = prices.cpu_hour
    row.gib_hour = prices.gib_hour
    row.updated_by = request.user.get_username()
    row.save()
    audit.record(request, VERB, "Prices", "", "prices", "success",
                 json.dumps(_changes(before, prices), sort_keys=True))
    return publish(dataclasses.replace(prices, assumed=assumed(prices)))


def publish(prices: Prices) -> str:
    """Write the prices' ConfigMap with the dashboard's account; "" or why it failed."""
    from training.cluster import service_account_client
    try:
        with service_account_client() as client:
            client.put_config_map(settings.PRICES_NAMESPACE, PRICES_CONFIGMAP,
                                  {PRICES_KEY: prices.to_json()},
                                  {"app.kubernetes.io/part-of": "mpijob-dashboard"})
    except errors.ClusterError as e:
        log.warning("prices not published in %s/%s: %s", settings.PRICES_NAMESPACE,
                    PRICES_CONFIGMAP, e.message)
        return e.message
    return ""


def assumed(current: Prices) -> str:
    """The GPU model a job that names none is charged at (odh.training.cost.assumed_model),
    from the nodes the dashboard's account reads."""
    from training.wizard.checks import get_nodes
    return assumed_model(current, gpus_by_model(get_nodes())) if current.gpu else ""


def job_cost(job: dict, summary, now: datetime) -> tuple[str, Cost] | None:
    """What a job's page says it costs: ("so far", cost) while it has not finished, ("total",
    cost) once it has, from its history record's GPU-hours where there is one (None: no
    price set)."""
    from training.models import JobHistory
    now_prices = current()
    if not now_prices.is_set:
        return None
    ask = job_ask(summary.kind, job)
    record = JobHistory.objects.filter(uid=summary.uid).first() if summary.is_finished \
        and summary.uid else None
    if record is not None:
        use = usage(ask, record.duration_seconds or 0.0, record.gpu_hours)
    else:
        use = usage(ask, summary.duration_seconds(now))
    charged = cost(use, now_prices, assumed(now_prices))
    assert charged is not None
    return ("total" if summary.is_finished else "so far"), charged


def row_costs(rows: list, objects: dict, now: datetime) -> dict[str, str]:
    """The job list's cost column: each shown row's cost so far, or total (from the job
    history where it has the job), by "<ns>/<kind slug>/<name>"; {} without prices."""
    from training.models import JobHistory
    now_prices = current()
    if not now_prices.is_set:
        return {}
    model = assumed(now_prices)
    finished = [s.uid for s in rows if s.is_finished and s.uid]
    records = {r.uid: r for r in JobHistory.objects.filter(uid__in=finished)} if finished \
        else {}
    shown = {}
    for s in rows:
        found = objects.get((s.namespace, s.kind.slug, s.name))
        if found is None:
            continue
        ask = job_ask(s.kind, found[0])
        record = records.get(s.uid)
        use = usage(ask, record.duration_seconds or 0.0, record.gpu_hours) \
            if record is not None else usage(ask, s.duration_seconds(now))
        charged = cost(use, now_prices, model)
        if charged is not None:
            shown[f"{s.namespace}/{s.kind.slug}/{s.name}"] = charged.text
    return shown
