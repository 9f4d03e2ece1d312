"""How the dashboard reaches the cluster: its own configuration and per-person clients.

The API server URL and CA come from CLUSTER_KUBECONFIG (or the in-cluster service
account). Requests made for a person carry that person's token, never the dashboard's.

The dashboard's own token (the watch hub, the readiness check, the wizard's node reads)
is read again whenever its file changes: in a pod the kubelet rewrites the projected
service-account token before it expires (bound tokens last an hour or so), and a
kubeconfig can be replaced too. Clients made by `service_account_client()` pick the
current token before every request; after a 401, `service_account_client(refresh=True)`
reads the file even if it looks unchanged.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.config.incluster_config import SERVICE_TOKEN_FILENAME

from odh.training.cluster.api import make_api_client
from odh.training.cluster.client import ClusterClient
from training.accounts import session

log = logging.getLogger("training.cluster")


def _bearer(cfg: k8s.Configuration) -> str:
    # recent kubernetes clients keep the token under "BearerToken", older ones "authorization"
    keys = cfg.api_key or {}
    auth = str(keys.get("BearerToken") or keys.get("authorization") or "")
    return auth.split(" ", 1)[1] if auth.startswith("Bearer ") else auth


class ServiceAccountToken:
    """The dashboard's own bearer token, read again when its file changes (or on demand).

    `path` is the kubeconfig (CLUSTER_KUBECONFIG) or the mounted service-account token.
    Checking costs one stat() per request; the file is read only when its modification
    time, size or inode changed (the kubelet swaps a symlink), or after `invalidate()`.
    A file that cannot be read just then (being replaced) leaves the last token in use.
    """

    def __init__(self, path: str, kubeconfig: bool, token: str = "") -> None:
        self.path = path
        self.kubeconfig = kubeconfig
        self.reads = 0
        self._lock = threading.Lock()
        self._token = token
        self._stamp = self._stat() if token else None
        self._stale = not token

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _read(self) -> str:
        if not self.kubeconfig:
            with open(self.path, encoding="utf-8") as f:
                return f.read().strip()
        cfg = k8s.Configuration()
        k8s_config.load_kube_config(config_file=self.path, client_configuration=cfg)
        return _bearer(cfg)

    def get(self) -> str:
        stamp = self._stat()
        if not self._stale and stamp == self._stamp:
            return self._token
        with self._lock:
            if self._stale or stamp != self._stamp:
                try:
                    token = self._read()
                except Exception as e:  # mid-rotation, or a broken file: keep the old one
                    log.warning("cannot read the dashboard's token from %s: %s", self.path, e)
                else:
                    if token != self._token:
                        log.info("the dashboard's token in %s changed: using the new one",
                                 self.path)
                    self._token, self._stamp, self._stale = token, stamp, False
                    self.reads += 1
            return self._token

    def invalidate(self) -> None:
        """Read the file again on next use (the API server refused the token: 401)."""
        self._stale = True


@dataclass(frozen=True)
class ClusterConfig:
    server: str
    ca_file: str | None
    verify_ssl: bool
    token_source: ServiceAccountToken

    @property
    def service_account_token(self) -> str:
        """The dashboard's own token as it is now (see ServiceAccountToken)."""
        return self.token_source.get()


@functools.cache
def cluster_config() -> ClusterConfig:
    cfg = k8s.Configuration()
    try:
        if settings.CLUSTER_KUBECONFIG:
            k8s_config.load_kube_config(config_file=settings.CLUSTER_KUBECONFIG,
                                        client_configuration=cfg)
            source = ServiceAccountToken(settings.CLUSTER_KUBECONFIG, True, _bearer(cfg))
        else:
            k8s_config.load_incluster_config(client_configuration=cfg)
            source = ServiceAccountToken(SERVICE_TOKEN_FILENAME, False, _bearer(cfg))
    except (k8s_config.ConfigException, OSError) as e:
        raise ImproperlyConfigured(
            "The dashboard cannot find its cluster: set CLUSTER_KUBECONFIG to a kubeconfig "
            f"for its service account, or run it inside the cluster ({e})") from None
    return ClusterConfig(server=cfg.host.rstrip("/"), ca_file=cfg.ssl_ca_cert,
                         verify_ssl=bool(cfg.verify_ssl), token_source=source)


def _timeout() -> tuple[float, float]:
    return (float(settings.CLUSTER_CONNECT_TIMEOUT), float(settings.CLUSTER_READ_TIMEOUT))


class PersonApiClients:
    """One ApiClient per person's token, shared by their requests and sockets: its pool keeps
    the connection (and its TLS session) to the API server open, so a page's calls skip the
    handshake a new client would make. At most `size` are kept; the least recently used one
    beyond that, or one unused for `idle` seconds, is let go (dropped, not closed: a request
    still using it finishes; its connections close when it is collected)."""

    def __init__(self, size: int = 256, idle: float = 600.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.size, self.idle, self.clock = size, idle, clock
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple, tuple[float, k8s.ApiClient]] = OrderedDict()

    def get(self, cfg: ClusterConfig, token: str) -> k8s.ApiClient:
        key = (cfg.server, cfg.ca_file, cfg.verify_ssl,
               hashlib.sha256(token.encode()).hexdigest())
        now = self.clock()
        with self._lock:
            while self._kept:  # the oldest first: drop those idle too long
                oldest, (used, _api) = next(iter(self._kept.items()))
                if now - used <= self.idle:
                    break
                del self._kept[oldest]
            kept = self._kept.pop(key, None)
            api = kept[1] if kept else make_api_client(cfg.server, token, cfg.ca_file,
                                                       cfg.verify_ssl)
            self._kept[key] = (now, api)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
            return api

    def __len__(self) -> int:
        return len(self._kept)


PERSON_API_CLIENTS = PersonApiClients()


def client_for_token(token: str) -> ClusterClient:
    """A client acting with `token` (a person's), on the ApiClient kept for that token."""
    return ClusterClient(PERSON_API_CLIENTS.get(cluster_config(), token), timeout=_timeout(),
                         shared=True)


def service_account_api_client(refresh: bool = False) -> k8s.ApiClient:
    """An ApiClient with the dashboard's own token, the current one at every request."""
    cfg = cluster_config()
    source = cfg.token_source
    if refresh:
        source.invalidate()
    api = make_api_client(cfg.server, source.get(), cfg.ca_file, cfg.verify_ssl)

    def current_token(configuration: k8s.Configuration) -> None:
        configuration.api_key["authorization"] = source.get()

    # the official client calls this before it builds each request's Authorization header
    api.configuration.refresh_api_key_hook = current_token
    return api


def service_account_client(refresh: bool = False) -> ClusterClient:
    """A client with the dashboard's service-account token (list/watch only), which
    follows the token file as the kubelet rotates it. `refresh`: after a 401, read the
    file even if it looks unchanged."""
    return ClusterClient(service_account_api_client(refresh), timeout=_timeout())


def user_client(request: HttpRequest) -> ClusterClient:
    """A client acting as the signed-in person (their token, their RBAC)."""
    return client_for_token(session.token(request))


def prometheus_tls() -> tuple[str | None, bool]:
    """The CA to trust for Prometheus, and whether to verify it at all."""
    if settings.PROMETHEUS_CA_FILE:
        return settings.PROMETHEUS_CA_FILE, True
    cfg = cluster_config()
    return cfg.ca_file, cfg.verify_ssl
