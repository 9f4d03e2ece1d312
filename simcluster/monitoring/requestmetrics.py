"""The API server's own request metrics, at `/metrics` on the API port.

As on a real API server, `/metrics` is a non-resource URL that RBAC guards (`get` on
`/metrics`: cluster-admin has it, a person with `edit` in a project does not) and answers
in the Prometheus text format:

- `apiserver_request_total{verb, group, version, resource, subresource, scope, component,
  code}`: every request the API port answers (except the OAuth endpoints it also serves),
  401s and 403s included. `verb` is the API server's: GET, LIST, WATCH, POST, PUT, PATCH,
  DELETE, DELETECOLLECTION; `scope` is `resource` (a named object), `namespace` or
  `cluster`. A non-resource request (discovery, `/version`, `/healthz`, `/metrics`) has
  its path in `subresource` and an empty `resource` and `scope`, as the real one reports
  `/healthz`; one to an unknown path (404) is counted with an empty `subresource`.
- `apiserver_longrunning_requests{verb, group, version, resource, subresource, scope,
  component}`: requests open now that the API server treats as long-running (watches and
  `pods/log`).

After them come the MPI Operator's own metrics (`MPIOperatorMetrics`): a real cluster
serves those from the operator's pod (port 8080), which simcluster does not have.

One difference: a request is counted when its answer starts (the status line is sent), so
a watch or a followed log counts when it opens; the real API server counts those when they
end. Counting at the start is what measuring "watches opened per minute" needs
(benchmarks/live_latency.py), and changes nothing for other requests.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from simcluster.apiserver.api import RequestInfo

LABELS_KEY = "simcluster.request_labels"  # on the aiohttp request

_VERBS = {"get": "GET", "list": "LIST", "watch": "WATCH", "create": "POST", "update": "PUT",
          "patch": "PATCH", "delete": "DELETE", "deletecollection": "DELETECOLLECTION"}
_LABEL_NAMES = ("verb", "group", "version", "resource", "subresource", "scope")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

Labels = tuple[str, str, str, str, str, str]


def labels_of(method: str, info: RequestInfo) -> Labels:
    """(verb, group, version, resource, subresource, scope) of a request."""
    if info.rt is None and not info.plural:  # non-resource: the path says what it was
        return (method.upper(), "", "", "", info.path, "")
    verb = _VERBS.get(info.verb, info.verb.upper())
    scope = "resource" if info.name else "namespace" if info.namespace else "cluster"
    return (verb, info.group, info.version, info.plural, info.subresource, scope)


def is_long_running(info: RequestInfo) -> bool:
    return info.verb == "watch" or info.subresource == "log"


class RequestMetrics:
    def __init__(self) -> None:
        self.requests: Counter[tuple[Labels, int]] = Counter()
        self.long_running: Counter[Labels] = Counter()

    def count(self, labels: Labels, code: int) -> None:
        if code == 404 and not labels[3]:
            labels = (labels[0], "", "", "", "", "")  # an unknown path: not one series each
        self.requests[(labels, code)] += 1

    def started(self, labels: Labels) -> None:
        self.long_running[labels] += 1

    def ended(self, labels: Labels) -> None:
        self.long_running[labels] -= 1

    async def on_response_prepare(self, request: web.Request,
                                  response: web.StreamResponse) -> None:
        """aiohttp signal: the answer's status line is about to be sent."""
        labels = request.get(LABELS_KEY)
        if labels is not None:
            self.count(labels, response.status)

    def render(self) -> str:
        lines = ["# HELP apiserver_request_total Counter of apiserver requests broken out "
                 "for each verb, dry run value, group, version, resource, scope, component, "
                 "and HTTP response code.",
                 "# TYPE apiserver_request_total counter"]
        for (labels, code), n in sorted(self.requests.items()):
            lines.append(f"apiserver_request_total{{{_format(labels, code=str(code))}}} {n}")
        lines += ["# HELP apiserver_longrunning_requests Gauge of all active long-running "
                  "apiserver requests broken out by verb, group, version, resource, scope "
                  "and component. Not all requests are tracked this way.",
                  "# TYPE apiserver_longrunning_requests gauge"]
        for labels, n in sorted(self.long_running.items()):
            lines.append(f"apiserver_longrunning_requests{{{_format(labels)}}} {n}")
        return "\n".join(lines) + "\n"


class MPIOperatorMetrics:
    """mpi-operator v0.8.2's Prometheus metrics, counted by the simulated operator as
    upstream counts them: `created` at a job's first sync (its Created condition),
    `successful` / `failed` when the status sync sees the launcher Job complete / fail
    (not for MPIJobEvicted), `job_info` 1 for every (launcher, namespace) it has seen."""

    def __init__(self) -> None:
        self.created = 0
        self.successful = 0
        self.failed = 0
        self.job_info: set[tuple[str, str]] = set()

    def render(self) -> str:
        lines = []
        for name, value in (("created", self.created), ("successful", self.successful),
                            ("failed", self.failed)):
            metric = f"mpi_operator_jobs_{name}_total"
            lines += [f"# HELP {metric} Counts number of MPI jobs {name}",
                      f"# TYPE {metric} counter", f"{metric} {value}"]
        lines += ["# HELP mpi_operator_job_info Information about MPIJob",
                  "# TYPE mpi_operator_job_info gauge"]
        for launcher, namespace in sorted(self.job_info):
            lines.append(f'mpi_operator_job_info{{launcher="{_escape(launcher)}",'
                         f'namespace="{_escape(namespace)}"}} 1')
        return "\n".join(lines) + "\n"


def _format(labels: Labels, **extra: str) -> str:
    pairs = dict(zip(_LABEL_NAMES, labels, strict=True), component="apiserver", **extra)
    return ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(pairs.items()))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
