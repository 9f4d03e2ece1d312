"""The dashboard's own token changes under it (issue 5, Faults: "a token expires
mid-session"): in a pod the kubelet rewrites the projected service-account token before
it expires. simcluster's service-account tokens do not expire, so these tests play the
part of the kubelet: the dashboard's kubeconfig (CLUSTER_KUBECONFIG) is rewritten with a
token the API server refuses (401), then with the right one again, and the clients, the
watches and the hub must carry on without a restart.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import yaml
from django.test import override_settings

from odh.training import errors
from odh.training.cluster.api import make_api_client
from odh.training.cluster.client import ClusterClient
from odh.training.cluster.watch import ResilientWatch, WatchedResource
from tests.integration.hub.conftest import start_cluster
from tests.training_jobs import Jobs, mpijob
from tests.waiting import wait_until

NS = "team-nlp"
PODS = WatchedResource("pods")


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    cluster = start_cluster(tmp_path_factory, "token-refresh")
    yield cluster
    cluster.stop()


class Kubeconfig:
    """A copy of the dashboard's kubeconfig whose token the test rewrites."""

    def __init__(self, sim, path: Path) -> None:
        self.sim = sim
        self.path = path
        self.write(sim.token("dashboard"))

    def write(self, token: str) -> None:
        config = yaml.safe_load(self.sim.kubeconfig("dashboard").read_text())
        config["users"][0]["user"]["token"] = token
        tmp = self.path.with_suffix(".new")
        tmp.write_text(yaml.safe_dump(config))
        tmp.replace(self.path)  # atomically, as the kubelet swaps its symlink

    def break_token(self) -> None:
        self.write("sha256~expired-token-the-api-server-refuses")

    def fix_token(self) -> None:
        self.write(self.sim.token("dashboard"))


@pytest.fixture
def kubeconfig(sim, tmp_path):
    from training import cluster
    config = Kubeconfig(sim, tmp_path / "kubeconfig-dashboard")
    with override_settings(CLUSTER_KUBECONFIG=str(config.path)):
        cluster.cluster_config.cache_clear()
        yield config
    cluster.cluster_config.cache_clear()


def test_a_service_account_client_uses_the_token_file_as_it_is_now(kubeconfig):
    from training import cluster
    client = cluster.service_account_client()
    assert client.list_quotas(NS) == []
    kubeconfig.break_token()
    with pytest.raises(errors.Unauthorized):
        client.list_quotas(NS)
    assert cluster.cluster_config().service_account_token.startswith("sha256~expired")
    kubeconfig.fix_token()
    assert client.list_quotas(NS) == []  # the same client, the new token
    client.close()


def test_a_watch_makes_a_new_client_after_a_401(kubeconfig, sim):
    """A client with a fixed token (as the SDK makes them) is replaced after a 401 by one
    from the factory, which reads the credentials again."""
    from training import cluster
    kubeconfig.break_token()
    stale = ClusterClient(make_api_client(sim.api_url, "sha256~stale", str(sim.ca_file)))
    watch = ResilientWatch(stale, PODS, client_factory=lambda: cluster.service_account_client(
        refresh=True), backoff_initial=0.05, backoff_max=0.5).start()
    try:
        wait_until(lambda: watch.unauthorized >= 2, 30, message=lambda: str(watch.stats()))
        assert not watch.synced.is_set()
        assert watch.clients >= 2 and watch.client is not stale
        assert "401" in watch.last_error
        kubeconfig.fix_token()
        assert watch.wait_synced(30), watch.stats()
        pods = Jobs(sim.api_client("admin"), NS).core.list_pod_for_all_namespaces().items
        wait_until(lambda: len(watch) == len(pods), 30, message=lambda: str(watch.stats()))
    finally:
        watch.stop()


def test_a_watch_without_a_factory_keeps_its_client(sim):
    stale = ClusterClient(make_api_client(sim.api_url, "sha256~stale", str(sim.ca_file)))
    watch = ResilientWatch(stale, PODS, backoff_initial=0.05, backoff_max=0.2).start()
    try:
        wait_until(lambda: watch.unauthorized >= 2, 30, message=lambda: str(watch.stats()))
        assert watch.client is stale and watch.clients == 0
    finally:
        watch.stop()


def test_the_hub_carries_on_when_its_token_is_replaced_mid_session(kubeconfig, sim):
    """The hub runs; the API server restarts while the token file holds a token it refuses
    (every watch must list again, and is answered 401); the file gets a good token: the
    watches recover by themselves and the hub sees new jobs again."""
    from channels.layers import InMemoryChannelLayer

    from training import cluster
    from training.live.hub.hub import Hub, Publisher

    hub = Hub(cluster.service_account_client, Publisher(InMemoryChannelLayer()),
              refresh_client_factory=functools.partial(cluster.service_account_client,
                                                       refresh=True)).start()
    try:
        assert hub.ready.wait(30), hub.stats()
        kubeconfig.break_token()
        sim.restart()
        wait_until(lambda: sum(w.unauthorized for w in hub.watches) >= len(hub.watches), 60,
                   message=lambda: str([w.stats() for w in hub.watches]))
        assert any(w.clients for w in hub.watches)
        kubeconfig.fix_token()
        jobs = Jobs(sim.api_client("alice"), NS)
        try:
            jobs.create(mpijob("after-new-token", workers=1, run_seconds=3600))
            wait_until(lambda: hub.index.job_data((NS, "mpijob", "after-new-token")), 60,
                       message=lambda: str([w.stats() for w in hub.watches]))
            wait_until(lambda: len(hub.index.job_data(
                (NS, "mpijob", "after-new-token")).pods) == 2, 60,
                message=lambda: str([w.stats() for w in hub.watches]))
        finally:
            jobs.cleanup()
    finally:
        hub.stop()
