"""The calls every part of `ClusterClient` makes: the official client's APIs, one call with
its failures translated into `odh.training.errors` (odh.training.cluster.apierrors), and the
names checked before they reach a URL. The parts (jobs, logs, Kueue) are this class's
subclasses; `odh.training.cluster.client.ClusterClient` is all of them."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Self

import urllib3
from kubernetes import client as k8s

from odh.training import errors
from odh.training.cluster.apierrors import translate

# the ClusterClient's log, whichever of its parts writes it
log = logging.getLogger("odh.training.cluster.client")

Obj = dict[str, Any]

DEFAULT_TIMEOUT = (5.0, 30.0)  # connect, read


# What Kubernetes accepts as a namespace (DNS-1123 label) and as an object name (DNS-1123
# subdomain). Anything else would not name an object; refusing it here also keeps "..", "."
# or "/" in a URL from steering a request at another API path.
_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_NAMESPACE = re.compile(_LABEL)
_NAME = re.compile(rf"{_LABEL}(\.{_LABEL})*")


def is_namespace_name(value: str) -> bool:
    return len(value) <= 63 and _NAMESPACE.fullmatch(value) is not None


def is_object_name(value: str) -> bool:
    return len(value) <= 253 and _NAME.fullmatch(value) is not None


def require_names(namespace: str, name: str | None = None, what: str = "object") -> None:
    if not is_namespace_name(namespace):
        raise errors.NotFound(f'namespaces "{namespace}" not found', status=404,
                              namespace=namespace)
    if name is not None and not is_object_name(name):
        raise errors.NotFound(f'{what} "{name}" not found', status=404, namespace=namespace)


def make_api_client(server: str, token: str, ca_file: str | None = None,
                    verify_ssl: bool = True) -> k8s.ApiClient:
    """An ApiClient for `server` that authenticates with a bearer token."""
    cfg = k8s.Configuration()
    cfg.host = server
    cfg.api_key = {"authorization": token}
    cfg.api_key_prefix = {"authorization": "Bearer"}
    cfg.verify_ssl = verify_ssl
    if ca_file:
        cfg.ssl_ca_cert = ca_file
    cfg.retries = False
    return k8s.ApiClient(cfg)


class ApiCalls:
    """`shared`: the ApiClient is kept by its owner for later clients (its connections stay
    open); closing this client leaves it open."""

    def __init__(self, api_client: k8s.ApiClient, timeout: tuple[float, float] = DEFAULT_TIMEOUT,
                 shared: bool = False) -> None:
        self.api_client = api_client
        self.timeout = timeout
        self.shared = shared
        self.core = k8s.CoreV1Api(api_client)
        self.custom = k8s.CustomObjectsApi(api_client)
        self.authz = k8s.AuthorizationV1Api(api_client)

    def close(self) -> None:
        if not self.shared:
            self.api_client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ---------------------------------------------------------------------------
    @staticmethod
    @contextmanager
    def _translated(namespace: str, warn: bool = True) -> Iterator[None]:
        """The client's failures as `odh.training.errors`: the API's answer translated, a
        connection that failed or timed out as ClusterUnavailable (logged when `warn`)."""
        try:
            yield
        except k8s.ApiException as e:
            raise translate(e, namespace) from None
        except (urllib3.exceptions.HTTPError, OSError) as e:
            if warn:
                log.warning("cluster unreachable: %s", e)
            raise errors.ClusterUnavailable(
                "The cluster API server could not be reached or did not answer in time.",
                namespace=namespace) from None

    def _call(self, fn, *args: Any, namespace: str = "", raw: bool = False, **kwargs: Any
              ) -> Any:
        """Run one API call; JSON dict back; errors translated."""
        with self._translated(namespace):
            result = fn(*args, _request_timeout=self.timeout, _preload_content=False, **kwargs)
            data = result.data
            if raw:
                return data
            return json.loads(data) if data else {}

    def _items(self, fn, *args: Any, **kwargs: Any) -> list[Obj]:
        """The items of a list call (`_call`'s arguments)."""
        return self._call(fn, *args, **kwargs).get("items") or []

    def version(self) -> Obj:
        """The API server's `/version` (cheap; answers without any rights)."""
        return self._call(k8s.VersionApi(self.api_client).get_code)
