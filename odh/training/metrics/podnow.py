"""CPU and memory per pod now, for the Overview's Launcher and Workers table: what each
pod uses (Prometheus, the Metrics tab's series read at one instant) beside what its
containers request and their limits (the pod's spec). "-" where Prometheus has nothing to
say (none configured, down, refusing, or no sample yet)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from odh.training.i18n import _
from odh.training.kinds import JobKind
from odh.training.metrics.prometheus import PrometheusClient
from odh.training.metrics.promql import CPU_SECONDS, REAL_CONTAINERS, JobQueries, selector
from odh.training.metrics.series import parse_vector
from odh.training.paths import as_dict, as_list, get_path
from odh.training.quantity import QuantityError, display_memory, parse_quantity

RATE_WINDOW = "5m"  # CPU in use: the rate over the last five minutes, as `kubectl top` smooths


@dataclass(frozen=True)
class PodFigures:
    """One resource of one pod: used now (None: unknown), requested, limit (None: unset)."""

    resource: str  # "cpu" or "memory"
    used: Decimal | None
    requested: Decimal | None
    limit: Decimal | None

    def _amount(self, value: Decimal | None) -> str:
        if value is None:
            return "-"
        if self.resource == "memory":
            return display_memory(value)
        return format(value.quantize(Decimal("0.01")).normalize(), "f")

    @property
    def text(self) -> str:
        """"1.9 / 4 (limit 4)": used / requested, and the limit when there is one."""
        shown = f"{self._amount(self.used)} / {self._amount(self.requested)}"
        if self.limit is not None:
            shown += " " + _("(limit %(limit)s)") % {"limit": self._amount(self.limit)}
        return shown


def _sum(pod: dict, part: str, resource: str) -> Decimal | None:
    total, found = Decimal(0), False
    for container in as_list(get_path(pod, ["spec", "containers"])):
        raw = as_dict(as_dict(as_dict(container).get("resources")).get(part)).get(resource)
        if raw is None:
            continue
        try:
            total += parse_quantity(raw)
            found = True
        except QuantityError:
            continue
    return total if found else None


def usage_now(client: PrometheusClient, namespace: str, kind: JobKind, job: str,
              now: float | None = None) -> dict[str, dict[str, Decimal]]:
    """{pod: {"cpu": cores, "memory": bytes}} from Prometheus; pods without samples left
    out. Raises odh.training.errors when Prometheus cannot be asked."""
    q = JobQueries(namespace, kind, job)
    cpu = (f"sum by (pod) (rate({selector(CPU_SECONDS, namespace, kind, job, REAL_CONTAINERS)}"
           f"[{RATE_WINDOW}]))")
    found: dict[str, dict[str, Decimal]] = {}
    for resource, query in (("cpu", cpu), ("memory", q.memory())):
        for labels, value in parse_vector(client.query(query, namespace, now)):
            pod = str(labels.get("pod", ""))
            if pod:
                found.setdefault(pod, {})[resource] = Decimal(str(value))
    return found


def pod_figures(pods: list[dict], usage: dict[str, dict[str, Decimal]] | None
                ) -> dict[str, list[PodFigures]]:
    """{pod name: [CPU figures, memory figures]} for the job's pods (`usage` None: no
    Prometheus)."""
    result = {}
    for pod in pods:
        name = str(get_path(pod, ["metadata", "name"], "") or "")
        used = (usage or {}).get(name, {})
        result[name] = [PodFigures(r, used.get(r), _sum(pod, "requests", r) or _sum(
            pod, "limits", r), _sum(pod, "limits", r)) for r in ("cpu", "memory")]
    return result
