"""The Kueue tests' cluster (kueue-scenario.yaml) and clients."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests import simcluster_process
from tests.integration.kueue.support import GROUP, MPI_VERSION, NS, SCENARIO, workloads
from tests.waiting import wait_until


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = simcluster_process.start(tmp_path_factory.mktemp("kueue") / "state",
                                   scenario=SCENARIO, speed=50)
    yield sim
    sim.stop()


@pytest.fixture
def api(cluster):
    with cluster.api_client("alice") as alice, cluster.api_client("admin") as admin:
        yield {"jobs": client.CustomObjectsApi(alice), "core": client.CoreV1Api(alice),
               "admin": client.CustomObjectsApi(admin)}


@pytest.fixture
def made(api):
    """Names of the jobs a test made: deleted after it (their Workloads go with them)."""
    names: list[str] = []
    yield names
    for name in names:
        try:
            api["jobs"].delete_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs", name)
        except client.ApiException:
            pass
    wait_until(lambda: not workloads(api), 30, message="the test's Workloads to go")




@pytest.fixture
def signed_in(client, db, cluster, settings):
    """`signed_in("alice")`: Django's test client signed in to the dashboard, which talks to
    the Kueue cluster (no watch hub: every read with the person's token)."""
    from django.core.cache import cache

    from tests.dashboard_support import sign_in
    from training import cluster as dashboard_cluster
    from training import permissions
    from training.accounts import oauth
    settings.CLUSTER_KUBECONFIG = str(cluster.kubeconfig("dashboard"))
    settings.WATCHER_EMBEDDED = False
    cache.clear()  # what the wizard shares a few seconds (Kueue's queues) is this test's
    dashboard_cluster.cluster_config.cache_clear()
    oauth.reset()
    permissions.ANSWERS.clear()

    def signed(user: str):
        sign_in(client, cluster, user)
        return client

    yield signed
    dashboard_cluster.cluster_config.cache_clear()
    oauth.reset()
