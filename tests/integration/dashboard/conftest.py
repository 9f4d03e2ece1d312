"""View tests run the dashboard in-process against a real simcluster (demo scenario)."""

from __future__ import annotations

import pytest

from tests import simcluster_process
from tests.dashboard_support import sign_in


@pytest.fixture(scope="session")
def demo_cluster(tmp_path_factory):
    cluster = simcluster_process.start(tmp_path_factory.mktemp("demo") / "state",
                                       scenario="demo", speed=20)
    yield cluster
    cluster.stop()


@pytest.fixture(autouse=True)
def _dashboard_on_demo_cluster(demo_cluster, settings):
    from training import cluster
    from training.accounts import oauth
    settings.CLUSTER_KUBECONFIG = str(demo_cluster.kubeconfig("dashboard"))
    settings.OAUTH_CLIENT_SECRET = "mpijob-dashboard-demo-secret"
    cluster.cluster_config.cache_clear()
    oauth.reset()
    yield
    cluster.cluster_config.cache_clear()
    oauth.reset()


@pytest.fixture
def demo_prometheus(demo_cluster, settings):
    """The dashboard asks the cluster's Prometheus, nothing remembered from before."""
    from django.core.cache import cache
    settings.PROMETHEUS_URL = demo_cluster.prometheus_url
    cache.clear()  # the Overview remembers GPU lines and an unreachable Prometheus briefly
    yield
    cache.clear()


def _signed_in(username: str, who: str):
    """A fixture: the test client signed in as `username` (`who` says what they may do)."""
    def fixture(client, db, demo_cluster):
        sign_in(client, demo_cluster, username)
        return client

    fixture.__doc__ = f"A test client signed in as {username} ({who})."
    return pytest.fixture(name=username)(fixture)


alice = _signed_in("alice", "edit in team-nlp and team-cv")
bob = _signed_in("bob", "view in research only")
charlie = _signed_in("charlie", "member of no project")
admin = _signed_in("admin", "cluster-admin: may list everything everywhere")


@pytest.fixture
def unreachable_cluster(demo_cluster, settings, tmp_path):
    """Point the dashboard at an API server that is not there (a closed port).

    Signed-in clients keep their session and token; every cluster call now fails to connect.
    """
    import yaml

    from tests.simcluster_process import free_port
    from training import cluster
    from training.accounts import oauth
    config = yaml.safe_load(demo_cluster.kubeconfig("dashboard").read_text())
    for entry in config["clusters"]:
        entry["cluster"]["server"] = f"https://127.0.0.1:{free_port()}"
    path = tmp_path / "kubeconfig-unreachable"
    path.write_text(yaml.safe_dump(config))
    settings.CLUSTER_KUBECONFIG = str(path)
    cluster.cluster_config.cache_clear()
    oauth.reset()
    yield path
    cluster.cluster_config.cache_clear()
    oauth.reset()
