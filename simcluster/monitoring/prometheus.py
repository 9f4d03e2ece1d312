"""A Prometheus-compatible query API, as OpenShift's Thanos querier serves it.

Endpoints (GET, or POST with a form body, like Prometheus): `/api/v1/query` (`query`,
`time`), `/api/v1/query_range` (`query`, `start`, `end`, `step`; at most 11,000 points
per series), `/api/v1/labels`, `/api/v1/label/<name>/values`, `/api/v1/series`
(`match[]`, `start`, `end`) and `/api/v1/status/buildinfo`. Responses have Prometheus'
shapes; bad input is `400 {"status":"error","errorType":"bad_data",...}` and a query
that cannot be evaluated (e.g. duplicate label sets) `422 execution`.

Access, as kube-rbac-proxy and prom-label-proxy give it in front of the Thanos querier:
- a bearer token is required (any token the API server accepts): without one, `401` with
  the plain-text body `Unauthorized`;
- with a `namespace` parameter (the tenancy port's way), the token must be allowed to
  `get pods` in that namespace, and every selector of the query is forced to
  `namespace="<ns>"` (an existing namespace matcher is replaced, as prom-label-proxy
  does), so series of other namespaces, and series without a namespace (node series),
  are never seen;
- without it the query is cluster-wide and needs `get` on `namespaces` in the API group
  `metrics.k8s.io` at cluster scope (cluster-admin has it);
- refusals are `403` with kube-rbac-proxy's plain-text body, e.g.
  `Forbidden (user=bob, verb=get, resource=pods, subresource=)`.

The PromQL subset is described in promql.py and the series in metrics_series.py. A
Pushgateway's push API is served on the same port (pushgateway.py): what is pushed to it
is scraped into the series.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from aiohttp import web

from simcluster.access.auth import Attributes, UserInfo
from simcluster.monitoring import promql
from simcluster.monitoring.metrics_history import RETENTION, History
from simcluster.monitoring.metrics_series import ClusterSource
from simcluster.monitoring.promql_eval import (
    Evaluator,
    ExecutionError,
    Matrix,
    Scalar,
    Vector,
    step_times,
)
from simcluster.monitoring.pushgateway import Pushgateway
from simcluster.monitoring.pushgateway import add_routes as add_pushgateway

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

log = logging.getLogger("simcluster.monitoring.prometheus")

MAX_POINTS = 11000
# Prometheus 3 semantics: range windows and the lookback are left-open, (t - r, t]
BUILD_INFO = {"version": "3.2.1", "revision": "simcluster", "branch": "HEAD",
              "buildUser": "simcluster", "buildDate": "20250226-00:00:00",
              "goVersion": "go1.23.6"}
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


class BadData(Exception):
    pass


class Params:
    """Request parameters from the URL and a form body together, as Prometheus reads them."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.values: dict[str, list[str]] = {}
        for k, v in pairs:
            self.values.setdefault(k, []).append(v)

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.values[name][0] if name in self.values else default

    def __getitem__(self, name: str) -> str:
        return self.values[name][0]

    def getall(self, name: str) -> list[str]:
        return list(self.values.get(name, []))


def format_value(v: float) -> str:
    """A sample value as Prometheus writes it (Go's FormatFloat(v, 'f', -1, 64))."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == int(v) and abs(v) < 1e21:
        return str(int(v))
    return format(Decimal(repr(v)), "f")


def format_time(t: float) -> float | int:
    ms = round(t * 1000)
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


def parse_time(value: str, name: str) -> float:
    try:
        t = float(value)
        if math.isfinite(t):
            return t
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise BadData(f'invalid parameter "{name}": cannot parse "{value}" to a valid '
                      "timestamp") from None


def parse_step(value: str) -> float:
    try:
        step = float(value)
        if math.isfinite(step):
            return step
    except ValueError:
        pass
    try:
        return promql.parse_duration(value)
    except promql.PromQLError:
        raise BadData(f'invalid parameter "step": cannot parse "{value}" to a valid '
                      "duration") from None


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, text=json.dumps(body, separators=(",", ":")),
                        content_type="application/json")


def _error(kind: str, message: str, status: int) -> web.Response:
    return _json({"status": "error", "errorType": kind, "error": message}, status)


def _success(data: Any) -> web.Response:
    return _json({"status": "success", "data": data})


def enforce_namespace(matchers: list[promql.Matcher], namespace: str) -> list[promql.Matcher]:
    return [m for m in matchers if m.name != "namespace"] + [
        promql.Matcher("namespace", "=", namespace)]


class PrometheusApi:
    def __init__(self, cluster: Cluster, history: History, drop: str = "") -> None:
        self.cluster = cluster
        self.history = history
        self.drop = re.compile(drop) if drop else None
        self._last_prune = 0.0
        self.pushgateway = Pushgateway(cluster.clock.now, lambda: cluster.clock.speed)

    # -- access ---------------------------------------------------------------------------
    def _authorize(self, request: web.Request, params: Params,
                   ) -> tuple[UserInfo | None, str, web.Response | None]:
        user = self.cluster.authn.authenticate(request.headers.get("Authorization"))
        if user is None:
            return None, "", web.Response(status=401, text="Unauthorized\n")
        namespace = params.get("namespace") or ""
        if namespace:
            attrs = Attributes(verb="get", resource="pods", namespace=namespace)
        else:
            attrs = Attributes(verb="get", group="metrics.k8s.io", resource="namespaces")
        if not self.cluster.authz.allowed(user, attrs)[0]:
            return user, namespace, web.Response(
                status=403, text=f"Forbidden (user={user.name}, verb=get, "
                                 f"resource={attrs.resource}, subresource=)\n")
        return user, namespace, None

    async def _params(self, request: web.Request) -> Params:
        pairs = list(request.query.items())
        if request.method == "POST":
            form = await request.post()
            pairs += [(k, v) for k, v in form.items() if isinstance(v, str)]
        return Params(pairs)

    def _source(self) -> ClusterSource:
        now = self.cluster.clock.now()
        if now - self._last_prune > 60:
            self.history.prune()
            self._last_prune = now
        return ClusterSource(self.history, now, self.drop, self.pushgateway.series)

    def handler(self, fn):
        async def handle(request: web.Request) -> web.StreamResponse:
            try:
                params = await self._params(request)
                _user, namespace, refusal = self._authorize(request, params)
                if refusal is not None:
                    return refusal
                return fn(request, params, namespace)
            except BadData as e:
                return _error("bad_data", str(e), 400)
            except promql.PromQLError as e:
                return _error("bad_data", f'invalid parameter "query": {e}', 400)
            except ExecutionError as e:
                return _error("execution", str(e), 422)
            except Exception:
                log.exception("prometheus API error on %s", request.path)
                return _error("internal", "internal error: see the simcluster log", 500)
        return handle

    # -- queries ------------------------------------------------------------------------------
    def _parse(self, params: Params, namespace: str) -> promql.Expr:
        query = params.get("query")
        if query is None:
            raise BadData('invalid parameter "query": 1:1: parse error: no expression found '
                          "in input")
        expr = promql.parse(query)
        if namespace:
            for sel in promql.selectors(expr):
                sel.matchers = enforce_namespace(sel.matchers, namespace)
        return expr

    def query(self, request: web.Request, params: Params,
              namespace: str) -> web.Response:
        expr = self._parse(params, namespace)
        source = self._source()
        t = parse_time(params["time"], "time") if params.get("time") else source.now
        t = round(t, 3)
        value = Evaluator(source, [t]).eval(expr)
        if isinstance(value, Scalar):
            return _success({"resultType": "scalar",
                             "result": [format_time(t), format_value(value.values[0])]})
        if isinstance(value, Matrix):
            return _success({"resultType": "matrix", "result": [
                {"metric": labels,
                 "values": [[format_time(ts), format_value(v)] for ts, v in points]}
                for labels, points in sorted(value.series, key=lambda s: sorted(s[0].items()))
            ]})
        assert isinstance(value, Vector)
        result = [{"metric": labels, "value": [format_time(t), format_value(values[0])]}
                  for labels, values in (value.series[k] for k in sorted(value.series))
                  if values[0] is not None]
        return _success({"resultType": "vector", "result": result})

    def query_range(self, request: web.Request, params: Params,
                    namespace: str) -> web.Response:
        for name in ("start", "end", "step"):
            if not params.get(name):
                raise BadData(f'invalid parameter "{name}": cannot parse "" to a valid '
                              f"{'duration' if name == 'step' else 'timestamp'}")
        start = parse_time(params["start"], "start")
        end = parse_time(params["end"], "end")
        step = parse_step(params["step"])
        if end < start:
            raise BadData('invalid parameter "end": end timestamp must not be before start '
                          "time")
        if step <= 0:
            raise BadData('invalid parameter "step": zero or negative query resolution step '
                          "widths are not accepted. Try a positive integer")
        if (end - start) / step > MAX_POINTS:
            raise BadData("exceeded maximum resolution of 11,000 points per timeseries. Try "
                          "decreasing the query resolution (?step=XX)")
        expr = self._parse(params, namespace)
        if promql.value_type(expr) == "matrix":
            raise BadData('invalid parameter "query": invalid expression type "range vector" '
                          "for range query, must be Scalar or instant Vector")
        times = step_times(start, end, step)
        value = Evaluator(self._source(), times).eval(expr)
        if isinstance(value, Scalar):
            series = [({}, list(value.values))]
        else:
            assert isinstance(value, Vector)
            series = [value.series[k] for k in sorted(value.series)]
        result = []
        for labels, values in series:
            points = [[format_time(t), format_value(v)]
                      for t, v in zip(times, values, strict=True) if v is not None]
            if points:
                result.append({"metric": labels, "values": points})
        return _success({"resultType": "matrix", "result": result})

    # -- metadata ------------------------------------------------------------------------------
    def _matched_series(self, params: Params, namespace: str,
                        required: bool) -> list[dict[str, str]]:
        source = self._source()
        lo = parse_time(params["start"], "start") if params.get("start") else \
            source.now - RETENTION
        hi = parse_time(params["end"], "end") if params.get("end") else source.now
        matches = params.getall("match[]")
        if not matches and required:
            raise BadData("no match[] parameter provided")
        selectors: list[list[promql.Matcher]] = []
        for text in matches:
            try:
                expr = promql.parse(text)
            except promql.PromQLError as e:
                raise BadData(f'invalid parameter "match[]": {e}') from None
            if not isinstance(expr, promql.VectorSelector):
                raise BadData(f'invalid parameter "match[]": 1:1: parse error: expected '
                              f"vector selector in {text!r}")
            selectors.append(expr.matchers)
        if not selectors:
            selectors = [[]]
        if namespace:
            selectors = [enforce_namespace(s, namespace) for s in selectors]
        seen: dict[tuple, dict[str, str]] = {}
        for matchers in selectors:
            for s in source.select(matchers, lo, hi):
                if s.active(lo, hi):
                    seen.setdefault(tuple(sorted(s.labels.items())), s.labels)
        return [seen[k] for k in sorted(seen)]

    def labels(self, request: web.Request, params: Params,
               namespace: str) -> web.Response:
        names = {k for labels in self._matched_series(params, namespace, False) for k in labels}
        return _success(sorted(names))

    def label_values(self, request: web.Request, params: Params,
                     namespace: str) -> web.Response:
        name = request.match_info["name"]
        if not _LABEL_NAME.fullmatch(name):
            raise BadData(f'invalid label name: "{name}"')
        values = {labels[name] for labels in self._matched_series(params, namespace, False)
                  if labels.get(name)}
        return _success(sorted(values))

    def series(self, request: web.Request, params: Params,
               namespace: str) -> web.Response:
        return _success(self._matched_series(params, namespace, True))

    def buildinfo(self, request: web.Request, params: Params,
                  namespace: str) -> web.Response:
        return _success(dict(BUILD_INFO))


def build_app(cluster: Cluster, drop: str = "") -> web.Application:
    """The Prometheus API of `cluster`, following its pods from now on (and its past);
    without the series whose metric name matches `drop` (a regex, matched whole)."""
    started = time.monotonic()
    history = History(cluster)
    history.start()
    api = PrometheusApi(cluster, history, drop)
    app = web.Application(client_max_size=1024 * 1024)
    for path, fn in (("/api/v1/query", api.query), ("/api/v1/query_range", api.query_range),
                     ("/api/v1/labels", api.labels), ("/api/v1/series", api.series),
                     ("/api/v1/label/{name}/values", api.label_values),
                     ("/api/v1/status/buildinfo", api.buildinfo)):
        app.router.add_route("GET", path, api.handler(fn))
        app.router.add_route("POST", path, api.handler(fn))
    add_pushgateway(app, api.pushgateway)
    log.debug("prometheus history replayed in %.3fs", time.monotonic() - started)
    return app
