"""The Prometheus HTTP API (`/api/v1/query`, `/api/v1/query_range`), asked with one
person's token; every failure is one of odh.training.errors."""

from __future__ import annotations

import logging
from typing import Any

import requests

from odh.training import errors
from odh.training.i18n import _

log = logging.getLogger("odh.training.metrics.charts")


class PrometheusClient:
    """Queries for one person: their bearer token, the tenancy `namespace` parameter.

    Every failure is one of odh.training.errors: 401 Unauthorized, 403 Forbidden, no
    answer ClusterUnavailable (naming Prometheus), a refused query ClusterError.
    """

    def __init__(self, url: str, token: str, ca_file: str | None = None,
                 timeout: float | tuple[float, float] = (3.0, 15.0),
                 verify: bool = True) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update({"Authorization": f"Bearer {token}",
                                     "Accept": "application/json"})
        # passed on each request: a Session's own `verify` loses to REQUESTS_CA_BUNDLE
        self.verify: str | bool = (ca_file or True) if verify else False

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> PrometheusClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _get(self, path: str, params: dict[str, Any], namespace: str) -> Any:
        if namespace:
            params = {**params, "namespace": namespace}
        try:
            response = self.session.get(self.url + path, params=params, timeout=self.timeout,
                                        verify=self.verify)
        except requests.exceptions.SSLError as e:
            log.warning("prometheus TLS failure at %s: %s", self.url, e)
            raise errors.ClusterUnavailable(
                _("Prometheus at %(url)s could not be reached securely: its certificate is "
                  "not trusted (set PROMETHEUS_CA_FILE to the CA that signed it).")
                % {"url": self.url}, namespace=namespace) from None
        except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as e:
            log.warning("prometheus unreachable at %s: %s", self.url, e)
            raise errors.ClusterUnavailable(
                _("Prometheus at %(url)s could not be reached or did not answer in time.")
                % {"url": self.url}, namespace=namespace) from None
        except requests.exceptions.RequestException as e:
            log.warning("prometheus request failed at %s: %s", self.url, e)
            raise errors.ClusterUnavailable(
                _("Prometheus at %(url)s could not be asked: %(error)s")
                % {"url": self.url, "error": e}, namespace=namespace) from None
        return self._answer(response, namespace)

    def _answer(self, response: requests.Response, namespace: str) -> Any:
        status = response.status_code
        body: Any = None
        try:
            body = response.json()
        except ValueError:
            body = None
        detail = ""
        if isinstance(body, dict):
            detail = str(body.get("error") or "")
        if not detail:
            detail = (response.text or "").strip()[:300]
        kw = {"status": status, "namespace": namespace}
        if status == 401:
            raise errors.Unauthorized(
                _("Prometheus did not accept your sign-in (401 Unauthorized)."), **kw)
        if status == 403:
            raise errors.Forbidden(
                _("Prometheus refused to show metrics of project “%(project)s” to you: "
                  "%(reason)s") % {"project": namespace, "reason": detail}
                if namespace else
                _("Prometheus refused the query: %(reason)s") % {"reason": detail}, **kw)
        if status in (502, 503, 504):
            raise errors.ClusterUnavailable(
                _("Prometheus at %(url)s is not available right now (HTTP %(status)s).")
                % {"url": self.url, "status": status}, **kw)
        if status != 200 or not isinstance(body, dict) or body.get("status") != "success":
            raise errors.ClusterError(
                _("Prometheus could not answer the query (HTTP %(status)s): %(reason)s")
                % {"status": status, "reason": detail or _("no details")}, **kw)
        for warning in body.get("warnings") or []:
            log.info("prometheus warning: %s", warning)
        return body.get("data") or {}

    def query(self, promql: str, namespace: str, at: float | None = None) -> list[dict]:
        """An instant query's result list (a vector's samples)."""
        params: dict[str, Any] = {"query": promql}
        if at is not None:
            params["time"] = f"{at:.3f}"
        data = self._get("/api/v1/query", params, namespace)
        return list(data.get("result") or []) if data.get("resultType") == "vector" else []

    def query_range(self, promql: str, namespace: str, start: float, end: float,
                    step: float) -> list[dict]:
        """A range query's result list (a matrix's series)."""
        data = self._get("/api/v1/query_range", {
            "query": promql, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}",
        }, namespace)
        return list(data.get("result") or []) if data.get("resultType") == "matrix" else []

